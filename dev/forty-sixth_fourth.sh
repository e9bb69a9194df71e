#!/bin/bash
# Forty-sixth session: the v110 probe (dev/backward/v110_summed_dq.patch, timing only: each
# warpgroup's dQ from its own key blocks over all 128 dims, no CTA barrier before it, the two
# partials summed in shared memory before one set of reduce-adds; @bar keeps the barrier) against the working tree's
# backward in the harness, mxfp8, alternated twice, at 16x4096, 4x4096, and 16x1024; first
# each binary's wgmma / barrier mix in its mxfp8 main kernel.
# Usage (device, repo root; carry dev/backward/bin/check_backward and check_v110_summed_dq_*):
#   bash dev/forty-sixth_fourth.sh
export OMP_NUM_THREADS=16
B=dev/backward/bin
V="check_v110_summed_dq_on check_v110_summed_dq_bar"
for b in check_backward $V; do
  f=$(cuobjdump -sass $B/$b | grep -o "Function : _ZN10flamia_bwd12bwd_main_fp8ILi1ELb0E[^ ]*" | head -1 | sed 's/Function : //')
  printf "%-26s: " $b
  cuobjdump -sass -fun "$f" $B/$b | grep -oE "HGMMA|QGMMA|BAR\.SYNC|BAR\.ARV|UTMAREDG|FENCE\.VIEW\.ASYNC" | sort | uniq -c | tr '\n' ' '; echo
done
CHECK=0 TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1" \
  timeout 500 bash dev/backward/compare.sh check_backward $V
