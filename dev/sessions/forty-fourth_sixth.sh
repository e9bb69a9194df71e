#!/bin/bash
# Forty-fourth session, sixth device command (~2 min, carried build/ with build/base_lib): the
# masked-pair FMNMX for every kind (build/) against mxfp8 only (build/base_lib, 858d059):
# test_gpu_forward (its new mxfp8-exact case under softmax scale 2^-40 with zero tails) with both,
# then the forward's time alternated (dev/quantize_ab.sh, PASS=fwd, 3 rounds).
# Usage (device, repo root): bash dev/sessions/forty-fourth_sixth.sh
set -u
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O"
for lib in base_lib ""; do
  LD_LIBRARY_PATH=${lib:+$PWD/build/$lib:}$LD_LIBRARY_PATH build/tests/gpu/test_gpu_forward >"$O/fwd_${lib:-all}.log" 2>&1
  echo "test_gpu_forward with ${lib:-every kind}: rc=$?"; grep -E "scale 2\^-40|^FAIL" "$O/fwd_${lib:-all}.log" | cut -c1-200 | head -5
done
PASS=fwd ROUNDS=3 VARIANTS=mxfp8only=build/base_lib,allkinds= WL=16x1024,64x1024,16x4096 bash dev/quantize_ab.sh
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
