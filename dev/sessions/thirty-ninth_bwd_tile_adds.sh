#!/bin/bash
# Thirty-ninth session (~3 min; carry dev/backward/bin/check_backward and
# dev/backward/bin/check_v94_dq_tile_adds_on; build: sh dev/backward/build.sh
# "dev/backward/v94_dq_tile_adds.patch@on=BWD_DQ_TILE_ADDS"). v94: mxfp8's default kernel
# adds a query tile's two dQ sub-steps together (one proxy fence a tile). 1. checked (the
# deterministic kernels are the base's: bytes equal; the default kernel against the
# reference, with odd lengths so that tiles end after their first sub-step); 2. timing.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_tile_adds.sh > $OUT/bwd_tile_adds.log 2>&1
export OMP_NUM_THREADS=16
KINDS=mxfp8 TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0|rand5000:11 4 4 1" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v94_dq_tile_adds_on
