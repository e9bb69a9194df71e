#!/bin/bash
# Sixty-fourth session, the split deterministic dQ (v120: the deterministic mode's main kernel stores
# its dS codes and row factors, kernels/sm90/backward_dq.cu sums dQ; sm90_launch.h's split regions).
# Carried: build-carry (bash dev/carry_bins.sh: libflamia.so and the gpu tests of the tree) and
# dev/backward/bin (FWD_HEAD=1 sh dev/backward/build.sh: the harness over the tree's backward).
# 1. test_gpu_backward: every case, and its deterministic cases now run the split (FP8 kinds, with
#    the workspace flamia_cuda_workspace_size gives with the mode on), the turns (the smaller
#    workspace) and the default: split twice bit-identical, both within 2^-8 of the default, dK/dV
#    bit-identical across the modes.
# 2. The harness's deterministic split against the CPU reference (CHECK full) on rand3000:1 (GQA,
#    1-token documents) and non-causal 3x1024, both recipes.
# 3. Timing, the whole backward (harness, median of 10): default, deterministic split (BWD_DET=1),
#    deterministic turns (BWD_DET=1 BWD_SPLIT=0), at 16x4096 and 64x1024.
# Prediction (H100; sixty-fourth_split*.sh's count and sixty-fourth_det.sh): 16x4096 default 8.45 ms,
# turns 12.5, split 7.2-7.5; 64x1024 default 3.28, turns 3.89, split 2.8-3.0.
# Decision: if 1 and 2 pass and the split is faster than the turns on both workloads, the
# deterministic mode keeps it (the default mode is unchanged either way).
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
C=build-carry B=dev/backward/bin
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 $C/tests/gpu/test_gpu_backward > $OUT/test_gpu_backward.log 2>&1
echo "test_gpu_backward rc=$? ($(( $(date +%s) - t0 )) s)"
grep -E "deterministic dQ|FAIL|failure" $OUT/test_gpu_backward.log | cut -c1-230 | head -20
for k in mxfp8 exact; do
  for l in "rand3000:1 4 2 1" "3x1024 4 4 0"; do
    echo "check $k $l det split: $(BWD_DET=1 timeout 60 $B/check_backward $k $l full 2>&1 | tail -n 1 | sed -E 's/^(.{60}).*(\| relL2.{80}).*(\| unwritten.*)$/\1 \2 \3/')"
  done
done 2>&1 | tee $OUT/v120_checks.log
echo "checks done ($(( $(date +%s) - t0 )) s)"
for w in 16x4096 64x1024; do
  echo "default $w: $(timeout 60 $B/check_backward mxfp8 $w 16 16 1 none 10 2>&1 | grep -oE 'bwd [0-9.]+ ms [0-9.]+ TFLOP/s')"
  echo "split   $w: $(BWD_DET=1 timeout 60 $B/check_backward mxfp8 $w 16 16 1 none 10 2>&1 | grep -oE 'bwd [0-9.]+ ms [0-9.]+ TFLOP/s')"
  echo "turns   $w: $(BWD_DET=1 BWD_SPLIT=0 timeout 60 $B/check_backward mxfp8 $w 16 16 1 none 10 2>&1 | grep -oE 'bwd [0-9.]+ ms [0-9.]+ TFLOP/s')"
done 2>&1 | tee $OUT/v120_timing.log
echo "done ($(( $(date +%s) - t0 )) s)"
