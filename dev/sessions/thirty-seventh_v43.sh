#!/bin/bash
# Thirty-seventh session, v43 promoted (carry build/kernels/libflamia.so, build/experiments,
# build/tests/gpu; built here with -Dcuda=enabled -Dexperiments=enabled): the gpu suite's
# binaries and racecheck of test_gpu_forward on the promoted kernel, the accuracy driver's
# --backend cuda against the shipped accuracy_gpu file (the promotion keeps O's bytes at the
# default interval), then the O-sum ablation again (intervals 0, 2, 4, 8, 16).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/thirty-seventh_v43.sh > $OUT/v43.log 2>&1
export OMP_NUM_THREADS=16 LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
bash dev/gpu_suite_carried.sh 120
bash dev/accuracy_gpu_check.sh
s=$SECONDS
timeout 200 build/experiments/osum_ablation --backend cuda --scale 1.0 --seed 1 --out "$O/osum_ablation_gpu.h5" 2>&1 | tail -1
echo "osum_ablation: rc=$? $((SECONDS - s)) s"
build/experiments/h5totsv "$O/osum_ablation_gpu.h5" /tmp/osum >/dev/null && cut -f1-3,6,8 /tmp/osum/osum.tsv
cd "$O" && tar czf tests.tgz tests && rm -rf tests
