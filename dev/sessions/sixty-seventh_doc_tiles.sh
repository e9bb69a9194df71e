#!/bin/bash
# Sixty-seventh session: the shape's host copy of cu_seqlens (flamia_shape.cu_seqlens_host), which lets
# the backward count the split dQ's tiles (problem.doc_tiles) instead of bounding them from max_seqlen.
# Carry build-carry (bash dev/carry_bins.sh). Pass FLAMIA_GIT_COMMIT=<hash>.
# 1. The gpu suite (test_gpu_backward: every other case with the copy; per deterministic case dQ
#    bit-identical with it, and an understating copy flagged by flamia_cuda_check_finite; test_gpu_api:
#    its refusals).
# 2. A/B, the latency driver (which passes the copy): H (counted, the default) against N
#    (FLAMIA_SM90_DOC_TILES=0, the bound), alternated twice. Host plans (132 SMs): 8192+224x256 takes the
#    split in 2 chunks of 5,896 CTAs (bounded: no kv head fits); 8192+32x256 (4 chunks of 644, 4.9 an SM),
#    logu-16k (4 of 556) stay under the grid floor and logu-64k needs 16 chunks: reduce-adds as before.
#    Predicted, training call H / N: 8192+224x256 0.88-0.93 (the deterministic mode's split, Table D:
#    -14.5 % on its backward); the others 0.99-1.01.
#    Rule (before the run): the counted tiles stay the default if 8192+224x256's training call H / N <= 0.95
#    and no workload is > 1.01 (best of two); else FLAMIA_SM90_DOC_TILES's default becomes 0.
#    Exploration, no decision: X = counted, longest first (FLAMIA_SM90_SPLIT_ORDER=1), floor 2 CTAs an SM,
#    up to 16 chunks: the three packed workloads the floor or the chunk limit leave on the reduce-adds.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
. dev/device_lib.sh
dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_backward test_gpu_api test_gpu_forward test_gpu_quantize test_gpu_leak \
  test_gpu_consistency test_gpu_ref64 test_gpu_padded test_gpu_scale_shift test_gpu_e4m3_cvt
grep "host copy" $OUT/logs/test_gpu_backward.log | head -3 | cut -c1-400
echo "tests done ($(( $(date +%s) - t0 )) s)"
W="--workloads 8192+224x256,8192+32x256,logu-16k,logu-64k,16x4096,gqa-16x1024 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in H N X H2 N2 X2; do
  unset FLAMIA_SM90_DOC_TILES FLAMIA_SM90_SPLIT_ORDER FLAMIA_SM90_DQ_SPLIT_MIN_CTAS FLAMIA_SM90_DQ_SPLIT_CHUNKS
  case $m in
    N*) export FLAMIA_SM90_DOC_TILES=0 ;;
    X*) export FLAMIA_SM90_SPLIT_ORDER=1 FLAMIA_SM90_DQ_SPLIT_MIN_CTAS=2 FLAMIA_SM90_DQ_SPLIT_CHUNKS=16 ;;
  esac
  timeout 120 $C/experiments/latency/latency --backend cuda $W --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$? ($(( $(date +%s) - t0 )) s)"
done
python3 dev/sessions/ab_table.py $OUT/logs H:N:"counted / bounded" X:N:"exploration X / bounded"
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(( $(date +%s) - t0 )) s)"
