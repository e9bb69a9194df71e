#!/bin/bash
# Twenty-fifth session, second device command (~7 min, dev/backward/bin carried): v73's TMA
# row loads against the head by dev/backward/compare.sh: bytes in the deterministic mode and
# the default mode against the reference (mxfp8 and mxfp8-exact, two layouts), then the
# backward alone timed (both recipes; 16x4096 and rand65536:5; alternated, twice).
#   check_v73_tma_rows        Q / dO rows by 2-row TMA boxes (exact if the swizzle follows the address)
#   check_v73_tma_rows_panel  + the F16 dO panel by 2-row boxes
#   check_v73_tma_rows_one    one 128-row box a tensor: the timing bound (wrong by design)
# Usage (device, repo root): bash dev/sessions/twentyfifth_bwd.sh > $OUT/run.log 2>&1
OUT=${OUT:-/tmp/flamia-out}
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_head check_v73_tma_rows check_v73_tma_rows_panel check_v73_tma_rows_one > $OUT/bwd_probe.log 2>&1
grep -E "==|FAIL|bwd " $OUT/bwd_probe.log
