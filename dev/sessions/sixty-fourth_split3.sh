#!/bin/bash
# Sixty-fourth session, third device command (dev/backward/bin carried): l_sketch persistent.
# The second command (sixty-fourth_split2.sh, H100) read 1.066 ms at 16x4096 with DRAM reads at
# their minimum (2.49 GB: dS, factors, K^T once), i.e. 2.37 TB/s, 71 % of the card's 3.35, the
# same with 10 stages and without MMAs: not the bytes in flight nor the tensor cores. Suspect:
# each of the 62 CTAs an SM starts with an empty pipeline (barrier init, first loads' latency)
# and ends with its stores. L_PERSIST=1: one CTA an SM, items round-robin in the same order, the
# stages running on across items. Prediction: 0.85-0.95 ms at 16x4096 (bwd_dq_out's 89 % of
# bandwidth would be 0.84). Decision: the split's rule (first command) needs l_sketch <= 0.87 ms.
# Result (H100): round-robin persistent 1.25 ms (10 stages 1.246) against 1.054: slower (a tail).
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in "16 4096" "4 4096" "64 1024"; do
  for b in l_sketch l_sketch_p l_sketch_p10 l_sketch; do timeout 60 $B/$b $w; done
done 2>&1 | tee $OUT/l_sketch3.log
