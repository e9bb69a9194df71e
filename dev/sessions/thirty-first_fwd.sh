#!/bin/bash
# Thirty-first session, first forward command (~3 min with build and dev/forward/bin carried,
# built here by `git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu` and `ninja -C build`): forward v28
# (dev/forward/v28_imax3_exact.patch: v27's integer maxima for mxfp8-exact's unmasked tiles
# too; prediction in the patch's header), which the working tree's kernels/sm90/forward.cu
# carries (check_forward) against the committed kernel (check_fwd_head).
# 1. dev/forward/compare.sh: reference checks, O / lse / frame bytes against the head's (same
#    bytes expected everywhere: exact layouts, the NEGQ=1 fallback layouts), the forward alone
#    timed under mxfp8-exact and mxfp8, builds alternated, twice.
# 2. The library built with it (carried build/): the gpu tests, then racecheck on
#    test_gpu_forward (small case).
# Usage (device, repo root): bash dev/sessions/thirty-first_fwd.sh > $OUT/fwd.log 2>&1   (carry build, dev/forward/bin)
set -u
export OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}
t0=$(date +%s)
RECIPES="exact mxfp8" WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_head check_forward
echo "== compare done at $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
for t in quantize forward leak api backward consistency scale_shift e4m3_cvt; do
  s=$(date +%s); timeout 120 build/tests/gpu/test_gpu_$t > "$OUT/test_$t.log" 2>&1; rc=$?
  echo "test_gpu_$t rc=$rc ($(( $(date +%s) - s )) s)"
done
grep -h "negative rows\|FAIL\|failures" "$OUT"/test_forward.log | cut -c1-220
echo "== gpu tests done at $(( $(date +%s) - t0 )) s"
FLAMIA_TEST_SMALL=1 timeout 200 compute-sanitizer --tool racecheck build/tests/gpu/test_gpu_forward > "$OUT/racecheck_forward.log" 2>&1
echo "racecheck rc=$?"; grep -h "RACECHECK SUMMARY" "$OUT/racecheck_forward.log"
echo "== done at $(( $(date +%s) - t0 )) s"
cd "$OUT" && f=$(ls *.log *.txt 2>/dev/null | grep -v '^fwd.log$'); [ -n "$f" ] && tar czf logs.tgz $f && rm -f $f
