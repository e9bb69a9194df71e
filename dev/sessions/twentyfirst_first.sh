#!/bin/bash
# The next session's first device command (~7 min). Prepared in the twentieth session:
#  1. compute-sanitizer memcheck + racecheck on the small cases, now with
#     test_gpu_scale_shift, which runs the deterministic-dQ kernels (v41: TMA reduce-adds
#     taken in turn; never under the sanitizer yet);
#  2. v43 (dev/backward/v43_det_probe.patch): where the deterministic mode's passes cost
#     (~9 points of its +26 % at 16x4096, perf-notes twentieth session). One build per
#     FLAMIA_DET_PROBE2, the backward alone (mxfp8; the workloads of
#     table_d_deterministic_cost): 0 HEAD; 1 the pass waits for the add's source read, not
#     its completion; 2 no proxy fence, a relaxed add (1, 2 timing only: they may
#     reorder dQ's adds; the patch's 3, both, is not run); 4 the previous turn passed
#     before the sub-step's CTA barrier (deterministic; then test_gpu_backward, which
#     checks two runs bit-identical). Probe 0 again at the end (drift).
# Predictions (written before the run): 1 -3..-9 points if the add's completion latency
# is the cost (dev/det_turn_model.py fits L ~ 4.8 us against a 4.3 us sub-step); 2 -0..-2
# (a release per sub-step); 4 between -3 (the stall hidden by the warps' wait at the CTA
# barrier) and +18 points (the model: the stall starts 0.2 sub-steps earlier, serially).
# Promote 4 only if it is faster than 0 beyond the drift and test_gpu_backward passes.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentyfirst_first.sh > $OUT/first.log 2>&1
set -u
. dev/device_lib.sh # OUT, B, dev_setup, dev_build, dev_elapsed, dev_bwd_probe_table
mkdir -p /tmp/probes
dev_setup
timeout 200 bash experiments/latency/device_run.sh sanitize 2>&1 | grep -v "^build ok"
echo "sanitize done ($(dev_elapsed) s)"
W=4x4096,16x4096,8192+224x256,gqa-16x1024
lat() { timeout 90 $B/experiments/latency/latency --workloads $W --recipes mxfp8 --passes bwd --warmup 3 --iters 20 \
          --verify-rows 0 --quiet "$@" 2>&1 | tail -1; }
git apply dev/backward/v43_det_probe.patch || { echo "patch does not apply"; exit 1; }
H=kernels/sm90/backward_common.cuh
for m in 0 1 2 4 0; do
  sed -i "s/^#define FLAMIA_DET_PROBE2 .*/#define FLAMIA_DET_PROBE2 $m/" $H
  dev_build || continue
  tag=$m; [ -f /tmp/probes/p$m.h5 ] && tag=${m}b
  [ $tag = 0 ] && lat --out /tmp/probes/default.h5
  lat --deterministic --out /tmp/probes/p$tag.h5
  if [ $m = 4 ]; then
    timeout 120 $B/tests/gpu/test_gpu_backward > /tmp/probes/test4.log 2>&1; echo "probe 4 test_gpu_backward rc=$?"
    grep "deterministic dQ" /tmp/probes/test4.log | cut -c1-160
  fi
  echo "probe $tag timed ($(dev_elapsed) s)"
done
sed -i "s/^#define FLAMIA_DET_PROBE2 .*/#define FLAMIA_DET_PROBE2 0/" $H
git apply -R dev/backward/v43_det_probe.patch # HEAD's kernels again
dev_bwd_probe_table /tmp/probes "0=HEAD" "1=read, not completion" "2=relaxed, no fence" "4=pass before barrier" \
  "0b=HEAD again"
tar -C /tmp -cf "$OUT/probes.tar" probes
echo "total $(dev_elapsed) s"
