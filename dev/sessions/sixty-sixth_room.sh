#!/bin/bash
# Sixty-sixth session: region dq_room (sm90_launch.h), which grows dq_accum's room until the default
# mode's split dQ fits in FLAMIA_SM90_DQ_ROOM_CHUNKS = 4 chunks, within 1/16 of the workspace before
# dq_accum. On these shapes it grows only where documents are 4,096 tokens (16 heads: +65.5 MB, 3.6 %,
# at 16x4096): 16x4096 and 8x4096 split in 4 chunks of 4 kv heads instead of 6 of 2-3; 4x4096 still
# misses the grid floor (4 x 132 CTAs); every other workload keeps its layout's plan.
# Carry build-carry (bash dev/carry_bins.sh) and .whl. Pass FLAMIA_GIT_COMMIT=<hash>.
# 1. every gpu test program (the layout changed for every kernel);
# 2. latency driver, room on (default) against off (FLAMIA_SM90_DQ_ROOM_CHUNKS=0, the sixty-fifth
#    session's default), two alternations, best of two;
# 3. the acceptance ratios, default mode (3 rounds).
# Predicted (from the sixty-fifth session's chunk curve: 4 chunks 0.890x the reduce-adds, 6 chunks 0.936x):
#   16x4096 backward on / off 0.94-0.96, training call 0.95-0.97; 8x4096 (off: reduce-adds) backward
#   0.92-0.97, training call 0.94-0.99; every other workload 0.99-1.01.
# Rule (before the run): the room stays the default if 16x4096's training call on / off <= 0.98 and no
# workload's is > 1.01 (best of two); else FLAMIA_SM90_DQ_ROOM_CHUNKS goes to 0.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in test_gpu_backward test_gpu_api test_gpu_forward test_gpu_quantize test_gpu_leak test_gpu_consistency \
         test_gpu_ref64 test_gpu_padded test_gpu_scale_shift test_gpu_e4m3_cvt; do
  s=$(date +%s); timeout 200 $C/tests/gpu/$t > $OUT/logs/$t.log 2>&1
  echo "$t rc=$? ($(( $(date +%s) - s )) s): $(tail -n 1 $OUT/logs/$t.log | cut -c1-150)"
done
grep -oE "\| dQ [a-zA-Z0-9(), -]+$" $OUT/logs/test_gpu_backward.log | sort | uniq -c
A="--workloads 16x4096,8x4096,4x4096,16x1024,64x1024,32x2048,128x512,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in on off on2 off2; do
  case $m in off*) export FLAMIA_SM90_DQ_ROOM_CHUNKS=0 ;; *) unset FLAMIA_SM90_DQ_ROOM_CHUNKS ;; esac
  timeout 120 $C/experiments/latency/latency --backend cuda $A --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$?"
done
unset FLAMIA_SM90_DQ_ROOM_CHUNKS
python3 - $OUT/logs <<'PY'
import sys, h5py
d = sys.argv[1]; t = {}; ws = []
for m in ("on", "off", "on2", "off2"):
    h = h5py.File("%s/lat_%s.h5" % (d, m))["timings"]
    for i in range(h["ms"].shape[0]):
        w = h["workload"][i].decode()
        if w not in ws: ws.append(w)
        t[(w, h["pass"][i].decode(), m)] = h["ms"][i]
print("| workload | pass | on (2 runs) | off (2 runs) | on / off (best of 2) |")
for w in ws:
    for p in ("bwd", "train"):
        a = [t.get((w, p, m)) for m in ("on", "on2")]; b = [t.get((w, p, m)) for m in ("off", "off2")]
        if None in a + b: continue
        print("| %s | %s | %.3f %.3f | %.3f %.3f | %.3f |" % (w, p, a[0], a[1], b[0], b[1], min(a) / min(b)))
PY
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "tests and A/B done ($(( $(date +%s) - t0 )) s)"
MODES=default bash dev/sessions/sixty-fifth_ratios.sh
echo "done ($(( $(date +%s) - t0 )) s)"
