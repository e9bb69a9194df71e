#!/bin/bash
# Forty-fifth session: the v106 probes (dev/backward/v106_probes.patch: dV at the FP8 rate, no dS
# block maxima, no dQ staging / reduce-adds, all three) against the working tree's backward in
# the harness, timing only (their gradients are wrong by construction), mxfp8, alternated twice,
# at 16x4096, 4x4096, 2x4096 and 16x1024; first each binary's wgmma mix in its mxfp8 main kernel.
# Usage (device, repo root; carry dev/backward/bin/check_backward and check_v106_probes_*):
#   bash dev/forty-fifth_probes.sh
export OMP_NUM_THREADS=16
B=dev/backward/bin
V="check_v106_probes_dv check_v106_probes_ds check_v106_probes_dq check_v106_probes_all"
for b in check_backward $V; do
  f=$(cuobjdump -sass $B/$b | grep -o "Function : _ZN10flamia_bwd12bwd_main_fp8ILi1E[^ ]*" | head -1 | sed 's/Function : //')
  printf "%-24s %s: " $b "$f"
  cuobjdump -sass -fun "$f" $B/$b | grep -oE "HGMMA|QGMMA|BAR\.SYNC|BAR\.ARV|UBLKRED|FENCE\.VIEW\.ASYNC" | sort | uniq -c | tr '\n' ' '; echo
done
CHECK=0 TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|2x4096 16 16 1|16x1024 16 16 1" \
  timeout 480 bash dev/backward/compare.sh check_backward $V
