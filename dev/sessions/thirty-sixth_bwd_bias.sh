#!/bin/bash
# Prepared in the thirty-fifth session (~3 min; carry dev/backward/bin, built here): does the
# backward carry the forward's accumulation bias (numerics.md 8)? dK (= dS^T Q, FP8 wgmma,
# accumulated in registers over every query tile of the key tile's document) with nonzero-mean
# Q; dV (an F16 product, FP32-accurate accumulation) and dQ (FP32 reduce-adds per key tile) with
# nonzero-mean dO as the controls. check_backward prints the gradients' signed error along the
# reference at document positions >= 1024 (sum (g - r) r / sum r^2; the forward's O was -1.2 to
# -5 % there before its FP32 sum, -0.35 % after).
# Usage (device, repo root): bash dev/sessions/thirty-sixth_bwd_bias.sh > $OUT/bwd_bias.log 2>&1
export OMP_NUM_THREADS=16
B=dev/backward/bin
for r in mxfp8 exact; do
  for env in "BWD_QMEAN=0" "BWD_QMEAN=1" "BWD_DOMEAN=0.01" "BWD_QMEAN=1 BWD_DOMEAN=0.01"; do
    env $env timeout 120 $B/check_backward $r 1x4096 2 1 1 full 2>&1 | grep -E "signed error|PASS|FAIL" | cut -c1-220 | sed "s/^/$r $env: /"
  done
done
