#!/bin/bash
# Prepared in the twenty-third session for the next one (~5-6 min with dev/backward/bin
# carried, built at the commit that added this script): two exact variants against the
# head (v59), by dev/backward/probe.sh (bytes in the deterministic mode, mxfp8 and exact,
# the default mode against the reference, mxfp8 timing), then the backward's gpu tests
# with v62 applied. Predictions in the patches' headers:
#   v60_redux_max     mxfp8's dS block maximum over the warp by REDUX instead of a
#                     5-step shuffle chain
#   v62_warp_dq_adds  v60 + mxfp8's default dQ reduce-adds issued per warp (16-row TMA
#                     boxes): the sub-step's last warpgroup barrier gone
# Promote the last one that is exact (bytes the same), passes the checks and the tests, and
# beats the one before it beyond the drift between rounds; then Table A at the promoted
# commit (dev/twentysecond_final.sh: gpu suite, sanitizers, ours, peers, ncu).
# Usage (device, repo root): bash dev/twentyfourth_bwd.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v62_warp_dq_adds LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0|2x1536 4 2 1" \
  bash dev/backward/probe.sh v60_redux_max v62_warp_dq_adds
