#!/bin/bash
# The twenty-first session's third device command (~5 min): compute-sanitizer racecheck on the
# deterministic-dQ kernels (test_gpu_scale_shift; the first command's sanitize step ran out of
# its time before this one), now at the test's FLAMIA_TEST_SMALL size (~400 tokens).
# Usage (device, repo root): bash dev/sessions/twentyfirst_third.sh > $OUT/third.log 2>&1
set -u
. dev/device_lib.sh
dev_setup
FLAMIA_TEST_SMALL=1 timeout 60 $B/tests/gpu/test_gpu_scale_shift 2>&1 | tail -4
echo "plain run done ($(dev_elapsed) s)"
FLAMIA_TEST_SMALL=1 timeout 270 compute-sanitizer --tool racecheck --error-exitcode 9 $B/tests/gpu/test_gpu_scale_shift \
  > "$OUT/racecheck-scale-shift.log" 2>&1
echo "compute-sanitizer racecheck test_gpu_scale_shift (small): rc=$? ($(dev_elapsed) s)"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test_gpu_scale_shift" "$OUT/racecheck-scale-shift.log" | sort | uniq -c
