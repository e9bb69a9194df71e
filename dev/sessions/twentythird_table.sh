#!/bin/bash
# Twenty-third session (~5 min): Table A's timings at the commit with v53 promoted, for a
# machine that already ran the gpu suite and the sanitizers at that library (they passed:
# dev/logs/twentythird_final_tests.tgz): ours, the peers and FlexAttention
# (experiments/latency/device_run.sh), then the training call's kernels by ncu as in
# dev/sessions/twentysecond_final.sh.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentythird_table.sh > $OUT/final.log 2>&1
export OMP_NUM_THREADS=16
KEEP_LOGS=1 LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh ours peers flex
( cd "${OUT:-/tmp/flamia-out}" && f=$(ls *.log *.txt *.csv 2>/dev/null | grep -v '^final.log$'); tar czf logs.tgz $f && rm -f $f )
exec bash dev/ncu_train_step.sh
