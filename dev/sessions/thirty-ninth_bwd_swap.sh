#!/bin/bash
# Thirty-ninth session (~2 min; carry dev/backward/bin/check_backward and
# check_v96_probe_dq_half_{boxB,swap,swapB} by name; build: sh dev/backward/build.sh
# "dev/backward/v96_probe_dq_half.patch@boxB=BWD_PROBE_DQ=7"
# "dev/backward/v96_probe_dq_half.patch@swap=BWD_DQ_SWAP"
# "dev/backward/v96_probe_dq_half.patch@swapB=BWD_DQ_SWAP,BWD_PROBE_DQ=7"). Does the cost of
# the reduce-adds that read the F16 dO panel's staging (boxB: -5.5 % without them) follow the
# staging region or the dims? swap checked against the reference, then timing.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_swap.sh > $OUT/bwd_swap.log 2>&1
export OMP_NUM_THREADS=16
KINDS=mxfp8 TKINDS=none LAYOUTS="rand3000:1 4 2 1|rand5000:11 4 4 1" \
  bash dev/backward/compare.sh check_backward check_v96_probe_dq_half_swap 2>&1 | grep -E "==|default"
CHECK=0 TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v96_probe_dq_half_swap check_v96_probe_dq_half_swapB check_v96_probe_dq_half_boxB
