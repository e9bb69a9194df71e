#!/bin/bash
# Sixty-fourth session, sixth device command (dev/backward/bin carried): the split's count at its
# decision threshold. After the fifth command (sixty-fourth_split5.sh, H100) the dQ kernel with
# 128-byte rows took 0.905 ms at 16x4096, so probe main (5.63, 64-byte rows) + 0.905 = 6.54 ms
# against 0.85 x (7.38 + 0.266) = 6.50: 0.855, at the rule's edge. Unknowns measured here:
# (1) the main kernel with the store in the 128-byte-row layout (v119 @two, BWD_DS_OUT=2) beside
#     @on (64-byte rows) and the base, by ncu, at 16x4096 and 64x1024 (the latter not measured yet);
# (2) the dQ kernel (l_sketch_p2r, the fastest form) at 16x1024 and 64x1024.
# Prediction: @two within 1 % of @on; 64x1024 main -20..-24 % as 16x1024's -21 %.
# Result (H100): main 16x4096 7.39 / 5.66 (@on) / 5.72 (@two), 64x1024 2.24 / 1.77 / 1.79 ms; l_sketch_p2r
# 0.915 / 0.360 / 0.104 (16x1024) ms: main + dQ kernel 0.867x / 0.858x of main + bwd_dq_out (rule 0.85: not built).
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in "16 4096" "64 1024" "16 1024"; do timeout 60 $B/l_sketch_p2r $w; done 2>&1 | tee $OUT/l_sketch6.log
for w in 16x4096 64x1024; do
  for b in check_backward check_v119_ds_out_on check_v119_ds_out_two; do
    timeout 120 bash dev/ncu_durations.sh "$b $w" "bwd_" $B/$b mxfp8 $w 16 16 1 none 2
  done
done > $OUT/v119b_ncu.log 2>&1
awk '{k = $1 " " $2 " " $3; v[k] = v[k] " " $4} END {for (x in v) print x ":" v[x]}' $OUT/v119b_ncu.log | sort
