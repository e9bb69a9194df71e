#!/bin/bash
# Fortieth session (~3 min; carry dev/backward/bin/check_backward, check_v100_panel_late_on and
# check_v101_probe_no_vote_on; build: sh dev/backward/build.sh
# "dev/backward/v100_panel_late.patch@on=BWD_PANEL_LATE=1"
# "dev/backward/v101_probe_no_vote.patch@on=BWD_NO_VOTE=1"). v100: the F16 dO panel waited
# for after P; v101 (probe): the tile vote replaced by a plain barrier. Checked (bytes in the
# deterministic mode, the default kernels against the reference), then timed.
# Usage (device, repo root): bash dev/sessions/fortieth_bwd_panel.sh > $OUT/bwd_panel.log 2>&1
export OMP_NUM_THREADS=16
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand5000:11 4 4 1" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v100_panel_late_on check_v101_probe_no_vote_on
TKINDS=exact CHECK=0 WORKLOADS="16x4096 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v100_panel_late_on check_v101_probe_no_vote_on
