#!/bin/bash
# Device run: correctness table + timing table for the forward (dev harness).
# Usage (repo root, on the GPU machine): bash dev/forward/run_device.sh MODE [binary]
#   MODE: quick (correctness only) | full (correctness + timing) | time (timing only)
set -o pipefail
MODE=${1:-full}
BIN=${2:-dev/forward/bin/check_forward}
OUTD=${OUT:-/tmp}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
if ! $BIN bf16 2x64 1 1 1 none >/dev/null 2>&1; then
  echo "prebuilt binary does not run here: rebuilding"; sh dev/forward/build.sh >/dev/null 2>&1 || { echo build failed; exit 1; }
fi
echo "### $BIN"
command -v cuobjdump >/dev/null && echo "SASS: $(cuobjdump --dump-sass $BIN | grep -c QGMMA) QGMMA, $(cuobjdump --dump-sass $BIN | grep -c HGMMA) HGMMA, $(cuobjdump --dump-sass $BIN | grep -c 'MUFU.EX2') MUFU.EX2"
run() { echo "+ $*" >> $OUTD/fwd_log.txt; timeout 90 "$@" 2>&1 | tee -a $OUTD/fwd_log.txt; }
if [ "$MODE" != time ]; then
  run $BIN bf16  rand3000:1 4 2 1 full
  run $BIN mxfp8 rand3000:1 4 2 1 full
  run $BIN exact rand3000:1 4 2 1 full
  run $BIN mxfp8 rand2000:2 4 4 0 full
  run $BIN bf16  rand2000:2 2 1 0 full
  run $BIN exact rand2500:5 6 2 1 full
  run $BIN mxfp8 3x1000 2 2 1 full
  SPREAD=2 QSCALE=1.5 run $BIN mxfp8 rand3000:1 4 2 1 full
fi
if [ "$MODE" = quick ]; then exit 0; fi
run $BIN mxfp8 16x4096 16 16 1 sample1500 30
run $BIN mxfp8 4x4096  16 16 1 sample1500 30
run $BIN exact 16x4096 16 16 1 sample800 30
run $BIN bf16  16x4096 16 16 1 sample800 30
run $BIN mxfp8 16x4096 16 4 1 sample800 30
