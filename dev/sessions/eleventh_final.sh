#!/bin/bash
# The eleventh session's last device command (~8 min): Table A at the working tree (gpu
# suite, compute-sanitizer, ours, the peers, FlexAttention), then ncu profiles of the
# backward's two streaming kernels at 16x4096 mxfp8 (bwd_pre_do 693 us and bwd_dq_out
# 190 us against copy times of ~112 and ~96 us; v18's guess at them was wrong).
# Build here first: sh dev/backward/build.sh; carry dev/backward/bin.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/eleventh_final.sh
export OMP_NUM_THREADS=16
KEEP_LOGS=1 LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh tests sanitize ours peers flex
for k in bwd_pre_do bwd_dq_out; do
  echo "== ncu $k (16x4096 mxfp8)"
  GPU_FWD=1 timeout 120 bash dev/ncu_profile.sh $k $k dev/backward/bin/check_backward mxfp8 16x4096 16 16 1 none 1
done
cd "${OUT:-/tmp/flamia-out}" && tar czf logs.tgz *.log *.txt *.csv 2>/dev/null && rm -f *.log *.txt *.csv
