#!/bin/bash
# The gpu suite's ten binaries of a carried build (dev/gpu_test_bins.sh: logs into
# $OUT/tests, their status and key lines printed), then racecheck of test_gpu_forward at its
# small size. Usage (device, repo root): bash dev/gpu_suite_carried.sh [TIMEOUT_S, default 150]
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
limit=${1:-150}
mkdir -p "$O/tests"
OUT=$O/tests bash dev/gpu_test_bins.sh $limit "V mean|FAIL|o-sum" 8 test_gpu_forward test_gpu_quantize \
  test_gpu_leak test_gpu_api test_gpu_backward test_gpu_consistency test_gpu_scale_shift test_gpu_ref64 test_gpu_e4m3_cvt test_gpu_padded
FLAMIA_TEST_SMALL=1 timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/gpu/test_gpu_forward \
  > "$O/tests/racecheck_forward.log" 2>&1; echo "racecheck test_gpu_forward: rc=$?"
grep -E "RACECHECK SUMMARY" "$O/tests/racecheck_forward.log" | sort | uniq -c
