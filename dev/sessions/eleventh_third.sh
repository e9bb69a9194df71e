#!/bin/bash
# The eleventh session's third device command (~4 min): the backward's small kernels.
# check_backward = the working tree: v16 + v17_tr_slots + v18 (bwd_pre_do issues every
# global load first; bwd_dq_out keeps 4 rows per warp in flight), against v16_head (HEAD's
# backward.cu) and pre_v16 (ef7fc22's): dQ / dK / dV bytes (deterministic mode) and the
# reference checks on packed layouts, mxfp8 and exact; timing; ncu per-kernel durations.
# Expected (ncu, 16x4096): bwd_pre_do 703 -> ~250 us, bwd_dq_out 190 -> ~110 us,
# bwd_transpose 307 -> 191 us (v17, measured in the second command).
# Build here first (repo root), then carry dev/backward/bin:
#   git show ef7fc22:kernels/sm90/backward.cu > dev/backward/bin/obj/pre_v16.cu
#   git show 05d6519:kernels/sm90/backward.cu > dev/backward/bin/obj/v16_head.cu
#   sh dev/backward/build.sh dev/backward/bin/obj/pre_v16.cu dev/backward/bin/obj/v16_head.cu
# Usage (device, repo root): bash dev/sessions/eleventh_third.sh > $OUT/third.log 2>&1
export OMP_NUM_THREADS=16
LOGU64K=lens:644,266,4260,1092,55,3420,612,333,161,197,46,18293,66,125,976,20103,124,1142,886,58,140,1162,9359,2016 # data/workloads/catalogue.tsv
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|$LOGU64K 16 16 1" \
  bash dev/backward/compare.sh check_v16_head check_backward check_pre_v16
echo "== per-kernel durations (ncu, us)"
for kind in mxfp8 exact; do
  for b in check_v16_head check_backward; do
    GPU_FWD=1 timeout 120 bash dev/ncu_durations.sh "16x4096 $kind $b" "bwd_" dev/backward/bin/$b $kind 16x4096 16 16 1 none 1
  done
done
