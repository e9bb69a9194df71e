#!/bin/bash
# The training call's kernels by ncu (16x4096 mxfp8, graph-replayed, Q^T / K^T written by
# quantize: the default), medians over each kernel's launches, into $OUT/ncu_train.md.
# Needs build-device/ with the latency driver. Usage (device, repo root): bash dev/ncu_train_step.sh
exec > >(tee "${OUT:-/tmp/flamia-out}/ncu_train.md") 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
L=build-device/experiments/latency/latency
args="--workloads 16x4096 --recipes mxfp8 --passes train --warmup 1 --iters 3 --pass-budget 0 --verify-rows 0 --quiet"
bash dev/ncu_durations.sh train "quantize|fwd_kernel|bwd_pre_do|bwd_main|bwd_dq_out" $L $args --out /tmp/ncu.h5 > /tmp/ncu.txt
echo "== train step kernels (median us over the launches)"
python3 dev/ncu_medians.py /tmp/ncu.txt
