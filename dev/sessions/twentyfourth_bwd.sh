#!/bin/bash
# Prepared in the twenty-third session for the next one (~6-7 min with dev/backward/bin
# carried, built at the commit that added this script): three exact variants against the
# head (v59), by dev/backward/probe.sh (bytes in the deterministic mode, mxfp8 and exact,
# on two layouts; the default mode against the reference; mxfp8 AND mxfp8-exact timed), then
# the backward's gpu tests with v64 applied. Predictions in the patches' headers:
#   v60_redux_max     mxfp8's dS block maximum over the warp by REDUX instead of a
#                     5-step shuffle chain
#   v62_warp_dq_adds  v60 + mxfp8's default dQ reduce-adds issued per warp (16-row TMA
#                     boxes): that kernel's last warpgroup barrier gone (its other kernels
#                     are v60's, so the deterministic bytes check v60's code; the default
#                     mode's check against the reference checks this one)
#   v64_exact_redux   v62 + mxfp8-exact's dK partial exponent by REDUX (mxfp8 as v62)
# Promote the last one that is exact (bytes the same), passes the checks and the tests, and
# beats the one before it beyond the drift between rounds (v64: on mxfp8-exact); then Table A
# at the promoted commit (dev/sessions/twentysecond_final.sh: gpu suite, sanitizers, ours, peers, ncu).
# Usage (device, repo root): bash dev/sessions/twentyfourth_bwd.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v64_exact_redux TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  bash dev/backward/probe.sh v60_redux_max v62_warp_dq_adds v64_exact_redux
