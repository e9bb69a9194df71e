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
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/twentyfirst_first.sh > $OUT/first.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT" /tmp/probes
B=build-device
LOG=/tmp/flamia-build.log
t0=$(date +%s)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 # cuBLAS
build() { ninja -C $B >>$LOG 2>&1 || { grep -E "error|FAILED" -A3 $LOG | head -40; return 1; }; }
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >$LOG 2>&1 || { tail -30 $LOG; exit 1; }
build || exit 1
echo "build ok ($(( $(date +%s) - t0 )) s)"
timeout 200 bash experiments/latency/device_run.sh sanitize 2>&1 | grep -v "^build ok"
echo "sanitize done ($(( $(date +%s) - t0 )) s)"
W=4x4096,16x4096,8192+224x256,gqa-16x1024
lat() { timeout 90 $B/experiments/latency/latency --workloads $W --recipes mxfp8 --passes bwd --warmup 3 --iters 20 \
          --verify-rows 0 --quiet "$@" 2>&1 | tail -1; }
git apply dev/backward/v43_det_probe.patch || { echo "patch does not apply"; exit 1; }
H=kernels/sm90/backward_common.cuh
for m in 0 1 2 4 0; do
  sed -i "s/^#define FLAMIA_DET_PROBE2 .*/#define FLAMIA_DET_PROBE2 $m/" $H
  build || continue
  tag=$m; [ -f /tmp/probes/p$m.h5 ] && tag=${m}b
  [ $tag = 0 ] && lat --out /tmp/probes/default.h5
  lat --deterministic --out /tmp/probes/p$tag.h5
  if [ $m = 4 ]; then
    timeout 120 $B/tests/gpu/test_gpu_backward > /tmp/probes/test4.log 2>&1; echo "probe 4 test_gpu_backward rc=$?"
    grep "deterministic dQ" /tmp/probes/test4.log | cut -c1-160
  fi
  echo "probe $tag timed ($(( $(date +%s) - t0 )) s)"
done
git checkout -- kernels
python3 - /tmp/probes <<'PY'
import sys, os, h5py
d = sys.argv[1]
def load(f):
    t = h5py.File(f, "r")["timings"]
    return {w.decode(): ms for w, s, ms in zip(t["workload"][...], t["system"][...], t["ms"][...])
            if s.decode().startswith("flamia-mxfp8")}
base = load(d + "/default.h5")
names = {"0": "HEAD", "1": "read, not completion", "2": "relaxed, no fence", "3": "both", "4": "pass before barrier",
         "0b": "HEAD again"}
print("%-26s" % "backward ms (mxfp8)" + "".join("%18s" % w for w in base))
print("%-26s" % "default" + "".join("%18.3f" % v for v in base.values()))
for tag in ("0", "1", "2", "4", "0b"):
    f = "%s/p%s.h5" % (d, tag)
    if not os.path.exists(f):
        print("%-26s missing" % names[tag]); continue
    r = load(f)
    print("%-26s" % names[tag] + "".join("%10.3f %+6.1f%%" % (r[w], 100 * (r[w] / base[w] - 1)) if w in r else "%18s" % "-" for w in base))
PY
tar -C /tmp -cf "$OUT/probes.tar" probes
echo "total $(( $(date +%s) - t0 )) s"
