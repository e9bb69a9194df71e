#!/bin/bash
# Forty-fifth session, first device command (~6 min, a carried build and the carried wheel
# .whl/nvidia_cudnn_frontend-*.whl): (1) the gpu suite with racecheck (dev/gpu_suite_carried.sh:
# test_gpu_padded, the scale-2^-30 zero-tail case and e46be6d's host code have not run on a GPU);
# (2) packed_memory --backend cuda on small workloads (e46be6d's gpu_run.c); (3) the new
# cudnn-fp8 peer (experiments/latency/cudnn_fp8.py) through peers.py, with cudnn-bf16 beside it,
# on Table A's layouts (data/measured/h200/latency_ours.h5).
# Usage (device, repo root): bash dev/sessions/forty-fifth_first.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) gpu suite (the carried build)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
echo "== (2) packed_memory --backend cuda"
timeout 120 build/experiments/packed_memory --backend cuda --workloads 8192+32x256,logu-16k,gqa-16x1024 \
  --recipes mxfp8,mxfp8-exact --iters 3 --out "$O/packed_memory_small.h5" > /tmp/pm.log 2>&1; echo "packed_memory rc=$?"
tail -30 /tmp/pm.log | cut -c1-220
mkdir -p /tmp/pmt && build/experiments/h5totsv "$O/packed_memory_small.h5" /tmp/pmt >/dev/null 2>&1 && head -20 /tmp/pmt/*.tsv | cut -c1-300
echo "== (3) cudnn-fp8 peer"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
export PYTHONPATH=/tmp/site
start=$(date +%s)
PYTHONUNBUFFERED=1 timeout 300 python3 experiments/latency/peers.py --layouts data/measured/h200/latency_ours.h5 \
  --out "$O/peers_fp8.h5" --systems cudnn-fp8,cudnn-bf16 --passes fwd,fwdbwd \
  --workloads 16x4096,16x1024,gqa-16x1024,8192+32x256 > /tmp/peers.log 2>&1; echo "peers.py rc=$? in $(( $(date +%s) - start )) s"
grep -E "^  |peers.py|Error|error|Traceback" /tmp/peers.log | cut -c1-260 | head -60
cp /tmp/peers.log /tmp/pm.log "$O/" 2>/dev/null; cd "$O" && tar czf logs.tgz peers.log pm.log && rm -f peers.log pm.log
