#!/bin/bash
# Thirty-fourth session: dev/forward/v35_l_codes (l from the P V product: a 2-row l tile
# after each V^T stage, wgmma m64n136k32, no row-sum FFMAs) against the head, one command
# (~5 min; built here: `git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v35_l_codes.patch`,
# carry dev/forward/bin). 1. both builds against the row reference with l as the sum of the P
# codes (L_CODES=1) and with today's l; 2. dev/forward/compare.sh (the library reference's
# checks, bytes, timing of mxfp8 and exact, two rounds).
# Usage (device, repo root): bash dev/sessions/thirty-fourth_lcodes.sh > $OUT/lcodes.log 2>&1
export OMP_NUM_THREADS=16
B=dev/forward/bin
for b in check_fwd_head check_v35_l_codes; do
  for lc in 0 1; do
    for args in "mxfp8 rand3000:1 4 2 1" "exact rand2000:2 4 4 0" "mxfp8 2x4096 4 4 1" "exact 2x4096 4 2 1"; do
      if [ $lc = 1 ]; then e="L_CODES=1"; else e="X=0"; fi
      env $e timeout 60 $B/$b $args sample4096 2>&1 | tail -1 | cut -c1-170 | sed "s/^/$b L_CODES=$lc: /"
    done
  done
done
RECIPES="mxfp8 exact" WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_head check_v35_l_codes
