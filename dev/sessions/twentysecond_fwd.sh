#!/bin/bash
# A forward experiment prepared in the twenty-first session for the next one (~4 min with
# dev/forward/bin carried, ~7 without): dev/forward/v24_l_chains.patch, the row sums l in 2 or 4
# partial chains a row instead of one chain of 32 dependent FFMAs (prediction in the patch's
# header: -1..-4 % at 16x4096 if the chain's latency is what the v23 "no l" probe removed).
# The sources are made from the working tree (git apply, no history needed on the device):
# the head kernel and the patched one, then dev/forward/build.sh unless dev/forward/bin
# already holds the three binaries (build them here with the same lines and carry
# dev/forward/bin). Correctness: the harness's reference checks on the LCH = 4 build (PASS
# expected; O / lse bytes differ from the head's by FP32 summation order, by design); then
# the forward alone timed, builds alternated, two rounds.
# Usage (device, repo root): bash dev/sessions/twentysecond_fwd.sh > $OUT/fwd.log 2>&1
set -u
B=dev/forward/bin
P=dev/forward/v24_l_chains.patch
if [ ! -x $B/check_v24_l_chains_l4 ] || [ ! -x $B/check_v24_l_chains_l2 ] || [ ! -x $B/check_fwd_head ]; then
  mkdir -p $B/obj && cp kernels/sm90/forward.cu $B/obj/fwd_head.cu
  git apply $P || { echo "patch does not apply"; exit 1; }
  cp kernels/sm90/forward.cu $B/obj/v24_l_chains.cu
  git apply -R $P
  sh dev/forward/build.sh $B/obj/fwd_head.cu "$B/obj/v24_l_chains.cu@l2=LCH=2" "$B/obj/v24_l_chains.cu@l4=LCH=4" || exit 1
fi
for args in "mxfp8 rand3000:1 4 2 1" "exact rand2000:2 4 4 0" "bf16 rand3000:1 4 2 1"; do
  timeout 40 $B/check_v24_l_chains_l4 $args full 2>&1 | tail -1 | cut -c1-200
done
CHECK=0 WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" bash dev/forward/compare.sh \
  check_fwd_head check_v24_l_chains_l2 check_v24_l_chains_l4
