#!/bin/bash
# Sixty-fourth session, fifth device command (dev/backward/bin carried): l_sketch with 128-byte rows.
# The fourth command (sixty-fourth_split4.sh, H100): items claimed from a counter (L_PERSIST=2)
# 1.02 ms at 16x4096 against the plain grid's 1.054: the CTA starts are not what holds the
# stream at ~70 % of bandwidth. Next suspect: the TMA boxes' 64-byte rows (dS [128][64 B] and
# K^T [128][64 B]: twice the row requests a byte of 128-byte rows). L_ROW128=1: a step is a
# whole 128-key tile, dS [128][128 B] (the main kernel's two warpgroups' 64-byte stores side by
# side in one row) and K^T [128][128 B], 128-byte swizzle, two chains a step.
# Prediction: 0.85-0.95 ms at 16x4096 if the row requests are the cap; ~1.02 if not.
# Decision: the split's rule needs l_sketch <= 0.87 ms.
# Result (H100): L_ROW128 0.905 ms (plain grid), 0.908 with L_PERSIST=2; 64x1024 0.418 / 0.362.
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in "16 4096" "4 4096" "64 1024"; do
  for b in l_sketch_p2 l_sketch_r l_sketch_p2r l_sketch l_sketch_p2r; do timeout 60 $B/$b $w; done
done 2>&1 | tee $OUT/l_sketch5.log
