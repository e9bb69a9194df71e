#!/bin/bash
# Sixty-sixth session: rule E for the default mode's split dQ, set from sixty-sixth_split_order.sh:
# longest first for GQA groups of >= 4 (MHA stays in the grid's order: longest first cost it 4-11 %),
# and the grid floor 4 CTAs an SM in the grid's order (4x4096's 4 chunks of 528: 0.951x), 2 longest first
# (gqa-16x1024's 2 chunks of 288: 0.833x). Against A (today's: FLAMIA_SM90_SPLIT_ORDER=0,
# FLAMIA_SM90_DQ_SPLIT_MIN_CTAS=8). Carry build-carry and .whl. Pass FLAMIA_GIT_COMMIT=<hash>.
# 1. gpu tests (the GQA groups of 4 now take the ordered split in test_gpu_backward's default and
#    deterministic runs);
# 2. latency driver, E against A, two alternations, best of two; then the deterministic mode's GQA
#    (ordered under E) against its grid order;
# 3. the acceptance ratios, default mode (3 rounds).
# Shapes that set E: 4x4096, gqa-16x1024. Validation shapes, new to E (path changes under E), predicted
# training call E / A (backward in brackets):
#   6x4096 (4 chunks, 6 CTAs an SM, grid order) 0.93-0.97 (0.90-0.95); 8x2048 (3 chunks, 5.2) 0.92-0.97
#   (0.88-0.95); 8x1024 (2 chunks, 4.4) 0.95-1.00 (0.92-1.00); gqa-16x2048 (4 chunks, 2.1, ordered)
#   0.82-0.93 (0.75-0.90); gqa-32x1024 (2 chunks, 4.4, ordered) 0.82-0.90 (0.75-0.85).
# Controls (no path change): 16x4096, 16x1024, 64x1024, 2x4096 (under both floors), gqa-8x1024 (likewise),
# 8192+224x256: 0.99-1.01.
# Rule (before the run): E stays the default if no workload's training call is > 1.01x A's and each of
# the five validation shapes is <= 1.00x; else A's order and floor return.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gpu_backward test_gpu_api test_gpu_padded test_gpu_scale_shift test_gpu_leak test_gpu_consistency; do
  s=$(date +%s); timeout 200 $C/tests/gpu/$t > $OUT/logs/$t.log 2>&1
  echo "$t rc=$? ($(( $(date +%s) - s )) s): $(tail -n 1 $OUT/logs/$t.log | cut -c1-150)"
done
grep -oE "\| dQ [a-zA-Z0-9(), -]+$" $OUT/logs/test_gpu_backward.log | sort | uniq -c
W="--workloads 4x4096,gqa-16x1024,6x4096,8x2048,8x1024,gqa-16x2048,gqa-32x1024,16x4096,16x1024,64x1024,2x4096,gqa-8x1024,8192+224x256 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in E A E2 A2; do
  case $m in A*) export FLAMIA_SM90_SPLIT_ORDER=0 FLAMIA_SM90_DQ_SPLIT_MIN_CTAS=8 ;; *) unset FLAMIA_SM90_SPLIT_ORDER FLAMIA_SM90_DQ_SPLIT_MIN_CTAS ;; esac
  timeout 150 $C/experiments/latency/latency --backend cuda $W --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$?"
done
unset FLAMIA_SM90_SPLIT_ORDER FLAMIA_SM90_DQ_SPLIT_MIN_CTAS
WD="--workloads gqa-16x1024,gqa-32x1024 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0 --deterministic"
for m in dE dA dE2 dA2; do
  case $m in dA*) export FLAMIA_SM90_SPLIT_ORDER=0 ;; *) unset FLAMIA_SM90_SPLIT_ORDER ;; esac
  timeout 60 $C/experiments/latency/latency --backend cuda $WD --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$?"
done
unset FLAMIA_SM90_SPLIT_ORDER
python3 - $OUT/logs <<'PY'
import sys, h5py
d = sys.argv[1]
def load(ms):
    t = {}; ws = []
    for m in ms:
        h = h5py.File("%s/lat_%s.h5" % (d, m))["timings"]
        for i in range(h["ms"].shape[0]):
            w = h["workload"][i].decode()
            if w not in ws: ws.append(w)
            t[(w, h["pass"][i].decode(), m)] = h["ms"][i]
    return t, ws
for (a, b, title) in (("E", "A", "default mode"), ("dE", "dA", "deterministic mode")):
    t, ws = load((a, b, a + "2", b + "2"))
    print("%s: | workload | pass | E (2 runs) | A (2 runs) | E / A (best of 2) |" % title)
    for w in ws:
        for p in ("bwd", "train"):
            x = [t[(w, p, a)], t[(w, p, a + "2")]]; y = [t[(w, p, b)], t[(w, p, b + "2")]]
            print("| %s | %s | %.3f %.3f | %.3f %.3f | %.3f |" % (w, p, x[0], x[1], y[0], y[1], min(x) / min(y)))
PY
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "tests and A/B done ($(( $(date +%s) - t0 )) s)"
MODES=default bash dev/sessions/sixty-fifth_ratios.sh
echo "done ($(( $(date +%s) - t0 )) s)"
