#!/bin/bash
# Thirty-ninth session (~2 min; carry dev/backward/bin/check_backward and
# dev/backward/bin/check_v97_dq_stage_own_on; build: sh dev/backward/build.sh
# "dev/backward/v97_dq_stage_own.patch@on=BWD_DQ_STAGE_OWN"). v97: mxfp8's default kernel
# stages dQ's dims 0-31 in a block of its own, not in the F16 dO panel. Checked (bytes in the
# deterministic mode, the default kernels against the reference, both recipes), then timed.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_stage.sh > $OUT/bwd_stage.log 2>&1
export OMP_NUM_THREADS=16
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand5000:11 4 4 1" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v97_dq_stage_own_on
