#!/bin/bash
# Fifteenth session, second run (~4 min). The first (dev/sessions/fifteenth_qkt.sh) measured the
# quantizer's transposes by 4 x 4 byte permutes with each lane storing 16 bytes to its own row
# (32 half sectors per store): mxfp8 quantize 0.441 -> 0.501 ms at 16x4096, and Q^T / K^T in
# it cost more than bwd_transpose. Here: lane pairs storing whole 32-byte sectors
# (FLAMIA_QUANT_TR_PAIRS=1, this tree) against the byte-wise tile extended to Q and K
# (FLAMIA_QUANT_TR_PAIRS=0, build/bytelib) and the library before (build/headlib, a9a99e6);
# "off" = FLAMIA_SM90_QKT=bwd. Correctness of both builds first (test_gpu_quantize: a train
# step's Q^T / K^T / V^T byte for byte; test_gpu_api: train_step against the parts).
# Carry: build (with build/headlib, build/bytelib). Usage: bash dev/sessions/fifteenth_qkt2.sh > $OUT/qkt2.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
B=build P=/tmp/qkt2
mkdir -p $P
for lib in default bytelib; do
  for t in test_gpu_quantize test_gpu_api; do
    if [ $lib = default ]; then timeout 200 $B/tests/gpu/$t > $P/$t-$lib.log 2>&1
    else LD_LIBRARY_PATH=$PWD/build/bytelib:$LD_LIBRARY_PATH timeout 200 $B/tests/gpu/$t > $P/$t-$lib.log 2>&1; fi
    echo "$t ($lib): rc=$?"; grep -E "^train_step|differs|FAIL|all bit-exact" $P/$t-$lib.log | head -6
  done
done
CONFIGS="head=LIB=build/headlib byteon=LIB=build/bytelib pairoff=FLAMIA_SM90_QKT=bwd pairon=" \
  WORKLOADS="16x4096 64x1024 logu-16k" RECIPES=mxfp8 PASSES=quant,train ROUNDS=2 OUTDIR=$P/ab bash dev/latency_ab.sh
for tool in memcheck racecheck; do
  FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_quantize > $P/san-$tool.log 2>&1
  echo "compute-sanitizer $tool test_gpu_quantize: rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $P/san-$tool.log | sort | uniq -c
done
cp $P/*.log ${OUT:-/tmp}/ 2>/dev/null
