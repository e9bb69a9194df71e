#!/bin/bash
# Twenty-third session (~5 min): Table A's timings at the commit with v53 promoted, for a
# machine that already ran the gpu suite and the sanitizers at that library (they passed:
# dev/logs/twentythird_final_tests.tgz): ours, the peers and FlexAttention
# (experiments/latency/device_run.sh), then the training call's kernels by ncu as in
# dev/twentysecond_final.sh.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/twentythird_table.sh > $OUT/final.log 2>&1
export OMP_NUM_THREADS=16
KEEP_LOGS=1 LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh ours peers flex
( cd "${OUT:-/tmp/flamia-out}" && f=$(ls *.log *.txt *.csv 2>/dev/null | grep -v '^final.log$'); tar czf logs.tgz $f && rm -f $f )
exec > >(tee "${OUT:-/tmp/flamia-out}/ncu_train.md") 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
L=build-device/experiments/latency/latency
args="--workloads 16x4096 --recipes mxfp8 --passes train --warmup 1 --iters 3 --pass-budget 0 --verify-rows 0 --quiet"
bash dev/ncu_durations.sh train "quantize|fwd_kernel|bwd_pre_do|bwd_main|bwd_dq_out" $L $args --out /tmp/ncu.h5 > /tmp/ncu.txt
echo "== train step kernels (median us over the launches)"
python3 dev/ncu_medians.py /tmp/ncu.txt
