#!/bin/bash
# Sixty-sixth session, last device command: Table D's pair (backward alone, default mode against the
# deterministic one) at rule F, into $OUT, to replace data/measured/h100's (measured at d316dca, before
# dq_room and GQA's longest-first split). Carry build-carry. Pass FLAMIA_GIT_COMMIT=<hash>.
# Predicted: MHA rows as before (the deterministic mode 12-15 % faster; 16x4096's default now 4 chunks,
# so ~8-10 %); gqa-16x1024: the default now takes the split too (0.76x its backward before), so the
# deterministic mode's lead shrinks from -20 % to ~-3..-10 %.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}
C=build-carry
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
D="--workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet"
timeout 150 $C/experiments/latency/latency --backend cuda $D --out $OUT/deterministic_default.h5 > /dev/null 2>&1; echo "table D default rc=$?"
timeout 150 $C/experiments/latency/latency --backend cuda $D --deterministic --out $OUT/deterministic_on.h5 > /dev/null 2>&1; echo "table D deterministic rc=$?"
python3 - $OUT <<'PY'
import sys, h5py
d = sys.argv[1]
a = h5py.File(d + "/deterministic_default.h5")["timings"]; b = h5py.File(d + "/deterministic_on.h5")["timings"]
key = lambda h, i: (h["workload"][i].decode(), h["system"][i].decode().replace("-det", ""))
ta = {key(a, i): a["ms"][i] for i in range(a["ms"].shape[0])}
for i in range(b["ms"].shape[0]):
    k = key(b, i)
    print("| %s | %s | default %.3f ms | deterministic %.3f ms | %+.1f %% |" % (k[0], k[1], ta[k], b["ms"][i], 100 * (b["ms"][i] / ta[k] - 1)))
PY
