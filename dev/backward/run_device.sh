#!/bin/bash
# Device run of the backward dev harness: correctness table, then timing.
# Usage (repo root, on the GPU machine): bash dev/backward/run_device.sh [check|time|all] [binary]
set -o pipefail
MODE=${1:-all}
BIN=${2:-dev/backward/bin/check_backward}
OUTD=${OUT:-/tmp}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
if ! $BIN bf16 1x64 1 1 1 none >/dev/null 2>&1; then
  echo "prebuilt binary does not run here: rebuilding"; FWD_HEAD=1 sh dev/backward/build.sh >/dev/null 2>&1 || { echo build failed; exit 1; }
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
run() { echo "+ $*" >> $OUTD/bwd_log.txt; timeout 120 "$@" 2>&1 | tee -a $OUTD/bwd_log.txt; }
if [ "$MODE" != time ]; then
  echo "== correctness vs flamia_ref_backward (same inputs, GPU O/lse), v1 = FP8 wgmma, v0 = plain FP32 kernel"
  run $BIN mxfp8 rand3000:1 4 2 1 full
  run $BIN exact rand3000:1 4 2 1 full
  run $BIN mxfp8 rand2000:2 4 4 0 full
  run $BIN exact rand2000:3 8 2 1 full
  run $BIN mxfp8 2x1000 2 1 1 full
  BWD_VARIANT=0 run $BIN mxfp8 rand3000:1 4 2 1 full
  BWD_VARIANT=0 run $BIN exact rand2000:3 8 2 1 full
  run $BIN bf16 rand2000:2 4 4 0 full
fi
if [ "$MODE" != check ]; then
  echo "== timing: backward alone (pre-process + main + dq epilogue), median of 10, 16 heads, d=128, causal"
  run $BIN mxfp8 16x4096 16 16 1 none 10
  run $BIN mxfp8 4x4096 16 16 1 none 10
  run $BIN exact 16x4096 16 16 1 none 10
  run $BIN exact 4x4096 16 16 1 none 10
  run $BIN mxfp8 16x4096 16 4 1 none 10
  [ -n "$SLOW" ] && { BWD_VARIANT=0 run $BIN mxfp8 4x4096 16 16 1 none 3; run $BIN bf16 4x4096 16 16 1 none 3; }
fi
