#!/bin/bash
# Seventeenth session: timing of dev/backward/v39_chains.patch's builds (timing only: upper
# bounds of folding the contraction's block exponents into the dS operand for dQ / dK)
# against the committed kernel, alternated. Usage (device): bash dev/sessions/seventeenth_v39.sh > $OUT/v39.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=dev/backward/bin
for w in "16x4096 16 16 1" "64x1024 16 16 1" "16x4096 16 16 1"; do
  for b in check_backward check_v39_chains_dq2 check_v39_chains_dq4 check_v39_chains_dk check_v39_chains_dq2dk check_v39_chains_dq4dk; do
    GPU_FWD=1 timeout 60 $B/$b mxfp8 $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/mxfp8 $b ${w%% *}: /"
  done
done
