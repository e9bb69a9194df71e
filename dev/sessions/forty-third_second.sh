#!/bin/bash
# Forty-third session, second device command (~4 min; carry build, build/base_lib as in
# dev/sessions/forty-third_first.sh). After the first command: quantize_kernel folds the record bit once a
# head slot (its max, as before, then one compare), not once a row group; test_gpu_api's
# host-memory refusal uses an aligned host buffer.
# (1) the gpu suite of the carried build and racecheck of test_gpu_forward;
# (2) the quantize pass, base (deabf7f) against this build, 4 alternated rounds.
# Usage (device, repo root): bash dev/sessions/forty-third_second.sh > $OUT/second.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
t0=$(date +%s)
bash dev/sessions/forty-third_suite.sh
echo "== (1) done at $(( $(date +%s) - t0 )) s"
echo "== (2) quantize, base (deabf7f) against this build"
ROUNDS=4 bash dev/quantize_ab.sh
echo "== total $(( $(date +%s) - t0 )) s"
