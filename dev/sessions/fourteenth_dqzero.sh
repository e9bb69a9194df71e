#!/bin/bash
# Fourteenth session (~3 min): the training call's dq_accum zeroed by the forward's producer
# (per item, streaming stores after its loads; the DQZ instantiation) instead of by bwd_pre_do
# (537 MB of its ~1.5 GB at 16x4096). Three configurations of one latency driver, alternated,
# two rounds: the library before the change (LD_LIBRARY_PATH=build/headlib; RUNPATH comes after
# it), this tree's with FLAMIA_SM90_DQ_ZERO=bwd ("off": the zeroing in bwd_pre_do) and its
# default ("on"). First the correctness: test_gpu_api and test_gpu_leak (train_step eager and
# graph-replayed on poisoned buffers; the dQ leak probe), the driver's own verification, and
# last memcheck / racecheck on test_gpu_api.
# Carry: build (this tree, meson with -Dcuda=enabled -Dexperiments=enabled, built here) and
# build/headlib/libflamia.so (the commit before the switch, d977b59).
# Usage (device, repo root): bash dev/sessions/fourteenth_dqzero.sh > $OUT/dqzero.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=build L=build/experiments/latency/latency P=/tmp/dqz
mkdir -p $P
ldd $L build/headlib/libflamia.so | grep "not found"
for t in test_gpu_api test_gpu_leak; do
  timeout 120 $B/tests/gpu/$t > $P/$t.log 2>&1
  echo "$t (the forward zeroes dq_accum): rc=$?"; grep -E "graph capture.*train_step|leak|FAIL|failures" $P/$t.log | head -8
done
CONFIGS="head=LIB=build/headlib off=FLAMIA_SM90_DQ_ZERO=bwd on=" WORKLOADS="16x4096 64x1024 logu-16k" \
  RECIPES=mxfp8 PASSES=fwd,train ROUNDS=2 OUTDIR=$P/ab bash dev/latency_ab.sh
for tool in memcheck racecheck; do # the DQZ kernels under the sanitizers (test_gpu_api runs train_step)
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_api > $P/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_api: rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $P/san-$tool.log | sort | uniq -c
done
