#!/bin/bash
# Thirty-ninth session (~5 min; carry dev/backward/bin/check_backward and the three
# check_v93_dq_adds_* by name; build: sh dev/backward/build.sh
# "dev/backward/v93_dq_adds.patch@nowait=BWD_PROBE_DQ=3" "dev/backward/v93_dq_adds.patch@nofence=BWD_PROBE_DQ=4"
# "dev/backward/v93_dq_adds.patch@red4=BWD_DQ_RED4"). Where v92's dQ cost sits (the tile
# start's wait for the staging's reads, the proxy fence after the staging) and v93 red4 (dQ
# added from registers by 16-byte reductions): 1. red4 checked (its deterministic kernels are
# the base's, so the bytes must be equal; its default kernels against the reference); 2. timing.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_dq.sh > $OUT/bwd_dq.log 2>&1
export OMP_NUM_THREADS=16
TKINDS=none bash dev/backward/compare.sh check_backward check_v93_dq_adds_red4
CHECK=0 TKINDS="mxfp8 exact" WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v93_dq_adds_nowait check_v93_dq_adds_nofence check_v93_dq_adds_red4
