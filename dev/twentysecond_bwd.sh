#!/bin/bash
# A backward experiment prepared in the twenty-first session for the next one (~5 min with
# dev/backward/bin carried, ~8 without): two exact changes to the sub-step (the bytes must be
# the same; predictions in the patches' headers): dev/backward/v46_mk_lane0.patch, mxfp8's dK
# partial exponent taken from lane 0 instead of a 5-step shuffle chain, and
# dev/backward/v47_no_pair_barrier.patch, v46 plus the pair's-G named barrier removed (each
# warp forms the other key block's G itself). check_head is the working tree's backward; built
# here by the lines below and carried, or built on the device from the working tree (git
# apply: no history needed there).
# Then dev/backward/compare.sh: bytes in the deterministic mode (mxfp8 and exact, two layouts),
# the default mode against the reference, and the backward alone timed, alternated, twice.
# Usage (device, repo root): bash dev/twentysecond_bwd.sh > $OUT/bwd.log 2>&1
set -u
B=dev/backward/bin
V="v46_mk_lane0 v47_no_pair_barrier"
if [ ! -x $B/check_head ] || [ ! -x $B/check_v46_mk_lane0 ] || [ ! -x $B/check_v47_no_pair_barrier ]; then
  sh dev/backward/build.sh > /tmp/bwd_build.log 2>&1 || { tail -20 /tmp/bwd_build.log; exit 1; }
  mv $B/check_backward $B/check_head
  for v in $V; do
    git apply dev/backward/$v.patch || { echo "$v does not apply"; exit 1; }
    sh dev/backward/build.sh >> /tmp/bwd_build.log 2>&1 || { git apply -R dev/backward/$v.patch; tail -20 /tmp/bwd_build.log; exit 1; }
    mv $B/check_backward $B/check_$v
    git apply -R dev/backward/$v.patch
  done
fi
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_head $(for v in $V; do printf 'check_%s ' $v; done)
