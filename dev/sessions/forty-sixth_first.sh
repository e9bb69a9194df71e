#!/bin/bash
# Forty-sixth session, first device command (a carried build with build/base_lib = HEAD e8204a2
# and build/hint_lib): (1) the gpu suite on the candidate v108 (dev/backward/v108_nr_fold.patch: the backward's P normalizer
# distributed over dP's, D's and dV's factors: one FMUL per pair fewer) with racecheck;
# (2) the backward and (3) the forward alternated, base (e8204a2) / b1 (the candidate) / hint
# (b1 + try_wait's suspend-time hint 10 ms on every mbarrier wait), 2 rounds, dev/quantize_ab.sh.
# Usage (device, repo root): bash dev/sessions/forty-sixth_first.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) gpu suite (the carried build: b1)"
mkdir -p /tmp/suite && OUT=/tmp/suite bash dev/gpu_suite_carried.sh 150
tar czf "$O/suite_logs.tgz" -C /tmp/suite .
V=base=build/base_lib,b1=,hint=build/hint_lib
echo "== (2) backward, alternated"
PASS=bwd ROUNDS=2 VARIANTS=$V WL=16x4096,4x4096,16x1024,8192+224x256,logu-64k bash dev/quantize_ab.sh 2>&1 | tee "$O/ab_bwd.md"
echo "== (3) forward, alternated"
PASS=fwd ROUNDS=2 VARIANTS=$V WL=16x4096,4x4096,16x1024,8192+224x256,logu-64k bash dev/quantize_ab.sh 2>&1 | tee "$O/ab_fwd.md"
