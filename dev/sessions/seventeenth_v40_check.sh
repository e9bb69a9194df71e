#!/bin/bash
# Seventeenth session, last device command: the v40 kernel (dQ pairs folded) under
# compute-sanitizer (test_gpu_api: quantize, forward, backward, train_step) and a spot
# check of the training call against cuDNN BF16 in one command (16x4096, 64x1024).
# Carry build. Usage (device): bash dev/sessions/seventeenth_v40_check.sh > $OUT/check.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp}
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 build/tests/gpu/test_gpu_api > $O/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_api: rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $O/san-$tool.log | sort | uniq -c
done
timeout 120 build/experiments/latency/latency --workloads 16x4096,64x1024 --recipes mxfp8 --passes bwd,train \
  --pass-budget 3 --out $O/ours.h5 > $O/ours.log 2>&1; echo "latency rc=$?"; grep -E "bwd|train" $O/ours.log | grep -v "^\[" | tail -4
timeout 150 python3 experiments/latency/peers.py --layouts $O/ours.h5 --out $O/peers.h5 --systems cudnn-bf16 --passes fwdbwd > $O/peers.log 2>&1
echo "peers rc=$?"; grep -E "^  " $O/peers.log | tail -4 | cut -c1-200
python3 experiments/latency/join.py $O/ours.h5 $O/peers.h5 --recipe mxfp8 2>&1 | tail -8
