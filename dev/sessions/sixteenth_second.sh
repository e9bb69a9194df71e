#!/bin/bash
# Sixteenth session, second device command (~8 min): (1) test_gpu_api of this tree (the
# training calls' head_dim refusal runs for the first time; the build's meson could not run
# the suite on the device in the first command, so the binary runs directly); (2) backward
# v34_tile_loads (per-tile loads with one address per thread) and v35_dv_early (dV issued
# right after P) and both (v36) against the committed kernel:
# deterministic-mode bytes (must be equal), the default mode against the reference, the
# backward's time on short, medium and long documents.
# Build here first, then carry build and dev/backward/bin:
#   meson setup build -Dcuda=enabled -Dexperiments=enabled --buildtype=release && ninja -C build
#   sh dev/backward/build.sh dev/backward/v34_tile_loads.patch dev/backward/v35_dv_early.patch dev/backward/v36_loads_dv.patch
# Usage (device, repo root): bash dev/sessions/sixteenth_second.sh > $OUT/second.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
timeout 200 build/tests/gpu/test_gpu_api > /tmp/test_gpu_api.log 2>&1
echo "test_gpu_api rc=$?"; grep -iE "head_dim|head dim|FAIL|PASS|ok$" /tmp/test_gpu_api.log | head -20
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="512x128 16 16 1|64x1024 16 16 1|16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  timeout 520 bash dev/backward/compare.sh check_backward check_v34_tile_loads check_v35_dv_early check_v36_loads_dv
cp /tmp/test_gpu_api.log ${OUT:-/tmp}/ 2>/dev/null
