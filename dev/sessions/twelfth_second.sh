#!/bin/bash
# Twelfth session, second device command (~7 min): bwd_pre_do variants against the committed
# kernel (check_backward, v19 promoted):
#   v21_zero_dq      pre_do zeroes dq_accum (and the deterministic turns): no memset pass
#   v22_pre_heads    + 4 heads of a window per CTA, the next head's rows loaded under this
#                    head's arithmetic (64 registers, 4 CTAs per SM); _h2: 2 heads; _minb3:
#                    unbounded registers (80), 3 CTAs per SM
#  1. bytes (deterministic dQ) for three kinds, the default mode against the CPU reference on
#     one layout per kind (the dq_accum zeroing is what the default mode's reduce-adds need);
#  2. the backward's time at 16x4096 and 16x1024 (mxfp8), alternated;
#  3. ncu durations of bwd_pre_do at 16x4096 (v19: 533 us mxfp8, 470 exact; predicted v22 ~300).
# Build here first (repo root):
#   sh dev/backward/build.sh dev/backward/v21_zero_dq.patch dev/backward/v22_pre_heads.patch \
#     dev/backward/v22_pre_heads.patch@h2=PRE_HEADS=2 dev/backward/v22_pre_heads.patch@minb3=PRE_MINB=3
# and carry dev/backward/bin.
# Usage (device, repo root): bash dev/sessions/twelfth_second.sh > $OUT/second.log 2>&1
export OMP_NUM_THREADS=16
stamp() { echo "== [$SECONDS s] $*"; }
B=dev/backward/bin
NEWS="check_v21_zero_dq check_v22_pre_heads check_v22_pre_heads_h2 check_v22_pre_heads_minb3"
stamp compare
KINDS="mxfp8 exact bf16" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=0 \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" bash dev/backward/compare.sh check_backward $NEWS
stamp default mode vs reference
for kind in mxfp8 exact bf16; do
  for b in $NEWS; do
    timeout 60 $B/$b $kind rand3000:1 4 2 1 full 2>&1 | grep -E "PASS|FAIL" | sed -E "s/^(.{120}).*(\| unwritten=.*)$/\1 ... \2/; s/^/default $kind $b: /"
  done
done
stamp ncu
for kind in mxfp8 exact; do
  for b in check_backward $NEWS; do
    GPU_FWD=1 timeout 60 bash dev/ncu_durations.sh "16x4096 $kind $b" bwd_pre_do $B/$b $kind 16x4096 16 16 1 none 0
  done
done
stamp done
