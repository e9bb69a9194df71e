#!/bin/bash
# Thirty-seventh session, v43 promoted (carry build/kernels/libflamia.so, build/experiments,
# build/tests/gpu; built here with -Dcuda=enabled -Dexperiments=enabled): the gpu suite's
# binaries and racecheck of test_gpu_forward on the promoted kernel, the accuracy driver's
# --backend cuda against the shipped accuracy_gpu file (the promotion keeps O's bytes at the
# default interval), then the O-sum ablation again (intervals 0, 2, 4, 8, 16).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/thirty-seventh_v43.sh > $OUT/v43.log 2>&1
export OMP_NUM_THREADS=16 LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O/tests"
OUT=$O/tests bash dev/gpu_test_bins.sh 120 "V mean|FAIL|o-sum" 8 test_gpu_forward test_gpu_quantize \
  test_gpu_leak test_gpu_api test_gpu_backward test_gpu_consistency test_gpu_scale_shift test_gpu_ref64 test_gpu_e4m3_cvt
FLAMIA_TEST_SMALL=1 timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/gpu/test_gpu_forward \
  > "$O/tests/racecheck_forward.log" 2>&1; echo "racecheck test_gpu_forward: rc=$?"
grep -E "RACECHECK SUMMARY" "$O/tests/racecheck_forward.log" | sort | uniq -c
timeout 100 build/experiments/accuracy --backend cuda --scale 0.0625 --seed 1 --heads 8 --out "$O/accuracy_gpu_check.h5" --quiet
echo "accuracy_gpu (check): rc=$?"
build/experiments/h5totsv "$O/accuracy_gpu_check.h5" /tmp/acc_new >/dev/null && \
  build/experiments/h5totsv data/measured/h200/accuracy_gpu.h5 /tmp/acc_old >/dev/null && \
  if cmp -s <(cut -f1-2,7,9,10,11,13,14 /tmp/acc_new/accuracy.tsv) <(cut -f1-2,7,9,10,11,13,14 /tmp/acc_old/accuracy.tsv); then
    echo "accuracy_gpu (check): O, dK, dV cosines and errors identical to the shipped file"
  else echo "accuracy_gpu (check): DIFFERS from the shipped file"; fi
s=$SECONDS
timeout 200 build/experiments/osum_ablation --backend cuda --scale 1.0 --seed 1 --out "$O/osum_ablation_gpu.h5" 2>&1 | tail -1
echo "osum_ablation: rc=$? $((SECONDS - s)) s"
build/experiments/h5totsv "$O/osum_ablation_gpu.h5" /tmp/osum >/dev/null && cut -f1-3,6,8 /tmp/osum/osum.tsv
cd "$O" && tar czf tests.tgz tests && rm -rf tests
