#!/bin/bash
# Fifteenth session, last device command (~8 min): Table A at the commit with Q^T / K^T
# written by the training call's quantize (dev/sessions/twelfth_final.sh: gpu suite, sanitizers,
# ours, peers, flex; logs in $OUT/logs.tgz), then the training call's kernels one by one
# (ncu gpu__time_duration, 16x4096 mxfp8, the graph-replayed train step) with Q^T / K^T in
# quantize (default) and in bwd_transpose (FLAMIA_SM90_QKT=bwd).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/fifteenth_final.sh > $OUT/final.log 2>&1
# twelfth_final.sh tars and deletes the *.log files under $OUT, final.log included, so the ncu
# part's table goes to $OUT/ncu_train.md as well (in the fifteenth session it went only to the
# deleted final.log and was recovered by a second command).
bash dev/sessions/twelfth_final.sh
exec > >(tee "${OUT:-/tmp/flamia-out}/ncu_train.md") 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
L=build-device/experiments/latency/latency
args="--workloads 16x4096 --recipes mxfp8 --passes train --warmup 1 --iters 3 --pass-budget 0 --verify-rows 0 --quiet"
R="quantize|fwd_kernel|bwd_pre_do|bwd_transpose|bwd_main|bwd_dq_out"
for c in on bwd; do
  if [ $c = on ]; then bash dev/ncu_durations.sh qkt-$c "$R" $L $args --out /tmp/ncu-$c.h5
  else FLAMIA_SM90_QKT=bwd bash dev/ncu_durations.sh qkt-$c "$R" $L $args --out /tmp/ncu-$c.h5; fi > /tmp/ncu-$c.txt
  echo "== train step kernels, Q^T/K^T $c (median us over the launches)"
  python3 dev/ncu_medians.py /tmp/ncu-$c.txt
done
