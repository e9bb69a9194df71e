#!/bin/bash
# Seventeenth session, last device command (~90 s): after the dQ fold's helpers moved to
# sm90_e4m3.cuh (flamia_e4m3x2_scale_f16, flamia_f16x2_pow2_neg) - test_gpu_e4m3_cvt with its
# new exhaustive check of the fold's re-encoding, the backward's gpu tests, and the harness's
# timing against check_head (2bab93b), alternated. Carry build and dev/backward/bin.
# Usage (device): bash dev/sessions/seventeenth_last.sh > $OUT/last.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
bash dev/gpu_test_bins.sh 100 "FAIL|mismatches" 6 test_gpu_e4m3_cvt test_gpu_backward test_gpu_leak test_gpu_api test_gpu_consistency
for r in 1 2; do
  for b in check_head check_backward; do
    GPU_FWD=1 timeout 60 dev/backward/bin/$b mxfp8 16x4096 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/mxfp8 $b 16x4096: /"
  done
done
