#!/bin/bash
# Forty-sixth session: the backward main kernel's time by phase (dev/ncu_phases.py) at 16x4096,
# the target's size, beside 2x4096 (where the forty-fifth session's page was taken): ncu's SASS
# source page of check_backward (mxfp8, the kernels of e8204a2), one launch each, clocks not locked.
# Usage (device, repo root; carry dev/backward/bin/check_backward): bash dev/sessions/forty-sixth_fifth.sh
O=${OUT:-/tmp/flamia-out}
S="--clock-control none -c 1 --section SourceCounters --page source --csv --print-source sass"
P="0x0:kernel start,0x3ea0:tile start,0x60b0:S and dP,0x66e0:P codes,0xbcb0:dS,0xc4e0:dS codes,0xd890:dK dV,0xe0b0:dQ,0xec80:dQ adds,0xef80:epilogue"
for w in 2x4096 16x4096; do
  s=$SECONDS
  GPU_FWD=1 timeout 240 ncu $S -k regex:bwd_main_fp8 -s 2 dev/backward/bin/check_backward mxfp8 $w 16 16 1 none 3 \
    > "$O/ncu_sass_bwd_$w.csv" 2>/dev/null; echo "== $w: ncu rc=$? ($((SECONDS - s)) s)"
  python3 dev/ncu_phases.py "$O/ncu_sass_bwd_$w.csv" | sed -n '4,6p;36,40p'
  PHASES=$P python3 dev/ncu_phases.py "$O/ncu_sass_bwd_$w.csv"
  gzip -f "$O/ncu_sass_bwd_$w.csv"
done
