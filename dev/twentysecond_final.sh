#!/bin/bash
# Twenty-second session, last device command (~8.5 min): Table A at the commit with v46
# promoted (mxfp8's dK partial exponent from lane 0; -1.5 % of the backward alone at 16x4096
# in dev/logs/twentysecond_bwd.log): dev/twelfth_final.sh (gpu suite, sanitizers, ours,
# peers, FlexAttention; logs in $OUT/logs.tgz), then the training call's kernels by ncu
# (16x4096 mxfp8, graph-replayed, Q^T / K^T written by quantize: the default).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/twentysecond_final.sh > $OUT/final.log 2>&1
bash dev/twelfth_final.sh
exec > >(tee "${OUT:-/tmp/flamia-out}/ncu_train.md") 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
L=build-device/experiments/latency/latency
args="--workloads 16x4096 --recipes mxfp8 --passes train --warmup 1 --iters 3 --pass-budget 0 --verify-rows 0 --quiet"
bash dev/ncu_durations.sh train "quantize|fwd_kernel|bwd_pre_do|bwd_main|bwd_dq_out" $L $args --out /tmp/ncu.h5 > /tmp/ncu.txt
echo "== train step kernels (median us over the launches)"
python3 dev/ncu_medians.py /tmp/ncu.txt
