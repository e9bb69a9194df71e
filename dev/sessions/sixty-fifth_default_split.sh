#!/bin/bash
# Sixty-fifth session: the split dQ in the default mode, in dq_accum's room (which the split leaves
# unused: no workspace beyond the default's), where it takes at most FLAMIA_SM90_DQ_SPLIT_CHUNKS
# chunks (default FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS = 6; 0: the reduce-adds as before).
# Carried: build-carry (bash dev/carry_bins.sh), dev/backward/bin/check_backward. FLAMIA_GIT_COMMIT=<hash>.
# 1. gpu tests whose default-mode backward now takes the split: test_gpu_backward (its reduce-adds
#    cases forced with the split off, its deterministic cases with a run in dq_accum's room),
#    test_gpu_api, test_gpu_leak, test_gpu_consistency, test_gpu_padded, test_gpu_scale_shift.
# 2. The chunk curve at 16x4096 (harness, whole backward, median of 5; chunks balanced): the
#    reduce-adds, and the split in 1, 2, 3, 4, 6, 8 chunks.
# 3. The training call and the backward alone, latency driver, 9 workloads, the default mode with
#    the split on (K = 6) and off (FLAMIA_SM90_DQ_SPLIT_CHUNKS=0), same machine start.
# Rule (written before the run): K = the most chunks whose 16x4096 split backward is <= 0.95 x the
# reduce-adds'; keep the default-mode split only if no workload's training call is slower with it
# than without and those that take it are faster. Predicted (H100): 6 balanced chunks ~7.6-7.8 ms
# against ~8.45 (-8..-10 %); 16x4096 / 4x4096 take 6 chunks, 16x1024 / 64x1024 / gqa-16x1024 2; the
# packed workloads keep the reduce-adds (their bound from max_seqlen wants 8-16 chunks or more).
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry B=dev/backward/bin
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gpu_backward test_gpu_api test_gpu_leak test_gpu_consistency test_gpu_padded test_gpu_scale_shift; do
  s=$(date +%s); timeout 200 $C/tests/gpu/$t > $OUT/logs/$t.log 2>&1
  echo "$t rc=$? ($(( $(date +%s) - s )) s): $(tail -n 1 $OUT/logs/$t.log | cut -c1-150)"
done
grep -E "FAIL" $OUT/logs/test_gpu_backward.log | cut -c1-200 | head -8
grep -oE "\| dQ [a-zA-Z0-9(), -]+$" $OUT/logs/test_gpu_backward.log | sort | uniq -c
grep -oE "default mode [^;]*$" $OUT/logs/test_gpu_backward.log | sort | uniq -c
tm() { GPU_FWD=1 timeout 120 $B/check_backward mxfp8 $1 16 16 1 none 5 2>&1 | grep -oE 'dQ split: .*|bwd [0-9.]+ ms [0-9.]+ TFLOP/s' | tr '\n' ' '; }
{
  echo "16x4096 adds:          $(FLAMIA_SM90_DQ_SPLIT_CHUNKS=0 tm 16x4096)"
  echo "16x4096 default (K=6): $(tm 16x4096)"
  for n in 16 8 6 4 3 2; do echo "16x4096 det, <= $n kv heads a chunk: $(BWD_DET=1 BWD_SPLIT=$n tm 16x4096)"; done
  echo "16x4096 adds (again):  $(FLAMIA_SM90_DQ_SPLIT_CHUNKS=0 tm 16x4096)"
} 2>&1 | tee $OUT/logs/curve.log
echo "curve done ($(( $(date +%s) - t0 )) s)"
A="--workloads 16x4096,4x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in on off on2 off2; do
  case $m in off*) export FLAMIA_SM90_DQ_SPLIT_CHUNKS=0 ;; *) unset FLAMIA_SM90_DQ_SPLIT_CHUNKS ;; esac
  timeout 150 $C/experiments/latency/latency --backend cuda $A --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$?"
done
unset FLAMIA_SM90_DQ_SPLIT_CHUNKS
python3 - $OUT/logs <<'PY'
import sys, h5py
d = sys.argv[1]; t = {}
for m in ("on", "off", "on2", "off2"):
    h = h5py.File("%s/lat_%s.h5" % (d, m))["timings"]
    for i in range(h["ms"].shape[0]):
        t[(h["workload"][i].decode(), h["pass"][i].decode(), m)] = h["ms"][i]
ws = sorted({k[0] for k in t}, key=lambda w: [k[0] for k in t].index(w))
print("| workload | pass | split on (2 runs) | off (2 runs) | on / off |")
for w in ws:
    for p in ("bwd", "train"):
        a = [t.get((w, p, m)) for m in ("on", "on2")]; b = [t.get((w, p, m)) for m in ("off", "off2")]
        if None in a + b: continue
        print("| %s | %s | %.3f %.3f | %.3f %.3f | %.3f |" % (w, p, a[0], a[1], b[0], b[1], min(a) / min(b)))
PY
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(( $(date +%s) - t0 )) s)"
