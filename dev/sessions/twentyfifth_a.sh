#!/bin/bash
# Twenty-fifth session, first device command (~6 min, dev/backward/bin carried, built here
# at the head and with dev/backward/v73_tma_rows.patch):
# (1) the head (dade4a7: one dq_adds_per_warp() for the kernel's dQ adds and the host's dQ
#     map; the host change had not run on a GPU): the gpu suite and compute-sanitizer
#     (experiments/latency/device_run.sh tests sanitize);
# (2) v73 applied to the same build dir: the backward's gpu tests (test_gpu_backward,
#     test_gpu_consistency, test_gpu_scale_shift), then reverted;
# (3) a fresh ncu stall profile of the head's main kernel (dev/backward/profile.sh on
#     check_head, mxfp8, 4x4096 as the sixteenth session's) -> $OUT/ncu_bwd*.
# Logs into $OUT/logs.tgz (the device brings back at most 8 files).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentyfifth_a.sh > $OUT/run.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
export OMP_NUM_THREADS=16
KEEP_LOGS=1 bash experiments/latency/device_run.sh tests sanitize
P=dev/backward/v73_tma_rows.patch
if git apply $P; then
  ninja -C build-device > /tmp/v73_build.log 2>&1 || tail -20 /tmp/v73_build.log
  for t in test_gpu_backward test_gpu_consistency test_gpu_scale_shift; do
    build-device/tests/gpu/$t > $OUT/v73_$t.log 2>&1; echo "v73 $t: rc=$?"
    grep -hE "FAIL|failures|bit-exact|relL2 \(max\)" $OUT/v73_$t.log | cut -c1-200 | tail -6
  done
  git apply -R $P
else
  echo "v73 does not apply"
fi
bash dev/backward/profile.sh check_head mxfp8 "4x4096 16 16 1"
cd "$OUT" && f=$(ls *.log *.txt 2>/dev/null | grep -v '^run.log$'); tar czf logs.tgz $f && rm -f $f
