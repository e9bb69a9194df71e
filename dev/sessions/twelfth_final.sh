#!/bin/bash
# Twelfth session, last device command (~7.5 min): Table A at the commit with v19 (bwd_pre_do
# rows by cp.async) and v21 (dq_accum zeroed in bwd_pre_do) promoted: the gpu suite,
# compute-sanitizer, ours, the peers (cuDNN, varlen) and FlexAttention, in one process
# order on one GPU (experiments/latency/device_run.sh); logs tarred into $OUT/logs.tgz.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twelfth_final.sh > $OUT/final.log 2>&1
export OMP_NUM_THREADS=16
KEEP_LOGS=1 LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh tests sanitize ours peers flex
cd "${OUT:-/tmp/flamia-out}" && f=$(ls *.log *.txt *.csv 2>/dev/null); tar czf logs.tgz $f && rm -f $f
