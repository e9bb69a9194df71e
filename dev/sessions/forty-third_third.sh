#!/bin/bash
# Forty-third session, third device command (~4 min; carry build, with build/base_lib (deabf7f)
# and build/inloop_lib (4e4939f: the record bit folded in quantize_kernel's loop once a slot)).
# The carried build is the cold-path form: quantize_kernel's loop as at deabf7f, and only a warp
# that saw a non-finite element reads its slots' rows again to name the tensors.
# (1) the gpu suite of the carried build and racecheck of test_gpu_forward;
# (2) the quantize pass, base / in-loop / cold, 4 alternated rounds. Predicted: cold = base
#     (the loop is the same code) within the rounds' spread, in-loop +1.5 % (second command).
# Usage (device, repo root): bash dev/sessions/forty-third_third.sh > $OUT/third.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
t0=$(date +%s)
bash dev/sessions/forty-third_suite.sh
echo "== (1) done at $(( $(date +%s) - t0 )) s"
echo "== (2) quantize: base (deabf7f), in-loop (4e4939f), cold (this build)"
ROUNDS=4 VARIANTS=base=build/base_lib,inloop=build/inloop_lib,cold= bash dev/quantize_ab.sh
echo "== total $(( $(date +%s) - t0 )) s"
