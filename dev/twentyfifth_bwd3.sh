#!/bin/bash
# Twenty-fifth session, fourth device command (~4 min, dev/backward/bin carried): v75 (Q / dO
# rows, and @panel the F16 dO panel, by one TMA box through a 5-D tensor map in the permuted
# row order) against the head by dev/backward/compare.sh: bytes (deterministic mode) and the
# default mode against the reference on two 128-aligned layouts (v75 reads past T on a
# tile that crosses it), both recipes; then the backward alone timed (16x4096, 4x4096,
# rand65536:5; alternated, twice).
# Usage (device, repo root): bash dev/twentyfifth_bwd3.sh > $OUT/run.log 2>&1
OUT=${OUT:-/tmp/flamia-out}
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="3x1024 4 4 0|2x1536 4 2 1" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_head check_v75_tma_perm_map check_v75_tma_perm_map_panel > $OUT/bwd_probe.log 2>&1
grep -E "==|FAIL|bwd |rror" $OUT/bwd_probe.log
