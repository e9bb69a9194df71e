#!/bin/bash
# Forty-second session, first device command (~8 min; carry build, dev/backward/bin/check_backward
# and dev/backward/bin/check_v105_nr_fold_on; build: sh dev/backward/build.sh
# "dev/backward/v105_nr_fold.patch@on=BWD_NR_FOLD=1" at the base, then v105 applied to
# kernels/sm90/backward_fp8.cu as the default and meson compile -C build).
# (1) v105, mxfp8's P normalizer folded into the row constants (dS in a rounding order of its
#     own: the deterministic bytes are expected to differ from the base's), checked against the
#     reference in both recipes, then timed against the base (harness, median of 10, two rounds).
# (2) the gpu suite of the carried build (v105 as the default) and racecheck of test_gpu_forward.
# (3) the acceptance figures with it: dev/sessions/forty-first_ratio.sh, 4 alternated rounds.
# Usage (device, repo root): bash dev/sessions/forty-second_first.sh > $OUT/first.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
bash dev/backward/variant_check.sh check_v105_nr_fold_on
echo "== (1) done at $(( $(date +%s) - t0 )) s"
echo "== gpu suite (the carried build: v105 as the default)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
echo "== (2) done at $(( $(date +%s) - t0 )) s"
echo "== acceptance figures (the carried build)"
timeout 200 bash dev/sessions/forty-first_ratio.sh
echo "== total $(( $(date +%s) - t0 )) s"
