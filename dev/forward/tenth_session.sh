#!/bin/bash
# The logu-64k bisect, a candidate fix and the masked tile's cheaper mask (forward), and the
# staged dK / dV epilogue (backward), prepared in the ninth session, as one device command
# (~7 min).
# 55f3460 (FAST frames + the producer's item start) made logu-64k +3.2 % (8.65 -> 8.93 ms,
# harness, 3 rounds) while every other workload got 4-11 % faster; which half?
# Build here first (from the repo root), then carry dev/forward/bin:
#   git show bfe747f:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu
#   git show dd62ac5:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_final.cu
#   sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/bin/obj/fwd_final.cu \
#     dev/forward/v19_fast_only.patch dev/forward/v20_no_fast.patch dev/forward/v21_adaptive_first_tile.patch \
#     dev/forward/v22_mask_limit.patch
#   sh dev/backward/build.sh dev/backward/v15_staged_epilogue.patch
# and carry dev/forward/bin and dev/backward/bin. Near the 10-minute limit of one command, the
# backward part (the last compare.sh) can go in a second command.
export OMP_NUM_THREADS=16
B=dev/forward/bin
echo "== v21, v22 against dd62ac5: reference checks, bytes (both must write the base's), timing"
bash dev/forward/compare.sh check_fwd_final check_v21_adaptive_first_tile check_v22_mask_limit
echo "== logu-64k (catalogue lengths) and two equal-length workloads"
LOGU64K=lens:644,266,4260,1092,55,3420,612,333,161,197,46,18293,66,125,976,20103,124,1142,886,58,140,1162,9359,2016 # data/workloads/catalogue.tsv
for rep in 1 2; do
  for b in check_fwd_head check_v19_fast_only check_v20_no_fast check_fwd_final check_v21_adaptive_first_tile; do
    timeout 60 $B/$b mxfp8 $LOGU64K 16 16 1 none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/logu-64k $b /"
  done
done
for w in "16x1024 16 16 1" "16x4096 16 16 1"; do
  for b in check_fwd_head check_v19_fast_only check_v20_no_fast check_fwd_final check_v21_adaptive_first_tile; do
    timeout 60 $B/$b mxfp8 $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/${w%% *} $b /"
  done
done
echo "== the V^T transpose path: logu-64k's lengths as they are (documents starting off a 16-token"
echo "   boundary take the producer's shared-memory transpose) and rounded up to 16 (all by TMA; +0.12 % FLOPs)"
LOGU64K16=lens:656,272,4272,1104,64,3424,624,336,176,208,48,18304,80,128,976,20112,128,1152,896,64,144,1168,9360,2016
for rep in 1 2; do
  for L in $LOGU64K $LOGU64K16; do
    timeout 60 $B/check_fwd_final mxfp8 $L 16 16 1 none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/${L:0:12} check_fwd_final /"
  done
done
echo "== backward: v15_staged_epilogue vs the committed kernel (dK / dV bytes must match)"
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" bash dev/backward/compare.sh check_backward check_v15_staged_epilogue
