#!/bin/bash
# Thirty-fourth session, second device command (~6 min; carry build and dev/forward/bin, both
# built here): the V-exponent floor (FLAMIA_SM90_FWD_E_MIN, sm90_launch.h) for rows that see
# only all-zero V blocks. 1. the harness with V zero on every 7th token (VPAT=trow: in
# mxfp8-exact a document starting on such a token has a first row with only zero V; it came out
# NaN / inf at 3e42434), head vs the fixed kernel; 2. dev/forward/compare.sh: O / lse / frame
# bytes of the fixed kernel against the head's on ordinary inputs (same bytes expected) and
# 16x4096 timing; 3. the whole gpu suite from build/ (test_gpu_forward's new case "zero V at
# document starts"), compute-sanitizer memcheck of test_gpu_forward at FLAMIA_TEST_SMALL.
# Usage (device, repo root): bash dev/sessions/thirty-fourth_zero_v.sh > $OUT/zero_v.log 2>&1
export OMP_NUM_THREADS=16
B=dev/forward/bin
OUT=${OUT:-/tmp/flamia-out}
for b in check_fwd_head check_forward; do
  for args in "exact 2x4096 4 2 1" "exact rand3000:1 4 2 1" "mxfp8 rand3000:1 4 2 1"; do
    VPAT=trow timeout 60 $B/$b $args sample4096 2>&1 | tail -1 | cut -c1-200 | sed "s/^/VPAT=trow $b: /"
  done
done
WORKLOADS="16x4096 16 16 1" bash dev/forward/compare.sh check_fwd_head check_forward
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
for t in quantize forward leak api backward consistency scale_shift e4m3_cvt ref64; do
  s=$(date +%s); timeout 150 build/tests/gpu/test_gpu_$t > "$OUT/test_$t.log" 2>&1; rc=$?
  echo "test_gpu_$t rc=$rc ($(( $(date +%s) - s )) s)"; tail -1 "$OUT/test_$t.log"
done
grep -h "zero V\|FAIL" "$OUT"/test_forward.log | cut -c1-240 | head -20
s=$(date +%s); FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
  build/tests/gpu/test_gpu_forward > "$OUT/sanitize-memcheck.log" 2>&1
echo "compute-sanitizer memcheck test_gpu_forward: rc=$? ($(( $(date +%s) - s )) s)"; grep -h "SUMMARY" "$OUT/sanitize-memcheck.log" | tail -1
