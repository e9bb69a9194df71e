#!/bin/bash
# Prepared in the twenty-fifth session for the next one (~6 min with dev/backward/bin carried,
# built by `sh dev/backward/build.sh dev/backward/v77_tma_perm_panel.patch
# dev/backward/v79_tma_row_consts7.patch` at the commit that added this script, then
# `mv dev/backward/bin/check_backward dev/backward/bin/check_head`; without them probe.sh
# builds everything on the device), by dev/backward/probe.sh:
#   v77_tma_perm_panel    Q / dO code rows and the F16 dO panel by one TMA box each through
#                         5-D maps whose strides walk the rows in flamia_fp8_perm_row's order
#                         (v76, the Q / dO part, measured -0.9 / -1.4 %; v75 @panel, the
#                         panel too without the fallback for a tile that crosses T, -2.8 / -2.7 %)
#   v79_tma_row_consts7   v77 + the row constants' fields 0-6 by one 2-D TMA box (eQ moved to
#                         field 6 in bwd_pre_do), the tile's vote per warp after its mbarrier wait
# against the head: bytes in the deterministic mode (both recipes; rand3000:1 runs the
# cp.async fallback on its last tile, 2x1536 the TMA paths only), the default mode against
# the reference, the backward alone timed (both recipes; 16x4096, 4x4096, rand65536:5); then
# v79 applied and the backward's gpu tests. Promote the last exact one that beats the one
# before it; then Table A at the promoted commit (dev/sessions/twentysecond_final.sh: the whole gpu
# suite, memcheck and racecheck, ours, peers, ncu of the training call).
# Usage (device, repo root): bash dev/sessions/twentysixth_first.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v79_tma_row_consts7 TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|2x1536 4 2 1" \
  bash dev/backward/probe.sh v77_tma_perm_panel v79_tma_row_consts7
