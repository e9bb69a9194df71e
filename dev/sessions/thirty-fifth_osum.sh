#!/bin/bash
# Thirty-fifth session, first device command (~6 min; carry dev/forward/bin, built here):
# v37, O's FP32 sum in shared memory (kernels/sm90/forward.cu at the working tree, promoted at
# 57af50c with the interval as the run-time knob flamia_fwd_o_flush; here compile-time: flushes of
# the wgmma accumulator every FLAMIA_SM90_FWD_O_FLUSH key tiles: 4 = check_v37_osum, and 1, 2,
# 8), against the head (check_fwd_head). 1. accuracy: V = 1 (the signed error of O by document
# position), V + 1 (nonzero mean) against the CPU reference of the recipe, and the no-TMA
# path (which keeps the running accumulator); 2. dev/forward/compare.sh: the reference checks,
# bytes (expected to differ: the arithmetic changed), timing of the forward alone.
# Usage (device, repo root): bash dev/sessions/thirty-fifth_osum.sh > $OUT/osum.log 2>&1
export OMP_NUM_THREADS=16
B=dev/forward/bin
ALL="check_fwd_head check_v37_osum check_v37_osum_f1 check_v37_osum_f2 check_v37_osum_f8"
for b in $ALL; do
  for r in mxfp8 exact; do
    VPAT=ones timeout 60 $B/$b $r 2x8192 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/$r $b: /"
  done
  for args in "mxfp8 2x8192 4 4 1" "exact 2x8192 4 4 1" "mxfp8 rand20000:3 8 2 1"; do
    VMEAN=1 timeout 60 $B/$b $args sample2048 2>&1 | tail -1 | cut -c1-220 | sed "s/^/VMEAN=1 $args $b: /"
  done
done
for b in check_fwd_head check_v37_osum; do
  USE_TMA=0 timeout 60 $B/$b mxfp8 rand3000:1 4 2 1 full 2>&1 | tail -1 | cut -c1-200 | sed "s/^/USE_TMA=0 $b: /"
done
WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_head check_v37_osum check_v37_osum_f2 check_v37_osum_f8
WORKLOADS="16x4096 16 16 1" RECIPES=exact CHECK=0 bash dev/forward/compare.sh check_fwd_head check_v37_osum 2>&1 | grep "^exact"
