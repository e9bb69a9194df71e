#!/bin/bash
# Sixty-first session, last command, at the commit with v118 (bwd_pre_do) and quantize v10
# promoted: the gpu suite; compute-sanitizer memcheck on test_gpu_quantize and test_gpu_api
# (small cases; both changed kernels run there: quantize's NaN path, bwd_pre_do's new indexing)
# and racecheck on test_gpu_quantize; then the acceptance ratios (mxfp8, 3 alternated rounds).
# Usage (device, repo root; carry .whl for the cudnn-fp8 peer):
#   FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/sixty-first_final.sh (ratios.py records it; the device copy has no .git)
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16 PYTHONUNBUFFERED=1
. dev/device_lib.sh
dev_setup
rc=0
dev_gpu_suite || rc=1
echo "suite: rc=$rc ($(dev_elapsed) s)"
for tt in memcheck:quantize memcheck:api racecheck:quantize; do
  tool=${tt%%:*} t=${tt#*:}
  FLAMIA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 \
    $B/tests/gpu/test_gpu_$t > "$OUT/sanitize-$tool-$t.log" 2>&1
  r=$?; [ $r -ne 0 ] && rc=1
  echo "compute-sanitizer $tool test_gpu_$t: rc=$r ($(dev_elapsed) s) $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' \
    "$OUT/sanitize-$tool-$t.log" | sort | uniq -c | tr '\n' ' ')"
done
bash dev/sessions/fifty-seventh.sh ratios mxfp8 > "$OUT/ratios_run.log" 2>&1 || rc=1
grep -E "^ratios|^issue|^\| 16x4096 \| " "$OUT/ratios_run.log" | cut -c1-230
echo "all: rc=$rc ($(dev_elapsed) s)"
exit $rc
