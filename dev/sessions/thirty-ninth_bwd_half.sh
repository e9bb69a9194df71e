#!/bin/bash
# Thirty-ninth session (~2 min; carry dev/backward/bin/check_backward,
# check_v92_probe_dq_staging_noadd, check_v96_probe_dq_half_warps and check_v96_probe_dq_half_box
# check_v96_probe_dq_half_boxB by name; build: sh dev/backward/build.sh "dev/backward/v96_probe_dq_half.patch@warps=BWD_PROBE_DQ=5"
# "dev/backward/v96_probe_dq_half.patch@box=BWD_PROBE_DQ=6" "dev/backward/v96_probe_dq_half.patch@boxB=BWD_PROBE_DQ=7"). Timing only: does the dQ
# reduce-adds' cost scale with their bytes?
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_half.sh > $OUT/bwd_half.log 2>&1
export OMP_NUM_THREADS=16
CHECK=0 TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v96_probe_dq_half_warps check_v96_probe_dq_half_box check_v96_probe_dq_half_boxB check_v92_probe_dq_staging_noadd
