#!/bin/bash
# Next device call (not yet run): v5 candidate vs the current kernel, same inputs.
# Build here first: sh dev/forward/build.sh dev/forward/v5_regs.cu ; carry dev/forward/bin.
t() { timeout ${TMO:-20} "$@" 2>&1 | tee -a ${OUT:-/tmp}/next_log.txt; }
for B in dev/forward/bin/check_v5_regs dev/forward/bin/check_forward; do
  echo "### $B"
  t $B bf16  rand3000:1 4 2 1 full
  t $B mxfp8 rand3000:1 4 2 1 full
  t $B exact rand2000:2 4 4 0 full
  TMO=30 t $B mxfp8 16x4096 16 16 1 sample200 30
  TMO=30 t $B mxfp8 4x4096  16 16 1 none 30
  TMO=30 t $B exact 16x4096 16 16 1 none 30
done
