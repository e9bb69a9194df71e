#!/bin/bash
# Thirty-fifth session, second device command (~8 min; carry build and dev/forward/bin, both
# built here): v38, O's FP32 sum in shared memory added one part a tile (kernels/sm90/forward.cu
# at the working tree then, now dev/forward/v38_osum_parts.patch, built as check_v38_osum_parts: kOParts = FLAMIA_SM90_FWD_O_FLUSH = 4, and 2, 1), after v37 (the whole
# accumulator every 4 tiles: +13 % at 16x4096, dev/logs/thirty-fifth_osum.log). 1. accuracy:
# V = 1 (signed error of O by document position), V + 1 against the reference, the no-TMA
# path; 2. dev/forward/compare.sh: reference checks and timing (bytes skipped: the arithmetic
# moved by design); 3. the gpu suite from build/ (v38 with 4 parts; test_gpu_forward's new case
# "one document of 3000, V mean 1"), compute-sanitizer memcheck and racecheck of
# test_gpu_forward at FLAMIA_TEST_SMALL (osum shares the staging and epilogue tiles).
# Usage (device, repo root): bash dev/sessions/thirty-fifth_parts.sh > $OUT/parts.log 2>&1
export OMP_NUM_THREADS=16
B=dev/forward/bin
OUT=${OUT:-/tmp/flamia-out}
for b in check_v38_osum_parts check_v38_osum_parts_f2 check_v38_osum_parts_f1; do
  VPAT=ones timeout 60 $B/$b mxfp8 2x8192 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/mxfp8 $b: /"
done
VPAT=ones timeout 60 $B/check_v38_osum_parts exact 2x8192 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/exact check_v38_osum_parts: /"
for args in "mxfp8 2x8192 4 4 1" "exact rand20000:3 8 2 1"; do
  VMEAN=1 timeout 60 $B/check_v38_osum_parts $args sample2048 2>&1 | tail -1 | cut -c1-220 | sed "s/^/VMEAN=1 $args: /"
done
USE_TMA=0 timeout 60 $B/check_v38_osum_parts mxfp8 rand3000:1 4 2 1 full 2>&1 | tail -1 | cut -c1-200 | sed "s/^/USE_TMA=0: /"
BYTES=0 WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_head check_v38_osum_parts check_v38_osum_parts_f2 check_v38_osum_parts_f1
WORKLOADS="16x4096 16 16 1" RECIPES=exact CHECK=0 BYTES=0 bash dev/forward/compare.sh check_fwd_head check_v38_osum_parts 2>&1 | grep "^exact"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
# (as run: the same loop written out, logs $OUT/test_<name>.log; folded into gpu_test_bins.sh since)
bash dev/gpu_test_bins.sh 150 "V mean|no TMA|FAIL" 20 test_gpu_forward test_gpu_quantize test_gpu_leak test_gpu_api \
  test_gpu_backward test_gpu_consistency test_gpu_scale_shift test_gpu_e4m3_cvt test_gpu_ref64
for tool in memcheck racecheck; do
  s=$(date +%s); FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
    build/tests/gpu/test_gpu_forward > "$OUT/sanitize-$tool.log" 2>&1
  echo "compute-sanitizer $tool test_gpu_forward: rc=$? ($(( $(date +%s) - s )) s)"; grep -h "SUMMARY" "$OUT/sanitize-$tool.log" | tail -1
done
