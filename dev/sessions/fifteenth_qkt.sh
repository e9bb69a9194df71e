#!/bin/bash
# Fifteenth session (~6 min): the training call's quantize writes Q^T and K^T (the backward's
# bwd_transpose pass skipped) and the mxfp8 quantizer's transposes go through 4 x 4 byte
# permutes and 16-byte stores (V^T always, Q^T / K^T in the training call). Correctness first:
# test_gpu_quantize (Q^T / K^T / V^T of a poisoned train step byte for byte against the host
# layout), test_gpu_api (train_step against quantize + forward + backward called apart: O, lse,
# dK, dV bit-identical), test_gpu_backward, test_gpu_leak; then three configurations of one
# latency driver, alternated, two rounds: the library before (LD_LIBRARY_PATH=build/headlib),
# this tree's with FLAMIA_SM90_QKT=bwd ("off": bwd_transpose, but the new V^T stores) and its
# default ("on"); last memcheck / racecheck on test_gpu_quantize's small cases.
# Carry: build (this tree, built here) and build/headlib/libflamia.so (a9a99e6).
# Usage (device, repo root): bash dev/sessions/fifteenth_qkt.sh > $OUT/qkt.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=build L=build/experiments/latency/latency P=/tmp/qkt
mkdir -p $P
ldd $L build/headlib/libflamia.so | grep "not found"
for t in test_gpu_quantize test_gpu_api test_gpu_backward test_gpu_leak; do
  timeout 200 $B/tests/gpu/$t > $P/$t.log 2>&1
  echo "$t: rc=$?"; grep -E "train_step|train step|leak|FAIL|fail|differs|all bit-exact" $P/$t.log | head -12
done
CONFIGS="head=LIB=build/headlib off=FLAMIA_SM90_QKT=bwd on=" WORKLOADS="16x4096 64x1024 logu-16k" \
  RECIPES=mxfp8,mxfp8-exact PASSES=quant,train ROUNDS=2 OUTDIR=$P/ab bash dev/latency_ab.sh
for tool in memcheck racecheck; do # the new transposes under the sanitizers (small cases)
  FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_quantize > $P/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_quantize: rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $P/san-$tool.log | sort | uniq -c
done
cp $P/*.log ${OUT:-/tmp}/ 2>/dev/null
