#!/bin/bash
# Sixty-fourth session, fourth device command (dev/backward/bin carried): l_sketch persistent with
# items claimed from a counter. The third command (sixty-fourth_split3.sh, H100): round-robin
# persistence 1.25 ms at 16x4096 against 1.054 for the plain grid (its static split of items of 2
# to 64 steps leaves a tail). L_PERSIST=2: the producer claims the next item of the same list
# from a global counter and hands it to the consumers in the stage's header, so the next item's
# loads go out under this one's end and no CTA starts with an empty pipeline.
# Prediction: 0.85-0.95 ms at 16x4096 if the CTA starts are what holds the plain grid at 71 %;
# no better than 1.05 if not. Decision: the split's rule needs l_sketch <= 0.87 ms.
# Result (H100): counter-claimed 1.022 ms (10 stages 1.018), 64x1024 0.400-0.411 against 0.448.
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in "16 4096" "4 4096" "64 1024"; do
  for b in l_sketch l_sketch_p2 l_sketch_p2s10 l_sketch; do timeout 60 $B/$b $w; done
done 2>&1 | tee $OUT/l_sketch4.log
