#!/bin/bash
# Device run of the backward dev harness: correctness table, then timing. The harness
# quantizes on the host and takes O / lse from the CPU reference (correctness) or sets
# them to 0 (timing), so it does not depend on the library's quantize and forward kernels.
# Usage (repo root, on the GPU machine; binaries prebuilt with FWD_HEAD=1 sh dev/backward/build.sh):
#   bash dev/backward/run_device.sh [check|time|all] [binary]      (MORE=1: extra cases)
# About 40 s for `all` (CPU reference on 16 cores for the checks).
MODE=${1:-all}
BIN=${2:-dev/backward/bin/check_backward}
OUTD=${OUT:-/tmp}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader | tee -a $OUTD/bwd_log.txt
run() { echo "+ $*" >> $OUTD/bwd_log.txt; timeout ${TMO:-45} "$@" >> $OUTD/bwd_log.txt 2>&1; echo "rc=$?" >> $OUTD/bwd_log.txt; }
if [ "$MODE" != time ]; then
  run $BIN mxfp8 2x2048 4 2 1 full          # aligned documents: TMA path
  run $BIN mxfp8 rand3000:1 4 2 1 full      # packed, unaligned starts: shared-memory transposes
  run $BIN exact rand2000:3 8 2 1 full      # exact recipe, GQA 4
  run $BIN mxfp8 rand2000:2 4 4 0 full      # non-causal
  [ -n "$MORE" ] && { run $BIN exact 3x1024 4 2 1 full; BWD_VARIANT=0 run $BIN exact rand2000:3 8 2 1 full;
                      run $BIN bf16 rand2000:2 4 4 0 full; }
fi
if [ "$MODE" != check ]; then
  run $BIN mxfp8 16x4096 16 16 1 none 10
  run $BIN mxfp8 4x4096 16 16 1 none 10
  [ -n "$MORE" ] && { run $BIN exact 16x4096 16 16 1 none 10; run $BIN mxfp8 16x4096 16 4 1 none 10; }
fi
cat $OUTD/bwd_log.txt
