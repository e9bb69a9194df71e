#!/bin/bash
# Fourteenth session (~3 min): backward v30_g_blocks (mxfp8's G from one row per 32-token
# block) against the committed kernel: deterministic-mode bytes (must be equal), default mode
# against the reference, the backward's time on short, medium and long documents.
# Build here first (repo root), then carry dev/backward/bin:
#   sh dev/backward/build.sh dev/backward/v30_g_blocks.patch
# Usage (device, repo root): bash dev/sessions/fourteenth_v30.sh > $OUT/v30.log 2>&1
export OMP_NUM_THREADS=16
KINDS=mxfp8 TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="512x128 16 16 1|64x1024 16 16 1|16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v30_g_blocks
