#!/bin/bash
# The next session's first device command (~8 min). Compiled in the nineteenth session,
# never run (its device time was spent):
#  1. v41 (dev/backward/v41_det_tma.patch): deterministic dQ by TMA reduce-adds, the turn
#     passed a sub-step late. HEAD first: the backward alone, default and deterministic
#     (mxfp8, mxfp8-exact; the workloads of table_d_deterministic_cost); then the patch
#     applied and rebuilt: the gpu tests that use the deterministic mode (test_gpu_backward:
#     two runs bit-identical, non-causal, a 20,000-token document that hangs if the order
#     can deadlock; test_gpu_scale_shift; test_gpu_api) and the same timing; then reverted.
#  2. the FP64 ground truth on the GPU (flamia_cuda_ref64): test_gpu_ref64 against the
#     CPU's, then the accuracy driver at the paper's sizes on all nine workloads with
#     --oracle gpu -> $OUT/accuracy_full_gpu.h5.
# Then: promote v41 (apply, commit, ship its det-v41*.h5 as data/measured/h200/deterministic_*.h5)
# only if every test passes and its deterministic cost is lower; if test_gpu_ref64 passes,
# ship accuracy_full_gpu.h5 and set pipelines/config.yaml's accuracy_full_gpu to the nine
# workloads with --oracle gpu. At most 8 files come back: 7 here.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentieth_first.sh > $OUT/first.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
LOG=/tmp/flamia-build.log
t0=$(date +%s)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64 # cuBLAS
build() { ninja -C $B >>$LOG 2>&1 || { grep -E "error|FAILED" -A3 $LOG | head -40; return 1; }; }
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >$LOG 2>&1 || { tail -30 $LOG; exit 1; }
build || exit 1
echo "build ok ($(( $(date +%s) - t0 )) s)"
W=4x4096,16x4096,8192+224x256,gqa-16x1024
timing() { # $1: file stem
  for det in "" --deterministic; do
    timeout 120 $B/experiments/latency/latency --workloads $W --recipes mxfp8,mxfp8-exact \
      --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet $det --out "$OUT/$1${det:+-on}.h5" 2>&1 | tail -1
  done
}
timing det-head
git apply dev/backward/v41_det_tma.patch || { echo "patch does not apply"; exit 1; }
build || { git apply -R dev/backward/v41_det_tma.patch; exit 1; }
echo "v41 built ($(( $(date +%s) - t0 )) s)"
for t in test_gpu_backward test_gpu_scale_shift test_gpu_api; do
  echo "== v41 $t" >> "$OUT/tests.log"
  timeout 200 $B/tests/gpu/$t >> "$OUT/tests.log" 2>&1; echo "v41 $t rc=$?"
done
grep -h "deterministic dQ" "$OUT/tests.log" | cut -c1-200
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
build || exit 1 # HEAD's kernels again
python3 examples/torch_attention.py --lib $B/kernels/libflamia.so --recipe mxfp8 --deterministic 2>&1 | tail -3
echo "== test_gpu_ref64" >> "$OUT/tests.log"
timeout 200 $B/tests/gpu/test_gpu_ref64 >> "$OUT/tests.log" 2>&1; echo "test_gpu_ref64 rc=$?"
grep -A8 "== test_gpu_ref64" "$OUT/tests.log" | tail -7
left=$(( 560 - ($(date +%s) - t0) )); [ $left -gt 30 ] || left=30
timeout $left $B/experiments/accuracy --backend cuda --oracle gpu --seed 1 --scale 1 --heads 16 --outliers 0 \
  --out "$OUT/accuracy_full_gpu.h5" 2>/tmp/accuracy_full_gpu.log; echo "accuracy full (oracle gpu): rc=$?"
tr '\r' '\n' < /tmp/accuracy_full_gpu.log | tail -2
[ -f "$OUT/accuracy_full_gpu.h5" ] && $B/experiments/h5totsv "$OUT/accuracy_full_gpu.h5" /tmp/af >/dev/null &&
  cut -f1,2,3,7-10,18 /tmp/af/accuracy.tsv
echo "total $(( $(date +%s) - t0 )) s"
