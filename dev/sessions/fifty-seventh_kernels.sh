#!/bin/bash
# Fifty-seventh session, last command (H100): the training call's kernels one by one (ncu
# gpu__time_duration, clocks as they are, the graph-replayed train step, mxfp8) at 16x4096,
# 64x1024 and 8192+224x256, to measure what the per-token passes (quantize, bwd_pre_do,
# bwd_dq_out) cost beside the forward and backward main kernels on the H100, where the
# short-document backward ran ~10 % slower than on the H200 (docs/perf-notes.md, "Quantize and
# peers", fifty-seventh session).
# Usage (device, repo root): bash dev/sessions/fifty-seventh_kernels.sh
export PATH=/usr/local/cuda/bin:$PATH
. dev/device_lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
dev_setup
R="quantize|fwd_kernel|bwd_pre_do|bwd_transpose|bwd_main|bwd_dq_out|bwd_order"
for w in ${WL:-16x4096 64x1024 8192+224x256}; do
  timeout ${NCU_TIMEOUT:-100} bash dev/ncu_durations.sh $w "$R" $B/experiments/latency/latency --workloads $w \
    --recipes mxfp8 --passes train --warmup 1 --iters 3 --pass-budget 0 --verify-rows 0 --quiet \
    --out /tmp/ncu-$w.h5 > "$OUT/ncu_train_$w.txt"
  echo "== $w: train step kernels, mxfp8 (median us over the launches; rc=$?, $(dev_elapsed) s)"
  python3 dev/ncu_medians.py "$OUT/ncu_train_$w.txt"
done
