#!/bin/bash
# Thirty-ninth session (~2 min; carry dev/backward/bin/check_backward and
# dev/backward/bin/check_v98_dq_defer_on; build: sh dev/backward/build.sh
# "dev/backward/v98_dq_defer.patch@on=BWD_DQ_DEFER"). v98: mxfp8's default kernel
# adds sub-step 0 of a tile under sub-step 1's S and dP products. Checked (bytes in the
# deterministic mode, the default kernel against the reference), then timed.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_defer.sh > $OUT/bwd_defer.log 2>&1
export OMP_NUM_THREADS=16
KINDS=mxfp8 TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand5000:11 4 4 1" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v98_dq_defer_on
