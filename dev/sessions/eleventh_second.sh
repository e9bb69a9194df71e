#!/bin/bash
# The eleventh session's second device command (~5 min):
# 1. quantize v8_vt_windows (mxfp8-exact's windows over V^T positions) against the committed
#    kernel (v7 promoted): every workspace byte on the full battery, then timing on 4
#    workloads, builds alternated, twice. Expected: logu-64k mxfp8-exact 0.588 -> ~0.47 ms.
# 2. backward: the committed kernel (v16 promoted) against the one before it (pre_v16 =
#    ef7fc22's backward.cu) and v17_tr_slots (bwd_transpose: 4 / 8 / 16 heads per CTA, one
#    position search per CTA): bytes, reference checks, timing. Expected: v17 takes back
#    v16's +1.5 % at 16x4096.
# 3. per-kernel durations (ncu, gpu__time_duration) of the four backward launches at 16x4096
#    and logu-64k for pre_v16, the committed kernel and v17: where v16's 16x4096 loss is.
# Build here first (repo root), then carry dev/quantize/bin and dev/backward/bin:
#   sh dev/quantize/build.sh dev/quantize/v8_vt_windows.patch
#   git show ef7fc22:kernels/sm90/backward.cu > dev/backward/bin/obj/pre_v16.cu
#   sh dev/backward/build.sh dev/backward/bin/obj/pre_v16.cu dev/backward/v17_tr_slots.patch \
#     dev/backward/v17_tr_slots.patch@s4=FLAMIA_BWD_TR_SLOTS=4 dev/backward/v17_tr_slots.patch@s16=FLAMIA_BWD_TR_SLOTS=16
# Usage (device, repo root): bash dev/sessions/eleventh_second.sh > $OUT/second.log 2>&1
export OMP_NUM_THREADS=16
echo "== quantize: v8_vt_windows vs the committed kernel (bytes, then timing)"
HIDE=bf16 bash dev/quantize/compare.sh check_quantize check_v8_vt_windows
echo "== backward: committed (v16) vs pre_v16 and v17_tr_slots (bytes, reference, timing)"
LOGU64K=lens:644,266,4260,1092,55,3420,612,333,161,197,46,18293,66,125,976,20103,124,1142,886,58,140,1162,9359,2016 # data/workloads/catalogue.tsv
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1" \
  WORKLOADS="16x4096 16 16 1|$LOGU64K 16 16 1|16x1024 16 16 1" \
  bash dev/backward/compare.sh check_backward check_pre_v16 check_v17_tr_slots check_v17_tr_slots_s4 check_v17_tr_slots_s16
echo "== per-kernel durations (ncu, us)"
for w in "16x4096 16 16 1" "$LOGU64K 16 16 1"; do
  for b in check_pre_v16 check_backward check_v17_tr_slots; do
    GPU_FWD=1 timeout 120 bash dev/ncu_durations.sh "${w:0:12} $b" "bwd_|quantize" dev/backward/bin/$b mxfp8 $w none 2
  done
done
