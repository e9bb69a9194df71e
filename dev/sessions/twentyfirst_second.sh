#!/bin/bash
# The twenty-first session's second device command (~8 min):
#  1. v44 (dev/backward/v44_det_fence_probe.patch): which fence of the deterministic mode's
#     pass costs (v43: removing both the proxy fence and the release bought -7.5 points at
#     16x4096; waiting for the add's source read instead of its completion bought nothing).
#     Probes 0 HEAD, 1 no proxy fence in the pass (deterministic: then test_gpu_backward),
#     2 as 1 and none after the wait (timing only), 3 proxy fence kept, relaxed add (timing
#     only), 0 again (drift). The .cu files are touched after each edit of the header: the
#     local meson (1.0.1) records no header dependencies for CUDA objects.
#  2. the forward softmax-stream probes (dev/sessions/twentyfirst_fwd.sh; carry dev/forward/bin).
# Predictions (written before the run): 1 -5..-8 points if the proxy fence is the cost, ~0 if
# the release is; 3 the complement of 1 (the two sum to about v43's -7.5); 2 -0..-4 more.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentyfirst_second.sh > $OUT/second.log 2>&1
set -u
. dev/device_lib.sh # OUT, B, dev_setup, dev_build, dev_elapsed, dev_bwd_probe_table
rm -rf /tmp/probes; mkdir -p /tmp/probes
dev_setup
echo "meson $(meson --version); CUDA objects without header deps: $(ninja -C $B -t deps | grep -c "cu.o: #deps 0")"
W=4x4096,16x4096,8192+224x256,gqa-16x1024
lat() { timeout 90 $B/experiments/latency/latency --workloads $W --recipes mxfp8 --passes bwd --warmup 3 --iters 20 \
          --verify-rows 0 --quiet "$@" 2>&1 | tail -1; }
git apply dev/backward/v44_det_fence_probe.patch || { echo "patch does not apply"; exit 1; }
H=kernels/sm90/backward_common.cuh
for m in 0 1 2 3 0; do
  sed -i "s/^#define FLAMIA_DET_PROBE3 .*/#define FLAMIA_DET_PROBE3 $m/" $H
  touch kernels/sm90/*.cu
  dev_build || continue
  tag=$m; [ -f /tmp/probes/p$m.h5 ] && tag=${m}b
  [ $tag = 0 ] && lat --out /tmp/probes/default.h5
  lat --deterministic --out /tmp/probes/p$tag.h5
  if [ $m = 1 ]; then
    timeout 120 $B/tests/gpu/test_gpu_backward > /tmp/probes/test1.log 2>&1; echo "probe 1 test_gpu_backward rc=$?"
    grep "deterministic dQ" /tmp/probes/test1.log | cut -c1-140
  fi
  echo "probe $tag timed ($(dev_elapsed) s)"
done
sed -i "s/^#define FLAMIA_DET_PROBE3 .*/#define FLAMIA_DET_PROBE3 0/" $H
git apply -R dev/backward/v44_det_fence_probe.patch # HEAD's kernels again
dev_bwd_probe_table /tmp/probes "0=HEAD" "1=no proxy fence in pass" "2=1 + none after wait" "3=fence, relaxed add" \
  "0b=HEAD again"
tar -C /tmp -cf "$OUT/probes2.tar" probes
echo "backward probes done ($(dev_elapsed) s)"
timeout 240 bash dev/sessions/twentyfirst_fwd.sh
echo "total $(dev_elapsed) s"
