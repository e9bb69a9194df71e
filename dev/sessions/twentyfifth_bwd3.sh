#!/bin/bash
# Twenty-fifth session, fourth device command (~6 min, dev/backward/bin carried) by
# dev/backward/probe.sh: v75 (Q / dO rows, and @panel the F16 dO panel, by one TMA box
# through a 5-D tensor map in the permuted row order; reads past T on a tile that crosses
# it, so its bytes are only meaningful on 2x1536) and v76 (its product form: cp.async kept
# for a tile that crosses T) against the head: bytes in the deterministic mode and the
# default mode against the reference (both recipes; rand3000:1 exercises v76's fallback),
# the backward alone timed (both recipes; 16x4096, rand65536:5; alternated, twice);
# then v76 applied, the library built by meson, and the backward's gpu tests. v75 itself is
# not run (device time: v76 takes its path on every tile inside T; its binary stays buildable).
# Usage (device, repo root): bash dev/sessions/twentyfifth_bwd3.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v76_tma_perm_rows TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|2x1536 4 2 1" WORKLOADS="16x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/probe.sh v75_tma_perm_map_panel v76_tma_perm_rows
