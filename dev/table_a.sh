#!/bin/bash
# Table A (paper_tables/latency): ours and every peer, cudnn-fp8 included, through
# experiments/latency/device_run.sh ours peers flex; builds on the device and needs the carried
# wheel .whl/nvidia_cudnn_frontend-*.whl. Leaves out the gpu suite and the sanitizers to fit the
# device's 10 minutes (device_run.sh tests sanitize runs them). First written in the forty-fifth
# session; its runs are in docs/perf-notes.md.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/table_a.sh
export OMP_NUM_THREADS=16
KEEP_LOGS=1 LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh ours peers flex
cd "${OUT:-/tmp/flamia-out}" && f=$(ls *.log *.txt *.csv 2>/dev/null); tar czf logs.tgz $f && rm -f $f
