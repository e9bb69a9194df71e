#!/bin/bash
# Times harness builds of the backward against the working tree's (check_backward), mxfp8,
# alternated twice per workload (dev/backward/compare.sh, timing only), after each binary's
# wgmma / barrier / reduce-add mix in its mxfp8 default main kernel. For probes whose gradients
# are wrong by design. Forty-sixth session (its v109 / v110 probes; the forty-fifth session's v106
# script, dev/sessions/forty-fifth_probes.sh, runs through it too).
# Usage (device, repo root; carry dev/backward/bin/check_backward and the variants):
#   V="check_v109_own_dq_on ..." [WORKLOADS="16x4096 16 16 1|..."] bash dev/backward/time_variants.sh
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/backward/bin
for b in check_backward $V; do
  f=$(cuobjdump -sass $B/$b | grep -o "Function : _ZN10flamia_bwd12bwd_main_fp8ILi1ELb0E[^ ]*" | head -1 | sed 's/Function : //')
  printf "%-26s: " $b
  cuobjdump -sass -fun "$f" $B/$b 2>/dev/null | grep -oE "HGMMA|QGMMA|BAR\.SYNC|BAR\.ARV|UTMAREDG|FENCE\.VIEW\.ASYNC" | sort | uniq -c | tr '\n' ' '; echo
done
CHECK=0 TKINDS=mxfp8 WORKLOADS=${WORKLOADS:-"16x4096 16 16 1|4x4096 16 16 1|2x4096 16 16 1|16x1024 16 16 1"} \
  timeout 500 bash dev/backward/compare.sh check_backward $V
