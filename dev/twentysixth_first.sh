#!/bin/bash
# Prepared in the twenty-fifth session for the next one (~6 min with dev/backward/bin carried,
# built by `sh dev/backward/build.sh dev/backward/v76_tma_perm_rows.patch
# dev/backward/v77_tma_perm_panel.patch` at the commit that added this script, then
# `mv dev/backward/bin/check_backward dev/backward/bin/check_head`), by dev/backward/probe.sh:
#   v76_tma_perm_rows   Q / dO code rows by one TMA box each through a 5-D map whose strides
#                       walk the rows in flamia_fp8_perm_row's order (measured -0.9 / -1.4 %)
#   v77_tma_perm_panel  v76 + the F16 dO panel the same way (v75 @panel, without the fallback
#                       for a tile that crosses T, measured -2.8 / -2.7 %)
# against the head: bytes in the deterministic mode (both recipes; rand3000:1 runs the
# cp.async fallback on its last tile, 2x1536 the TMA path only), the default mode against
# the reference, the backward alone timed (both recipes; 16x4096, 4x4096, rand65536:5);
# then v77 applied and the backward's gpu tests. Promote v77 if its bytes equal the head's
# and it beats v76; then Table A at the promoted commit (dev/twentysecond_final.sh: the whole
# gpu suite, memcheck and racecheck, ours, peers, ncu of the training call).
# Usage (device, repo root): bash dev/twentysixth_first.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v77_tma_perm_panel TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|2x1536 4 2 1" \
  bash dev/backward/probe.sh v76_tma_perm_rows v77_tma_perm_panel
