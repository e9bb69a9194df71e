#!/bin/bash
# The first step of each forty-third-session device command: the GPU and its clock, the gpu
# suite of the carried build (dev/gpu_suite_carried.sh) with racecheck of test_gpu_forward,
# test_gpu_api's non-finite-record lines, the suite's logs as $OUT/suite_logs.tgz.
# Usage (device, repo root): bash dev/sessions/forty-third_suite.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) gpu suite (the carried build)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
grep -h "check_finite\|capturing\|host memory" /tmp/suite/tests/test_gpu_api.log | head -12
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
