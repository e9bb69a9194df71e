#!/bin/bash
# The twenty-first session's fourth device command (~3 min, the session's last device time):
# v45 (dev/backward/v45_det_release_probe.patch, timing only): does the deterministic pass's
# release wait for the pass thread's cp.async prefetch? Probes 0 (HEAD's kernel), 1, 0 again;
# 4x4096 and 16x4096 only. Prediction in the patch's header.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentyfirst_fourth.sh > $OUT/fourth.log 2>&1
set -u
. dev/device_lib.sh
rm -rf /tmp/probes; mkdir -p /tmp/probes
git apply dev/backward/v45_det_release_probe.patch || { echo "patch does not apply"; exit 1; }
dev_setup # probe 0: the patch's switch off, HEAD's kernel
lat() { timeout 60 $B/experiments/latency/latency --workloads 4x4096,16x4096 --recipes mxfp8 --passes bwd --warmup 3 \
          --iters 20 --verify-rows 0 --quiet "$@" 2>&1 | tail -1; }
F=kernels/sm90/backward_fp8.cu
lat --out /tmp/probes/default.h5
lat --deterministic --out /tmp/probes/p0.h5
for m in 1 0; do
  sed -i "s/^#define FLAMIA_DET_PROBE4 .*/#define FLAMIA_DET_PROBE4 $m/" $F
  dev_build || continue
  tag=$m; [ -f /tmp/probes/p$m.h5 ] && tag=${m}b
  lat --deterministic --out /tmp/probes/p$tag.h5
  echo "probe $tag timed ($(dev_elapsed) s)"
done
git apply -R dev/backward/v45_det_release_probe.patch
dev_bwd_probe_table /tmp/probes "0=HEAD" "1=pass threads load nothing" "0b=HEAD again"
echo "total $(dev_elapsed) s"
