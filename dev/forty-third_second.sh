#!/bin/bash
# Forty-third session, second device command (~4 min; carry build, build/base_lib as in
# dev/forty-third_first.sh). After the first command: quantize_kernel folds the record bit once a
# head slot (its max, as before, then one compare), not once a row group; test_gpu_api's
# host-memory refusal uses an aligned host buffer.
# (1) the gpu suite of the carried build and racecheck of test_gpu_forward;
# (2) the quantize pass, base (deabf7f) against this build, 4 alternated rounds.
# Usage (device, repo root): bash dev/forty-third_second.sh > $OUT/second.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) gpu suite (the carried build)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
grep -h "check_finite\|capturing\|host memory" /tmp/suite/tests/test_gpu_api.log | head -12
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
echo "== (1) done at $(( $(date +%s) - t0 )) s"
echo "== (2) quantize, base (deabf7f) against this build"
ROUNDS=4 bash dev/quantize_ab.sh
echo "== total $(( $(date +%s) - t0 )) s"
