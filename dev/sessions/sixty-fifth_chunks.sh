#!/bin/bash
# Sixty-fifth session: the split deterministic dQ in chunks of kv heads (637e3c8 and after).
# Carried: build-carry (bash dev/carry_bins.sh) and dev/backward/bin/check_backward
# (FWD_HEAD=1 sh dev/backward/build.sh). Pass FLAMIA_GIT_COMMIT=<hash>.
# 1. test_gpu_backward (its deterministic cases now also run the split in chunks of one kv head:
#    bit-identical to all heads at once expected), test_gpu_padded, test_gpu_scale_shift.
# 2. The harness's deterministic split in chunks of one kv head (BWD_SPLIT=1) against the CPU
#    reference (CHECK full): rand3000:1 GQA 4/2 (2 chunks), non-causal 3x1024 MHA 4 (4 chunks).
# 3. Timing, whole backward (harness, GPU forward, median of 5): 16x4096 default / split every head
#    (1 chunk) / chunks of 4 / chunks of 1 / turns; 1x65536 (16 heads: 2.3 GB a head, chunks of 6,
#    the turns before this change) default / split / turns.
#    Predicted (H100): 16x4096 7.2 ms at one chunk, +2-5 % in chunks of 4, +10-20 % in chunks of 1;
#    1x65536 split below the turns and near or below the default.
# 4. The training call, default and deterministic (latency --passes train), mxfp8.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry B=dev/backward/bin
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gpu_backward test_gpu_padded test_gpu_scale_shift; do
  s=$(date +%s); timeout 200 $C/tests/gpu/$t > $OUT/logs/$t.log 2>&1
  echo "$t rc=$? ($(( $(date +%s) - s )) s): $(tail -n 1 $OUT/logs/$t.log | cut -c1-150)"
done
grep -E "deterministic dQ|FAIL" $OUT/logs/test_gpu_backward.log | cut -c1-260 | head -12
for l in "rand3000:1 4 2 1" "3x1024 4 4 0"; do
  echo "check mxfp8 $l split, chunks of 1: $(BWD_DET=1 BWD_SPLIT=1 timeout 60 $B/check_backward mxfp8 $l full 2>&1 | tail -n 1 | sed -E 's/^(.{60}).*(\| relL2.{80}).*(\| unwritten.*)$/\1 \2 \3/')"
done 2>&1 | tee $OUT/logs/checks.log
echo "checks done ($(( $(date +%s) - t0 )) s)"
tm() { GPU_FWD=1 timeout 120 $B/check_backward mxfp8 $1 16 16 1 none 5 2>&1 | grep -oE 'bwd [0-9.]+ ms [0-9.]+ TFLOP/s'; }
for w in 16x4096 1x65536; do
  echo "$w default:        $(tm $w)"
  echo "$w split:          $(BWD_DET=1 tm $w)"
  [ $w = 16x4096 ] && echo "$w split chunks 4: $(BWD_DET=1 BWD_SPLIT=4 tm $w)"
  [ $w = 16x4096 ] && echo "$w split chunks 1: $(BWD_DET=1 BWD_SPLIT=1 tm $w)"
  echo "$w turns:          $(BWD_DET=1 BWD_SPLIT=0 tm $w)"
done 2>&1 | tee $OUT/logs/timing.log
echo "timing done ($(( $(date +%s) - t0 )) s)"
A="--workloads 16x4096,64x1024,logu-64k,gqa-16x1024 --recipes mxfp8 --passes train --warmup 3 --iters 20 --verify-rows 0"
timeout 150 $C/experiments/latency/latency --backend cuda $A --out $OUT/logs/train_default.h5 > $OUT/logs/train_default.log 2>&1; echo "train default rc=$?"
timeout 150 $C/experiments/latency/latency --backend cuda $A --deterministic --out $OUT/logs/train_det.h5 > $OUT/logs/train_det.log 2>&1; echo "train det rc=$?"
grep -E "flamia" $OUT/logs/train_default.log $OUT/logs/train_det.log | grep -E "train" | cut -c1-200 | head -12
# 5. On an H200: Table D's pair (pipelines/config.yaml's deterministic_default / deterministic_on)
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  D="--workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet"
  timeout 150 $C/experiments/latency/latency --backend cuda $D --out $OUT/logs/deterministic_default.h5 > /dev/null 2>&1; echo "table D default rc=$?"
  timeout 150 $C/experiments/latency/latency --backend cuda $D --deterministic --out $OUT/logs/deterministic_on.h5 > /dev/null 2>&1; echo "table D deterministic rc=$?"
fi
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(( $(date +%s) - t0 )) s)"
