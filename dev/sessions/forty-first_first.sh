#!/bin/bash
# Forty-first session, first device command (~6 min; carry build, dev/backward/bin/check_backward
# and dev/backward/bin/check_v103_dk_fold_on; build: meson compile -C build, then
# sh dev/backward/build.sh "dev/backward/v103_dk_fold.patch@on=BWD_DK_FOLD=1").
# (1) v103, dK folded over the sub-step's two query blocks (a numerics change within
#     numerics.md 4.6's latitude: the deterministic bytes are expected to differ from the
#     base's), checked against the reference in both recipes, then timed against the base.
# (2) the gpu suite of the carried build (HEAD) and racecheck of test_gpu_forward; logs tarred.
# Usage (device, repo root): bash dev/sessions/forty-first_first.sh > $OUT/first.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
bash dev/backward/variant_check.sh check_v103_dk_fold_on
echo "== gpu suite (the carried build; the device's .git copy does not name its commit)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
