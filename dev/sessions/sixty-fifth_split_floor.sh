#!/bin/bash
# Sixty-fifth session, last: the default mode's split with a grid floor (sm90_launch.h: a chunk's grid
# must hold FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_PER_SM = 8 CTAs an SM), opted in at 6 chunks
# (FLAMIA_SM90_DQ_SPLIT_CHUNKS=6) against off (=0), latency driver, two alternations, same machine.
# Carry build-carry. FLAMIA_GIT_COMMIT=<hash>.
# The floor came from the previous run's data (4x4096 lost in 6 chunks of 264-396 CTAs, 16x4096 gained
# in 6 of 1056-1584), so the run adds shapes that did not set it: 32x2048 (3 chunks, 2720 CTAs a chunk:
# takes it), 128x512 (1 chunk: takes it), 8x4096 (6 chunks of 528: not).
# Predicted, training call on / off: 16x4096 ~0.96, 16x1024 ~0.98, 64x1024 ~0.93, 32x2048 0.93-0.95,
# 128x512 0.90-0.94; the others (no split) 0.99-1.01.
# Rule (before the run): the floor and 6 chunks become the default if every workload that takes the
# split has its training call <= 1.00x (best of two) and none of the others > 1.01x; else the opt-in stays.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
A="--workloads 16x4096,4x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024,32x2048,8x4096,128x512 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in on off on2 off2; do
  case $m in off*) export FLAMIA_SM90_DQ_SPLIT_CHUNKS=0 ;; *) export FLAMIA_SM90_DQ_SPLIT_CHUNKS=6 ;; esac
  timeout 120 $C/experiments/latency/latency --backend cuda $A --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$?"
done
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
