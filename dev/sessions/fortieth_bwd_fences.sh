#!/bin/bash
# Fortieth session (~2 min; carry dev/backward/bin/check_backward, check_v102_probe_fences_rows
# and check_v102_probe_fences_dsfence; build: sh dev/backward/build.sh
# "dev/backward/v102_probe_fences.patch@rows=BWD_PROBE_NO_ROWS=1"
# "dev/backward/v102_probe_fences.patch@dsfence=BWD_PROBE_NO_DS_FENCE=1"). Timing probes only
# (their results are wrong by design): what the proxy fences' waits cost in the real kernel.
# Usage (device, repo root): bash dev/sessions/fortieth_bwd_fences.sh > $OUT/bwd_fences.log 2>&1
export OMP_NUM_THREADS=16
TKINDS=mxfp8 CHECK=0 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v102_probe_fences_rows check_v102_probe_fences_dsfence
TKINDS=exact CHECK=0 WORKLOADS="16x4096 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v102_probe_fences_rows check_v102_probe_fences_dsfence
