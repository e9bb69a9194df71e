#!/bin/bash
# The nineteenth session's second device command (~7 min):
#  1. the gpu suite with the deterministic dQ order reversed (key tiles last .. 0,
#     backward_common.cuh dq_turn_wait) and its new cases (non-causal; one document of
#     20,000 tokens, whose CTAs outnumber what the GPU holds at once: a hang if the order
#     could deadlock);
#  2. deterministic dQ's cost again on the workloads of dev/sessions/nineteenth_first.sh (+74..+120 %
#     with the ascending order at d6e2faf);
#  3. the accuracy driver at the paper's sizes on the 7 workloads whose FP64 oracle takes
#     under a minute on 16 cores (16x4096 took 107 s, logu-64k over 220 s: both runs of
#     nineteenth_first timed out there) -> $OUT/accuracy_full_gpu.h5.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/nineteenth_det.sh > $OUT/det.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
t0=$(date +%s)
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
ninja -C $B >>"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok ($(( $(date +%s) - t0 )) s)"
timeout 200 meson test -C $B --suite gpu --print-errorlogs > "$OUT/gpu_suite.log" 2>&1; echo "gpu suite rc=$?"
grep -E "^ *[0-9]+/[0-9]+ .*(OK|FAIL|TIMEOUT)|^Ok:|^Fail:|^Timeout:" "$OUT/gpu_suite.log" | head -12
grep -h "deterministic dQ" $B/meson-logs/testlog.txt | head -12
for det in "" --deterministic; do
  timeout 120 $B/experiments/latency/latency --workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact \
    --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet $det --out "$OUT/det${det:+-on}.h5" 2>&1 | tail -2
done
python3 - "$OUT/det.h5" "$OUT/det-on.h5" <<'PY'
import sys, h5py
rows = {}
for f in sys.argv[1:]:
    t = h5py.File(f, "r")["timings"]
    for w, s, ms in zip(t["workload"][...], t["system"][...], t["ms"][...]):
        rows.setdefault(w.decode(), {})[s.decode()] = ms
for w, r in rows.items():
    for rec in ("mxfp8", "mxfp8-exact"):
        a, b = r.get("flamia-" + rec), r.get("flamia-" + rec + "-det")
        if a and b:
            print("deterministic dQ %-14s %-11s bwd %.3f -> %.3f ms (%+.1f %%)" % (w, rec, a, b, 100 * (b / a - 1)))
        else:
            print("deterministic dQ %-14s %-11s missing: %s" % (w, rec, r))
PY
left=$(( 500 - ($(date +%s) - t0) )); [ $left -gt 30 ] || left=30
echo "accuracy: $left s left"
timeout $left $B/experiments/accuracy --backend cuda --seed 1 --scale 1 --heads 16 --outliers 0 \
  --workloads 4x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,gqa-16x1024 \
  --out "$OUT/accuracy_full_gpu.h5" 2>"$OUT/accuracy_full_gpu.log"; echo "accuracy full: rc=$?"
tr '\r' '\n' < "$OUT/accuracy_full_gpu.log" | tail -2
[ -f "$OUT/accuracy_full_gpu.h5" ] && $B/experiments/h5totsv "$OUT/accuracy_full_gpu.h5" /tmp/af >/dev/null &&
  cut -f1,2,3,7-10 /tmp/af/accuracy.tsv
echo "total $(( $(date +%s) - t0 )) s"
