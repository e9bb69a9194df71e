#!/bin/bash
# Forty-fifth session: the cudnn-fp8 peer (experiments/latency/cudnn_fp8.py) through peers.py,
# with cudnn-bf16 beside it, on Table A's layouts (data/measured/h200/latency_ours.h5). Needs the
# carried wheel .whl/nvidia_cudnn_frontend-*.whl.
# Usage (device, repo root): WL=16x4096,... SYS=cudnn-fp8,cudnn-bf16 bash dev/sessions/forty-fifth_fp8.sh
O=${OUT:-/tmp/flamia-out}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
export PYTHONPATH=/tmp/site
start=$(date +%s)
PYTHONUNBUFFERED=1 timeout ${LIMIT:-300} python3 experiments/latency/peers.py --layouts data/measured/h200/latency_ours.h5 \
  --out "$O/peers_fp8.h5" --systems ${SYS:-cudnn-fp8,cudnn-bf16} --passes fwd,fwdbwd \
  --workloads ${WL:-16x4096,16x1024,gqa-16x1024,8192+32x256} > /tmp/peers.log 2>&1; echo "peers.py rc=$? in $(( $(date +%s) - start )) s"
grep -E "^  |peers.py|Error|error" /tmp/peers.log | cut -c1-300 | head -60
cp /tmp/peers.log "$O/"
