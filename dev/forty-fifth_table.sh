#!/bin/bash
# Forty-fifth session: Table A with the cudnn-fp8 peer (experiments/latency/device_run.sh ours
# peers flex; built on the device; needs the carried wheel .whl/nvidia_cudnn_frontend-*.whl). The
# gpu suite and racecheck of the same kernels ran in this session's first command
# (dev/forty-fifth_first.sh), so this one leaves them out to fit the device's 10 minutes.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/forty-fifth_table.sh
export OMP_NUM_THREADS=16
KEEP_LOGS=1 LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh ours peers flex
cd "${OUT:-/tmp/flamia-out}" && f=$(ls *.log *.txt *.csv 2>/dev/null); tar czf logs.tgz $f && rm -f $f
