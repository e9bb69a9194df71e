#!/bin/bash
# The acceptance ratios of issues 4 and 5, ours and the peers in one process
# (experiments/latency/ratios.py: ours through ctypes, the peers alternated round by round), with
# two cross-checks in the same command: the C driver's times of ours on four workloads (the ctypes
# path must time the same kernels alike) and peers.py alone on one equal-length and one packed
# workload. Builds on the device; carry .whl (cuDNN's frontend wheel, for the cudnn-fp8 peer).
# First written in the forty-seventh session; its runs are in docs/perf-notes.md.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> [WL=16x4096,...] [ROUNDS=6] bash dev/acceptance_ratios.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16 PYTHONUNBUFFERED=1
O=${OUT:-/tmp/flamia-out}
B=build-device
s=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
meson setup $B -Dcuda=enabled -Dexperiments=enabled > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
ninja -C $B >> "$O/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$O/build.log" | head -40; exit 1; }
echo "build: $((SECONDS - s)) s"
if ls .whl/nvidia_cudnn_frontend-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-cudnn \
    .whl/nvidia_cudnn_frontend-*.whl && export PYTHONPATH=/tmp/site-cudnn${PYTHONPATH:+:$PYTHONPATH}
fi
export FLAMIA_LIB=$PWD/$B/kernels/libflamia.so
# the C driver on the same kernels (and the layouts of logu-16k for ratios.py)
s=$SECONDS
$B/experiments/latency/latency --workloads 16x4096,16x1024,logu-16k,logu-64k --recipes mxfp8 --passes fwd,fwd+quant,bwd,train \
  --verify-rows 0 --out "$O/c_ours.h5" > "$O/c_ours.log" 2>&1 || { echo "latency failed"; tail -5 "$O/c_ours.log"; }
python3 - "$O/c_ours.h5" <<'PY'
import sys, h5py
t = h5py.File(sys.argv[1], "r")["timings"]
for w, s_, p, ms in zip(t["workload"][...], t["system"][...], t["pass"][...], t["ms"][...]):
    print("C driver: %-10s %-13s %-9s %8.3f ms" % (w.decode(), s_.decode(), p.decode(), ms))
PY
echo "C driver: $((SECONDS - s)) s"
# peers.py after the refactor: one equal-length and one packed workload (FlexAttention runs in ratios.py)
s=$SECONDS
timeout 100 python3 experiments/latency/peers.py --layouts "$O/c_ours.h5" --out "$O/peers_check.h5" \
  --workloads 16x1024,logu-16k --systems cudnn-bf16,cudnn-fp8,varlen-bf16 --passes fwd,fwdbwd \
  > "$O/peers_check.log" 2>&1; echo "peers.py: rc=$? ($((SECONDS - s)) s)"
grep -E "^  " "$O/peers_check.log" | cut -c1-160
# the one-process ratios
s=$SECONDS
timeout 360 python3 experiments/latency/ratios.py --layouts "$O/c_ours.h5" --out "$O/ratios_gpu.h5" \
  --workloads ${WL:-16x4096,4x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024} \
  --rounds ${ROUNDS:-6} > "$O/ratios.log" 2>&1; echo "ratios.py: rc=$? ($((SECONDS - s)) s)"
grep -vE "^round|Warning|warn" "$O/ratios.log" | tail -60 | cut -c1-220
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
