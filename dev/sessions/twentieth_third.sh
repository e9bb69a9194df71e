#!/bin/bash
# The twentieth session's third device command (~4 min): the deterministic kernels issue
# dK's first partial before dV as the default kernels do (v42 probe 3: -2.6 points at
# 16x4096): the gpu suite, then table_d_deterministic_cost's timing (the backward alone,
# mxfp8 and mxfp8-exact, default and --deterministic) -> $OUT/deterministic_{default,on}.h5.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentieth_third.sh > $OUT/third.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
LOG=/tmp/flamia-build.log
t0=$(date +%s)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 # cuBLAS
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >$LOG 2>&1 || { tail -30 $LOG; exit 1; }
ninja -C $B >>$LOG 2>&1 || { grep -E "error|FAILED" -A3 $LOG | head -40; exit 1; }
echo "build ok ($(( $(date +%s) - t0 )) s)"
timeout 240 meson test -C $B --suite gpu --print-errorlogs > "$OUT/gpu_suite.log" 2>&1; echo "gpu suite rc=$?"
grep -E "^ *[0-9]+/[0-9]+ .*(OK|FAIL|TIMEOUT)|^Ok:|^Fail:|^Timeout:" "$OUT/gpu_suite.log" | head -12
cp $B/meson-logs/testlog.txt "$OUT/gpu_testlog.txt"
grep -h "deterministic dQ" "$OUT/gpu_testlog.txt" | cut -c1-200
for det in "" --deterministic; do
  timeout 120 $B/experiments/latency/latency --workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact \
    --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet $det --out "$OUT/deterministic_$([ -n "$det" ] && echo on || echo default).h5" 2>&1 | tail -1
done
python3 - "$OUT" <<'PY'
import sys, h5py
out = sys.argv[1]
def load(f):
    t = h5py.File(f, "r")["timings"]
    return {(w.decode(), s.decode()): ms for w, s, ms in zip(t["workload"][...], t["system"][...], t["ms"][...])}
a, b = load(out + "/deterministic_default.h5"), load(out + "/deterministic_on.h5")
for (w, s), ms in sorted(a.items()):
    d = b.get((w, s + "-det"))
    print("%-14s %-18s bwd %.3f  deterministic %s" % (w, s, ms, "%.3f (%+.1f %%)" % (d, 100 * (d / ms - 1)) if d else "missing"))
PY
echo "total $(( $(date +%s) - t0 )) s"
