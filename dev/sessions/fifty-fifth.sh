#!/bin/bash
# Fifty-fifth session, second command (after `fifty-fourth_lsum.sh bits` on the same warm machine,
# whose build-device it reuses; builds it when absent):
#  suite:  the gpu suite at HEAD (the fifty-fourth session's test changes ran one test at a time;
#          test_gpu_forward's restructure at 778f39e never ran on a GPU);
#  ratios: the acceptance ratios (ratios.py, ours and the peers in one process, rounds alternated)
#          with the rule recommended for training, mxfp8-lsum: what a training step gets with it.
#          Prediction from lsum_ab_round{1,2}: forward ratio ~5-9 % below the fifty-third session's
#          1.227x (1.13x..1.17x), training call ~1 % below 0.819x (~0.81x).
#  bits:   build-bits compiled beside the suite, then `fifty-fourth_lsum.sh bits` (checked, timed).
# Usage (device, repo root; carry .whl for the cudnn-fp8 peer): bash dev/sessions/fifty-fifth.sh [suite] [bits] [ratios]
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16 PYTHONUNBUFFERED=1
. dev/device_lib.sh
dev_setup
steps=" ${*:-suite ratios} "
rc=0
if [[ $steps == *" bits "* ]]; then
  # build-bits (fifty-fourth_lsum.sh bits) compiled on the CPUs while the suite runs on the GPU
  ( meson setup build-bits -Dcuda=enabled -Dexperiments=enabled --buildtype=release -Dcuda_args=-DFLAMIA_SM90_LSUM_BITS=1 &&
    ninja -C build-bits kernels/libflamia.so tests/gpu/test_gpu_e4m3_cvt tests/gpu/test_gpu_forward ) > /tmp/bits-build.log 2>&1 &
  bits_pid=$!
fi
if [[ $steps == *" suite "* ]]; then
  meson test -C $B --suite gpu --print-errorlogs --num-processes 1 >/dev/null 2>&1 || rc=1
  cp $B/meson-logs/testlog.txt "$OUT/testlog.txt"
  grep -E "^(test|result|duration): " "$OUT/testlog.txt" | paste - - - | awk '{print $4, $6, $8, $9, $10}'
  grep -hE "^FAIL|l of P values|failures" "$OUT/testlog.txt" | cut -c1-200 | head -30
  echo "suite: rc=$rc ($(dev_elapsed) s)"
fi
if [[ $steps == *" ratios "* ]]; then
  if ls .whl/nvidia_cudnn_frontend-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-cudnn \
      .whl/nvidia_cudnn_frontend-*.whl && export PYTHONPATH=/tmp/site-cudnn${PYTHONPATH:+:$PYTHONPATH}
  fi
  export FLAMIA_LIB=$PWD/$B/kernels/libflamia.so
  # the logu-* layouts come from the C driver's file
  $B/experiments/latency/latency --workloads logu-16k,logu-64k --recipes mxfp8-lsum --passes fwd \
    --verify-rows 0 --out "$OUT/c_layouts.h5" > "$OUT/c_layouts.log" 2>&1 || echo "latency (layouts) failed"
  timeout 300 python3 experiments/latency/ratios.py --recipe mxfp8-lsum --layouts "$OUT/c_layouts.h5" \
    --out "$OUT/ratios_lsum.h5" --workloads ${WL:-16x4096,4x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024} \
    --rounds ${ROUNDS:-3} > "$OUT/ratios_lsum.log" 2>&1 || rc=1
  echo "ratios: rc=$? ($(dev_elapsed) s)"
  grep -vE "^round|Warning|warn" "$OUT/ratios_lsum.log" | tail -45 | cut -c1-200
fi
if [[ $steps == *" bits "* ]]; then
  wait $bits_pid || { echo "build-bits failed"; tail -20 /tmp/bits-build.log; }
  bash dev/sessions/fifty-fourth_lsum.sh bits || rc=1
fi
echo "all: rc=$rc ($(dev_elapsed) s)"
exit $rc
