#!/bin/bash
# Prepared in the thirty-seventh session for the next (~3 min; carry dev/forward/bin, built
# here: check_forward = 99940d0's kernel, check_v44_osum_under_qk, check_v46_osum_under_qk_tail,
# check_v47_osum_turn_early; if missing: sh dev/forward/build.sh
# dev/forward/v44_osum_under_qk.patch dev/forward/v46_osum_under_qk_tail.patch
# dev/forward/v47_osum_turn_early.patch). Which of v44 (the O sum's addition under the next
# step's Q K product; an item's last segment up to interval + 2 tiles) and v46 (v44 plus the
# tail step's addition: up to interval + 1) to promote, and whether v47 (v44 passing the
# ping-pong turn before the addition; same bytes as v44 expected) beats v44. The V = 1 bias
# by position, compare.sh against 99940d0 (reference checks, timing two rounds; the bytes
# differ where a last addition moved), then v47's bytes against v44's.
# Usage (device, repo root): bash dev/sessions/thirty-eighth_fwd_v44.sh > $OUT/fwd_v44.log 2>&1
export OMP_NUM_THREADS=16
V="check_forward check_v44_osum_under_qk check_v46_osum_under_qk_tail check_v47_osum_turn_early"
bash dev/forward/bias_by_position.sh $V
BYTES=0 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" bash dev/forward/compare.sh $V
CHECK=0 WORKLOADS="16x4096 16 16 1" bash dev/forward/compare.sh check_v44_osum_under_qk check_v47_osum_turn_early \
  | grep -E "same bytes|DIFFERS"
