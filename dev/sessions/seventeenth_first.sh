#!/bin/bash
# Prepared in the sixteenth session for the next one's first device command (~6 min):
# (1) every gpu test binary of this tree, test_gpu_scale_shift for the first time (written
# after the mxfp8 association fix, 0d303fd; never run); (2) the dev harness's default mode
# against the reference in the wide range (BWD_KEXP=118: K x 2^118, softmax scale x 2^-118,
# mxfp8 only; also never run), and at BWD_KEXP=0 for comparison; (3) the timing-only v38_tma_tiles
# (dev/backward/v38_tma_tiles.patch: the tile's Q / dO rows, and the F16 dO panel, by TMA)
# against the committed kernel, which says whether hopper-port next steps 1 (f) pays before
# its layout is built. Then Table A at HEAD, which
# the fix changed by +0.4 % in the harness: FLAMIA_GIT_COMMIT=<HEAD> bash dev/sessions/fifteenth_final.sh
# (a second command, ~7 min).
# Build here first, then carry build and dev/backward/bin:
#   meson setup build -Dcuda=enabled -Dexperiments=enabled --buildtype=release && ninja -C build
#   sh dev/backward/build.sh "dev/backward/v38_tma_tiles.patch@qdo=V38_QDO=1" "dev/backward/v38_tma_tiles.patch@all=V38_QDO=1,V38_PANEL=1"
#   (then move dev/backward/bin/obj out: the carry limit is 64 MB)
# Usage (device, repo root): bash dev/sessions/seventeenth_first.sh > $OUT/first.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
bash dev/gpu_test_bins.sh 200 "FAIL|elements that differ" 8 test_gpu_scale_shift test_gpu_consistency test_gpu_backward \
  test_gpu_api test_gpu_forward test_gpu_leak test_gpu_quantize test_gpu_e4m3_cvt
for e in 0 118; do
  for layout in "rand3000:1 4 2 1" "3x1024 4 4 0"; do
    BWD_KEXP=$e timeout 90 dev/backward/bin/check_backward mxfp8 $layout full 2>&1 | grep -E "PASS|FAIL" | sed "s/^/KEXP=$e: /" | cut -c1-330
  done
done
B=dev/backward/bin
for w in "16x4096 16 16 1" "64x1024 16 16 1"; do
  for b in check_backward check_v38_tma_tiles_qdo check_v38_tma_tiles_all check_backward check_v38_tma_tiles_qdo check_v38_tma_tiles_all; do
    GPU_FWD=1 timeout 60 $B/$b mxfp8 $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/mxfp8 $b ${w%% *}: /"
  done
done
