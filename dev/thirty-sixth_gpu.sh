#!/bin/bash
# Thirty-sixth session (~7 min; carry build/, built here with -Dcuda=enabled -Dexperiments=enabled):
# 1. the gpu suite's binaries at HEAD (test_gpu_forward with the public o-sum switch and the
#    per-document bias loop had not run on the GPU), racecheck of test_gpu_forward small;
# 2. the GPU accuracy tables refreshed (dev/thirty-first_refresh.sh);
# 3. the latency driver's --o-sum-interval ablation (forward only, mxfp8; 0, 4, 8).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/thirty-sixth_gpu.sh > $OUT/gpu.log 2>&1
export OMP_NUM_THREADS=16 LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O/tests"
OUT=$O/tests bash dev/gpu_test_bins.sh 150 "V mean|FAIL|o-sum" 8 test_gpu_forward test_gpu_quantize \
  test_gpu_leak test_gpu_api test_gpu_backward test_gpu_consistency test_gpu_scale_shift test_gpu_ref64 test_gpu_e4m3_cvt
FLAMIA_TEST_SMALL=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/gpu/test_gpu_forward \
  > "$O/tests/racecheck_forward.log" 2>&1; echo "racecheck test_gpu_forward: rc=$?"
grep -E "RACECHECK SUMMARY" "$O/tests/racecheck_forward.log" | sort | uniq -c
bash dev/thirty-first_refresh.sh
for n in 0 4 8; do
  timeout 60 build/experiments/latency/latency --workloads 16x4096,logu-16k --recipes mxfp8 --passes fwd \
    --o-sum-interval $n --pass-budget 3 --verify-rows 64 --out "$O/osum$n.h5" --quiet 2>&1 | tail -2
  build/experiments/h5totsv "$O/osum$n.h5" /tmp/osum$n >/dev/null && awk -F"\t" "NR>1 {print \$14, \$11, \$10, \$6, \$12}" /tmp/osum$n/timings.tsv
done
cd "$O" && tar czf tests.tgz tests && rm -rf tests
