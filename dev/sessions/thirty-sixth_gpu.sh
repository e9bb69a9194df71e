#!/bin/bash
# Thirty-sixth session (~7 min; carry build/, built here with -Dcuda=enabled -Dexperiments=enabled):
# 1. the gpu suite's binaries at HEAD (test_gpu_forward with the public o-sum switch and the
#    per-document bias loop had not run on the GPU), racecheck of test_gpu_forward small;
# 2. the GPU accuracy tables refreshed (dev/sessions/thirty-first_refresh.sh);
# 3. the latency driver's --o-sum-interval ablation (forward only, mxfp8; 0, 4, 8).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/thirty-sixth_gpu.sh > $OUT/gpu.log 2>&1
export OMP_NUM_THREADS=16 LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
bash dev/gpu_suite_carried.sh 150
bash dev/sessions/thirty-first_refresh.sh
for n in 0 4 8; do
  timeout 60 build/experiments/latency/latency --workloads 16x4096,logu-16k --recipes mxfp8 --passes fwd \
    --o-sum-interval $n --pass-budget 3 --verify-rows 64 --out "$O/osum$n.h5" --quiet 2>&1 | tail -2
  build/experiments/h5totsv "$O/osum$n.h5" /tmp/osum$n >/dev/null && awk -F"\t" "NR>1 {print \$14, \$11, \$10, \$6, \$12}" /tmp/osum$n/timings.tsv
done
cd "$O" && tar czf tests.tgz tests && rm -rf tests
