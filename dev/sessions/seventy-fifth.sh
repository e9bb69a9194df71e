#!/bin/bash
# Seventy-fifth session: the queued measurement of the promoted forward (v131, af207b3) in one call,
# ordered by what matters if the call is cut short (machines came rarely: the seventy-third to
# seventy-fifth sessions lost 180 s of device time to each failed start). Carry build-carry (`bash
# dev/carry_bins.sh` at the commit measured) and .whl. Pass FLAMIA_GIT_COMMIT=<hash>, and CALL_S (the
# call's limit less a margin) when less than 600 s of device time is left.
#   1. The default mode's acceptance ratios (sixty-fifth_ratios.sh, 3 rounds). On an H200 these are
#      the figures of record (the file becomes data/measured/h200/ratios_gpu.h5 with git_commit set).
#   2. The whole gpu suite (the promoted forward has run only the forward's five programs).
#   3. On an H200: Table D's pair (dev/sessions/sixty-ninth_queued.sh says where the files go).
#      On an H100: racecheck of the four small test programs (seventy-first.sh racecheck).
# Each step starts only if the time it needs is left of CALL_S.
# Step v132 (a second call, on the same warm machine if possible): dev/forward/v132_epilogue_under_pv.patch
# (the epilogue's lse, 1 / l and half of the O sum's loads under the item's last P V) against the
# committed kernel, in the order that matters if the call is cut: the forward timed on 3 workloads, both
# builds alternated, twice; then the bytes on 9 layouts and the reference checks (compare.sh); then the
# forward's gpu tests on its library. Carry dev/forward/bin (`sh dev/forward/build.sh
# dev/forward/v132_epilogue_under_pv.patch`) and build-v132 (libflamia.so built with the patch applied:
# `patch -p1 < dev/forward/v132_epilogue_under_pv.patch && ninja -C build kernels/libflamia.so && mkdir -p
# build-v132 && cp build/kernels/libflamia.so build-v132/ && git checkout kernels/sm90/forward.cu`).
# Predicted (written before any run): the same bytes; -0.3..-1 % at 16x4096, -1..-3 % at 16x1024 and
# 64x1024. Rule (as v129-v131): the same bytes, the forward's gpu tests passing on its library, and at
# least 1 % faster on a 1,024-token workload in both rounds with no workload slower by 0.5 % in either
# promotes it.
# Usage: bash dev/sessions/seventy-fifth.sh [record] [v132] (default: record)
# Predicted (hopper-port, current plan): on the H200 the forward ~1.575 ms at 16x4096, 1.27-1.31x cuDNN
# BF16; backward ~365 TFLOP/s, training call ~0.85x; on an H100 the forward ~1.568 ms, ~1.26x.
. dev/device_lib.sh
steps=${*:-record}
dev_carry
CALL_S=${CALL_S:-570}
left() { echo $(( CALL_S - $(dev_elapsed) )); }
if [[ " $steps " == *" record "* ]]; then
  export RATIO_TIMEOUT=$(( $(left) - 30 < 300 ? $(left) - 30 : 300 ))
  MODES=default bash dev/sessions/sixty-fifth_ratios.sh
  h200=0
  case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) h200=1 ;; esac
  if [ $(left) -gt 200 ]; then dev_all_gpu_tests; else echo "no time left for the suite ($(left) s)"; fi
  if [ $h200 = 1 ] && [ $(left) -gt 150 ]; then
    dev_table_d
  elif [ $h200 = 0 ] && [ $(left) -gt 200 ]; then
    SAN_TIMEOUT=$(( ($(left) - 20) / 4 )) bash dev/sessions/seventy-first.sh racecheck
  fi
fi
if [[ " $steps " == *" v132 "* ]]; then
  dev_forward_lean v132 $PWD/build-v132 check_forward check_v132_epilogue_under_pv
  grep "^mxfp8 " $OUT/v132_timing.log
fi
[ -d $OUT/logs ] && (cd $OUT && tar -czf logs.tgz logs && rm -rf logs)
echo "done ($(dev_elapsed) s)"
