#!/bin/bash
# Sixteenth session, fourth device command (~3 min): v32_key_fold promoted (mxfp8's t in the
# forward's association) with test_gpu_consistency's new "wide range" case (K x 2^118,
# softmax scale x 2^-118). (1) that test against the library before (build/headlib, 6f6469d's
# kernels): the new case is expected to fail there; (2) the gpu suite's binaries with this
# tree's library.
# Build here first, then carry build (with build/headlib: libflamia.so of 6f6469d):
#   meson setup build -Dcuda=enabled -Dexperiments=enabled --buildtype=release && ninja -C build
# Usage (device, repo root): bash dev/sessions/sixteenth_fourth.sh > $OUT/fourth.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp}
LD_LIBRARY_PATH=$PWD/build/headlib:$LD_LIBRARY_PATH timeout 120 build/tests/gpu/test_gpu_consistency > $O/consistency_head.log 2>&1
echo "test_gpu_consistency, library of 6f6469d: rc=$?"; grep -E "wide range|differ|test_gpu" $O/consistency_head.log | cut -c1-400 | head -12
for t in test_gpu_consistency test_gpu_backward test_gpu_api test_gpu_forward test_gpu_leak test_gpu_quantize test_gpu_e4m3_cvt; do
  s=$SECONDS
  timeout 200 build/tests/gpu/$t > $O/$t.log 2>&1
  echo "$t: rc=$? ($((SECONDS - s)) s)"; tail -n 2 $O/$t.log | cut -c1-300
done
grep -E "wide range|GQA 4/2  " $O/test_gpu_consistency.log | cut -c1-400
