#!/bin/bash
# The next session's first device command (prepared in the tenth, compiled, not run; ~6 min):
# 1. quantize v7_vt_place (mxfp8-exact's V^T placement: one cu_seqlens search per lane, only
#    in CTAs with a V slot) against the committed kernel: every workspace byte on the full
#    battery, then the three kinds timed on 4 workloads, builds alternated, twice. Expected:
#    mxfp8-exact back from 0.507 to ~0.43 ms at 16x4096 and from 0.590 at logu-64k.
# 2. backward v16_doc_aligned_t (Q^T / K^T document-aligned, every transposed tile by TMA)
#    against the committed kernel: dQ / dK / dV bytes on packed layouts, the reference checks,
#    timing on 16x4096, logu-64k (catalogue lengths) and rand65536:5. Expected: logu-64k
#    ~39.1 -> ~30.5 ms (dev/backward/logs/lens_tenth.log), 16x4096 unchanged.
# Build here first (repo root), then carry dev/quantize/bin and dev/backward/bin:
#   sh dev/quantize/build.sh dev/quantize/v7_vt_place.patch
#   sh dev/backward/build.sh dev/backward/v16_doc_aligned_t.patch
# Usage (device, repo root): bash dev/sessions/eleventh_session.sh 2>&1 | tee $OUT/eleventh.log
export OMP_NUM_THREADS=16
echo "== quantize: v7_vt_place vs the committed kernel (bytes, then timing)"
bash dev/quantize/compare.sh check_quantize check_v7_vt_place
echo "== backward: v16_doc_aligned_t vs the committed kernel (bytes, reference, timing)"
LOGU64K=lens:644,266,4260,1092,55,3420,612,333,161,197,46,18293,66,125,976,20103,124,1142,886,58,140,1162,9359,2016 # data/workloads/catalogue.tsv
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|$LOGU64K 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v16_doc_aligned_t
# 3. where a short-document backward CTA spends its time (the Table A fit charges 27 us per
#    CTA, 37 % of 16x1024's backward): ncu stall samples per SASS address of the committed
#    kernel -> $OUT/ncu_bwd.txt, $OUT/ncu_bwd_sass.csv (map onto cuobjdump -sass of
#    dev/backward/bin/check_backward); ~1 min
[ "${PROFILE:-1}" = 1 ] && bash dev/backward/profile.sh check_backward mxfp8 "16x1024 16 16 1"
