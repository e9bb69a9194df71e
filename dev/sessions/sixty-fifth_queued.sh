#!/bin/bash
# Queued by the sixty-fourth session (no device time left after v120's run). Carry build-carry
# (bash dev/carry_bins.sh at the commit to be measured). Pass FLAMIA_GIT_COMMIT=<hash>.
# 1. The gpu suite with v120. test_gpu_padded and test_gpu_scale_shift set the deterministic mode
#    before sizing their workspace, so their training calls now take the split dQ (not yet run on
#    a GPU: v120's command ran test_gpu_backward alone), and test_gpu_backward's deterministic
#    Hadamard case (added after v120's run: dq_split's own rotation). Expect rc 0 for every program.
# 2. Table D on this GPU with the split: pipelines/config.yaml's deterministic_default and
#    deterministic_on commands into $OUT (data/measured/<gpu>/deterministic_{default,on}.h5 if
#    the GPU is an H200). Predicted (H100 harness: -15 % at 16x4096, -16 % at 64x1024): the
#    deterministic rows 12-18 % below the default ones on the MHA workloads; GQA not measured.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
C=build-carry
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gpu_padded test_gpu_scale_shift test_gpu_backward test_gpu_api test_gpu_forward test_gpu_quantize \
         test_gpu_leak test_gpu_consistency test_gpu_ref64 test_gpu_e4m3_cvt; do
  s=$(date +%s); timeout 200 $C/tests/gpu/$t > $OUT/$t.log 2>&1
  echo "$t rc=$? ($(( $(date +%s) - s )) s): $(tail -n 1 $OUT/$t.log | cut -c1-150)"
done
A="--workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet"
timeout 200 $C/experiments/latency/latency --backend cuda $A --out $OUT/deterministic_default.h5 > $OUT/det_default.log 2>&1; echo "default rc=$?"
timeout 200 $C/experiments/latency/latency --backend cuda $A --deterministic --out $OUT/deterministic_on.h5 > $OUT/det_on.log 2>&1; echo "deterministic rc=$?"
tail -n 12 $OUT/det_default.log $OUT/det_on.log
echo "done ($(( $(date +%s) - t0 )) s)"
