#!/bin/bash
# For the next session's first device command (~5 min): what the eighteenth session could
# not run for lack of device time.
#  1. test_gpu_api with its new case: the training call from a thread with no CUDA context
#     (the library now binds the primary context there; kernels/sm90/cuda_api.cu);
#  2. examples/torch_attention.py on its default pack (1-token document, GQA 16/4), whose
#     backward was refused from autograd's thread before that fix, for the three recipes;
#  3. deterministic dQ's cost on the current kernel (Table D's row: paper +5-12 % MHA, +20-34 %
#     GQA; ours was measured only on v3, +37 %): the backward alone, default and
#     deterministic, mxfp8, on 4x4096, 16x4096, 8192+224x256 and gqa-16x1024;
#  4. the accuracy driver on the kernels at the paper's sizes (scale 1, 16 heads, plain
#     randn), now that the FP64 ground truth is parallel and tiled (~40x faster on 16 cores
#     than the single-threaded one that timed out after two workloads).
# Ship: $OUT/accuracy_full_gpu.h5 -> data/measured/h200/ (pipelines/config.yaml accuracy_full_gpu,
# paper_tables/accuracy_gpu_full*).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/nineteenth_first.sh > $OUT/first.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
t0=$(date +%s)
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
ninja -C $B kernels/libflamia.so tests/gpu/test_gpu_api experiments/accuracy experiments/h5totsv experiments/latency/latency >>"$OUT/build.log" 2>&1 \
  || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok ($(( $(date +%s) - t0 )) s)"
$B/tests/gpu/test_gpu_api > "$OUT/test_gpu_api.log" 2>&1; echo "test_gpu_api rc=$?"
grep -E "new thread|FAIL|ok$" "$OUT/test_gpu_api.log" | head -10
for r in mxfp8 mxfp8-exact bf16; do
  python3 examples/torch_attention.py --lib $B/kernels/libflamia.so --recipe $r 2>&1 | tail -7
done
for det in "" --deterministic; do
  timeout 120 $B/experiments/latency/latency --workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8 \
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
    a, b = r.get("flamia-mxfp8"), r.get("flamia-mxfp8-det")
    if a and b:
        print("deterministic dQ %-14s bwd %.3f -> %.3f ms (%+.1f %%)" % (w, a, b, 100 * (b / a - 1)))
    else:
        print("deterministic dQ %-14s missing: %s" % (w, r))
PY
left=$(( 560 - ($(date +%s) - t0) )); [ $left -gt 30 ] || left=30
timeout $left $B/experiments/accuracy --backend cuda --seed 1 --scale 1 --heads 16 --outliers 0 \
  --out "$OUT/accuracy_full_gpu.h5" 2>"$OUT/accuracy_full_gpu.log"; echo "accuracy full: rc=$?"
tail -2 "$OUT/accuracy_full_gpu.log"
[ -f "$OUT/accuracy_full_gpu.h5" ] && $B/experiments/h5totsv "$OUT/accuracy_full_gpu.h5" /tmp/af >/dev/null &&
  cut -f1,2,3,7-10 /tmp/af/accuracy.tsv
echo "total $(( $(date +%s) - t0 )) s"
