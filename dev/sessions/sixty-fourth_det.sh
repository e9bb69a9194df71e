#!/bin/bash
# Sixty-fourth session, seventh device command (dev/backward/bin carried): today's deterministic
# backward on the same H100 as the split's count (sixty-fourth_split*.sh), so that the claim "the
# split, deterministic by construction, is ~-34 % against today's deterministic mode" (made from
# Table D's H200 figures) rests on one GPU. Harness timing (median of 10) of the whole backward,
# default and BWD_DET=1, and ncu of the deterministic main kernel.
# Prediction: deterministic +25..+32 % at 16x4096 (Table D, H200: +30.4 %), so ~10.5-11 ms on the
# H100 against the split's count of ~7.2 ms.
# Result (H100): default 8.45 ms, deterministic 12.53 (+48 %) at 16x4096 (det main kernel 11.54 ms by ncu);
# 64x1024 3.28 / 3.88-3.90 (+18..+19 %). The split's count (~7.2-7.4 ms at 16x4096) is -41..-43 % against it.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in 16x4096 64x1024; do
  for r in 1 2; do
    echo "default $w: $(timeout 120 $B/check_backward mxfp8 $w 16 16 1 none 10 2>&1 | grep -oE 'bwd [0-9.]+ ms [0-9.]+ TFLOP/s' | tail -1)"
    echo "det     $w: $(BWD_DET=1 timeout 120 $B/check_backward mxfp8 $w 16 16 1 none 10 2>&1 | grep -oE 'bwd [0-9.]+ ms [0-9.]+ TFLOP/s' | tail -1)"
  done
done 2>&1 | tee $OUT/det.log
BWD_DET=1 timeout 120 bash dev/ncu_durations.sh "det 16x4096" "bwd_" $B/check_backward mxfp8 16x4096 16 16 1 none 2 2>&1 | tee -a $OUT/det.log
