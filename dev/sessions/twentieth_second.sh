#!/bin/bash
# The twentieth session's second device command (~8 min):
#  1. the gpu suite at the commit with v41 promoted (deterministic dQ by TMA reduce-adds),
#     test_gpu_ref64 now in it (9 tests);
#  2. where v41's +20..+32 % goes: dev/backward/v42_det_probe.patch, timing only, the
#     backward alone (mxfp8; the workloads of table_d_deterministic_cost), one build per
#     FLAMIA_DET_PROBE: 0 v41; 1 no turn waits (passes kept: their completion waits and
#     releases); 2 no turns (the deterministic instantiation: last-tile-first launch order,
#     dK's partial after dV); 5 as 2 in the default launch order; 3 v41 with the default
#     kernels' dK-before-dV order; 4 v41 with the spin out of line. Probe 0 again at the end
#     (drift). Predictions in docs/perf-notes.md "Twentieth session".
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentieth_second.sh > $OUT/second.log 2>&1
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
[ -n "${SKIP_SUITE:-}" ] || timeout 240 meson test -C $B --suite gpu --print-errorlogs > "$OUT/gpu_suite.log" 2>&1; echo "gpu suite rc=$?"
grep -E "^ *[0-9]+/[0-9]+ .*(OK|FAIL|TIMEOUT)|^Ok:|^Fail:|^Timeout:" "$OUT/gpu_suite.log" | head -12
[ -n "${SKIP_SUITE:-}" ] || cp $B/meson-logs/testlog.txt "$OUT/gpu_testlog.txt"
W=4x4096,16x4096,8192+224x256,gqa-16x1024
lat() { timeout 90 $B/experiments/latency/latency --workloads $W --recipes mxfp8 --passes bwd --warmup 3 --iters 20 \
          --verify-rows 0 --quiet "$@" 2>&1 | tail -1; }
git apply dev/backward/v42_det_probe.patch || { echo "patch does not apply"; exit 1; }
P=kernels/sm90/backward_fp8.cu
for m in 0 1 2 5 3 4 0; do
  sed -i "s/^#define FLAMIA_DET_PROBE .*/#define FLAMIA_DET_PROBE $m/" $P
  build || continue
  tag=$m; [ -f /tmp/probes/p$m.h5 ] && tag=${m}b
  [ $tag = 0 ] && lat --out /tmp/probes/default.h5
  lat --deterministic --out /tmp/probes/p$tag.h5
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
names = {"0": "v41", "1": "no waits", "2": "no turns", "5": "no turns, default order", "3": "v41 + dK first",
         "4": "v41, spin out of line", "0b": "v41 again"}
print("%-26s" % "backward ms (mxfp8)" + "".join("%18s" % w for w in base))
print("%-26s" % "default" + "".join("%18.3f" % v for v in base.values()))
for tag in ("0", "1", "2", "5", "3", "4", "0b"):
    f = "%s/p%s.h5" % (d, tag)
    if not os.path.exists(f):
        print("%-26s missing" % names[tag]); continue
    r = load(f)
    print("%-26s" % names[tag] + "".join("%10.3f %+6.1f%%" % (r[w], 100 * (r[w] / base[w] - 1)) if w in r else "%18s" % "-" for w in base))
PY
tar -C /tmp -cf "$OUT/probes.tar" probes
echo "total $(( $(date +%s) - t0 )) s"
