#!/bin/bash
# A backward experiment prepared in the twenty-first session for the next one (~4 min with
# dev/backward/bin carried, ~6 without): dev/backward/v46_mk_lane0.patch, mxfp8's dK partial
# exponent taken from lane 0 instead of a 5-step shuffle chain (exact: the bytes must be the
# same; prediction in the patch's header). check_head is the working tree's backward,
# check_v46_mk_lane0 the patched one; built here by the lines below and carried, or built on
# the device from the working tree (git apply: no history needed there).
# Then dev/backward/compare.sh: bytes in the deterministic mode (mxfp8 and exact, two layouts),
# the default mode against the reference, and the backward alone timed, alternated, twice.
# Usage (device, repo root): bash dev/twentysecond_bwd.sh > $OUT/bwd.log 2>&1
set -u
B=dev/backward/bin
P=dev/backward/v46_mk_lane0.patch
if [ ! -x $B/check_head ] || [ ! -x $B/check_v46_mk_lane0 ]; then
  sh dev/backward/build.sh > /tmp/bwd_build.log 2>&1 || { tail -20 /tmp/bwd_build.log; exit 1; }
  mv $B/check_backward $B/check_head
  git apply $P || { echo "patch does not apply"; exit 1; }
  sh dev/backward/build.sh >> /tmp/bwd_build.log 2>&1 || { git apply -R $P; tail -20 /tmp/bwd_build.log; exit 1; }
  mv $B/check_backward $B/check_v46_mk_lane0
  git apply -R $P
fi
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_head check_v46_mk_lane0
