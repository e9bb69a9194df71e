#!/bin/bash
# Fifteenth session (~3 min): backward v31_dq_early (dQ's first product issued before the
# sub-step's CTA barrier, the warpgroup's own key blocks first) against the committed kernel:
# deterministic-mode bytes (must be equal: the deterministic kernels are unchanged), the
# default mode against the reference, the backward's time on short, medium and long documents.
# Build here first (repo root), then carry dev/backward/bin:
#   sh dev/backward/build.sh dev/backward/v31_dq_early.patch
# Usage (device, repo root): bash dev/sessions/fifteenth_v31.sh > $OUT/v31.log 2>&1
export OMP_NUM_THREADS=16
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="512x128 16 16 1|64x1024 16 16 1|16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v31_dq_early
