#!/bin/bash
# Prepared in the thirty-fifth session for the next (~5 min; carry dev/forward/bin, built here:
# check_forward = the kernel of 57af50c or later, check_fwd_head = 34adc67's, check_v39_osum_lean
# from dev/forward/v39_osum_lean.patch): v39 (the FP32 O sum without per-item state) against
# 57af50c. 1. accuracy with V = 1 at the default interval; 2. dev/forward/compare.sh (reference
# checks, bytes: v39 should match check_forward's, timing at the default interval, 4); 3. the
# timing again at interval 0. (As run in the thirty-sixth session, 3. timed 0 and 4 in a loop of
# its own, 4 twice over; folded into compare.sh's timing since.)
# Usage (device, repo root): bash dev/sessions/thirty-sixth_v39.sh [VARIANT_BINARY] > $OUT/v39.log 2>&1
# (the thirty-sixth session ran it for check_v39_osum_lean, then check_v40_osum_zero)
export OMP_NUM_THREADS=16
B=dev/forward/bin
V=${1:-check_v39_osum_lean}
for b in check_forward $V; do
  VPAT=ones timeout 60 $B/$b mxfp8 2x8192 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/$b: /"
done
WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_forward $V check_fwd_head
# the interval at 0 too (compare.sh above timed the default, 4)
O_FLUSH=0 CHECK=0 BYTES=0 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" \
  bash dev/forward/compare.sh check_forward $V | sed "s/^/O_FLUSH=0 /"
