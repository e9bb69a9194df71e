#!/bin/bash
# Seventeenth session: dQ's key-block pairs folded into one chain (v40, the working tree's
# backward_fp8.cu) - the gpu tests that exercise the backward, the harness's default mode
# against the reference, and timing against the committed kernel (check_head), alternated.
# Carry build and dev/backward/bin (check_backward = the working tree, check_head = HEAD).
# Usage (device): bash dev/sessions/seventeenth_v40.sh > $OUT/v40.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
bash dev/gpu_test_bins.sh 200 "FAIL|differ" 12 test_gpu_backward test_gpu_consistency test_gpu_leak test_gpu_scale_shift test_gpu_api
B=dev/backward/bin
for k in mxfp8 exact; do
  for layout in "rand3000:1 4 2 1" "3x1024 4 4 0" "2x2048 8 2 1" "rand2000:3 8 2 1"; do
    for b in check_head check_backward; do
      timeout 90 $B/$b $k $layout full 2>&1 | grep -E "PASS|FAIL" | sed "s/^/$b: /" | cut -c1-330
    done
  done
done
for r in 1 2; do
  for w in "16x4096 16 16 1" "64x1024 16 16 1" "4x4096 16 16 1" "rand65536:5 16 16 1"; do
    for b in check_head check_backward; do
      GPU_FWD=1 timeout 60 $B/$b mxfp8 $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/mxfp8 $b ${w%% *}: /"
    done
  done
done
for w in "16x4096 16 16 1" "64x1024 16 16 1"; do
  for b in check_head check_backward; do
    GPU_FWD=1 timeout 60 $B/$b exact $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/exact $b ${w%% *}: /"
  done
done
