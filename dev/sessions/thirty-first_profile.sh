#!/bin/bash
# Thirty-first session: the forward at 74dacd8 (v27) under ncu on the target workload, 16x4096,
# and on 16x1024 (where the item boundary is half the time): warp-state, scheduler and
# source counters (dev/ncu_profile.sh), stall samples per SASS instruction, summed by opcode
# and in 64-instruction bins of program order (dev/backward/stalls.py --bins 64).
# The harness is built here (`git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu`) and carried (dev/forward/bin).
# Usage (device, repo root): bash dev/sessions/thirty-first_profile.sh > $OUT/profile.log 2>&1
# BINS (default check_fwd_head) and WLS (default "16x4096 16 16 1|16x1024 16 16 1") pick other
# harness builds and workloads; each profile is named <build>_<workload> (check_ dropped) unless BINS is the default.
export OMP_NUM_THREADS=16
O=${OUT:-/tmp}
BINS=${BINS:-check_fwd_head}
IFS='|' read -r -a wls <<< "${WLS:-16x4096 16 16 1|16x1024 16 16 1}"
for b in $BINS; do
for w in "${wls[@]}"; do
  n=fwd_${w%% *}
  [ "$BINS" = check_fwd_head ] || n=${b#check_}_${w%% *}
  echo "== $n"
  timeout 200 bash dev/ncu_profile.sh $n fwd_kernel dev/forward/bin/$b mxfp8 $w none 1
  python3 dev/backward/stalls.py $O/ncu_${n}_sass.csv --bins 64 2>/dev/null | tail -40
done
done
