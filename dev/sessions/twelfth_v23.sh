#!/bin/bash
# Twelfth session, fourth device command (~4 min): backward v23_head_fastest (the main
# kernel's grid with the kv head fastest, for the tail) against the committed kernel:
# bytes (deterministic dQ) and the default mode vs the reference on two layouts, then the
# backward's time on 4x4096, 16x4096, 16x1024 and two random packs, alternated, twice.
# Predicted (list-scheduling model): -5 % 4x4096, -1.3 % 16x4096, -3 % 16x1024.
# Build here first: sh dev/backward/build.sh dev/backward/v23_head_fastest.patch; carry dev/backward/bin.
# Usage (device, repo root): bash dev/sessions/twelfth_v23.sh
export OMP_NUM_THREADS=16
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1" DEFAULT_CHECK=1 \
  WORKLOADS="4x4096 16 16 1|16x4096 16 16 1|16x1024 16 16 1|rand16384:7 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v23_head_fastest
