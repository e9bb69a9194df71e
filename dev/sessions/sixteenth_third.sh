#!/bin/bash
# Sixteenth session, third device command (~3 min): the backward main kernel's bound study
# (dev/backward/v37_bounds.patch, timing only): the committed kernel, the kernel without its
# MMAs (BWD_BOUND=1) and without its element-wise phase (BWD_BOUND=2). (1) the whole backward
# in the dev harness, builds alternated, twice each; (2) the main kernel alone by ncu
# (gpu__time_duration of each bwd_main_fp8 launch, one backward per binary).
# Build here first, then carry dev/backward/bin:
#   sh dev/backward/build.sh "dev/backward/v37_bounds.patch@nomma=BWD_BOUND=1" "dev/backward/v37_bounds.patch@noelem=BWD_BOUND=2"
# Usage (device, repo root): bash dev/sessions/sixteenth_third.sh > $OUT/third.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=dev/backward/bin
ALL="check_backward check_v37_bounds_nomma check_v37_bounds_noelem"
for w in "16x4096 16 16 1" "4x4096 16 16 1" "64x1024 16 16 1" "rand65536:5 16 16 1"; do
  for b in $ALL $ALL; do
    GPU_FWD=1 timeout 60 $B/$b mxfp8 $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/mxfp8 $b ${w%% *}: /"
  done
done
for w in "16x4096 16 16 1" "64x1024 16 16 1"; do
  for b in $ALL; do
    GPU_FWD=1 timeout 120 bash dev/ncu_durations.sh "$b ${w%% *}" "bwd_main_fp8|bwd_pre|bwd_dq_out|bwd_transpose" $B/$b mxfp8 $w none 1
  done
done
