#!/bin/bash
# Twenty-fifth session, third device command (~4 min, dev/backward/bin carried): v74 (the
# next tile's loads after sub-step 0's dQ fence) against the head by dev/backward/compare.sh:
# bytes in the deterministic mode and the default mode against the reference (mxfp8 and
# mxfp8-exact, two layouts), then the backward alone timed (both recipes; 16x4096, 4x4096,
# rand65536:5; alternated, twice). If it is promoted, Table A follows at the promoted commit
# (dev/sessions/twentysecond_final.sh: gpu suite, sanitizers, ours, peers, ncu of the training call).
# Usage (device, repo root): bash dev/sessions/twentyfifth_bwd2.sh > $OUT/run.log 2>&1
OUT=${OUT:-/tmp/flamia-out}
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_head check_v74_late_loads > $OUT/bwd_probe.log 2>&1
grep -E "==|FAIL|bwd " $OUT/bwd_probe.log
