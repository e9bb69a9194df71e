#!/bin/bash
# The next session's first device command (~6 min): v41 (dev/backward/v41_det_tma.patch),
# deterministic dQ by TMA reduce-adds with the turn passed one sub-step late.
#  1. HEAD: the backward alone, default and deterministic (mxfp8, mxfp8-exact; the workloads
#     of table_d_deterministic_cost);
#  2. the patch applied, rebuilt: the gpu tests that use the deterministic mode
#     (test_gpu_backward: two runs bit-identical, non-causal, a 20,000-token document that
#     hangs if the order can deadlock; test_gpu_scale_shift; test_gpu_api), then the same
#     timing; the patch is reverted at the end.
# Promote v41 (apply, commit, regenerate data/measured/h200/deterministic_*.h5 from its
# det-v41*.h5) only if every test passes and its deterministic cost is lower.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/twentieth_first.sh > $OUT/first.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
t0=$(date +%s)
W=4x4096,16x4096,8192+224x256,gqa-16x1024
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
ninja -C $B >>"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok ($(( $(date +%s) - t0 )) s)"
timing() { # $1: file stem
  for det in "" --deterministic; do
    timeout 120 $B/experiments/latency/latency --workloads $W --recipes mxfp8,mxfp8-exact \
      --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet $det --out "$OUT/$1${det:+-on}.h5" 2>&1 | tail -1
  done
}
timing det-head
git apply dev/backward/v41_det_tma.patch || { echo "patch does not apply"; exit 1; }
ninja -C $B >>"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -40; git apply -R dev/backward/v41_det_tma.patch; exit 1; }
echo "v41 built ($(( $(date +%s) - t0 )) s)"
for t in test_gpu_backward test_gpu_scale_shift test_gpu_api; do
  timeout 200 $B/tests/gpu/$t > "$OUT/v41_$t.log" 2>&1; echo "v41 $t rc=$?"
done
grep -h "deterministic dQ" "$OUT/v41_test_gpu_backward.log" | cut -c1-200
timing det-v41
git apply -R dev/backward/v41_det_tma.patch
python3 - "$OUT" <<'PY'
import sys, h5py
out = sys.argv[1]
def load(f):
    t = h5py.File(f, "r")["timings"]
    return {(w.decode(), s.decode()): ms for w, s, ms in zip(t["workload"][...], t["system"][...], t["ms"][...])}
for build in ("head", "v41"):
    a, b = load("%s/det-%s.h5" % (out, build)), load("%s/det-%s-on.h5" % (out, build))
    for (w, s), ms in sorted(a.items()):
        d = b.get((w, s + "-det"))
        print("%-4s %-14s %-18s bwd %.3f  deterministic %s" % (build, w, s, ms,
              "%.3f (%+.1f %%)" % (d, 100 * (d / ms - 1)) if d else "missing"))
PY
echo "total $(( $(date +%s) - t0 )) s"
