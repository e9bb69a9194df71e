#!/bin/bash
# Twenty-third session, second backward probe (~6-7 min with dev/backward/bin carried): two
# exact variants against the head (v53 promoted), by dev/backward/probe.sh (bytes in the
# deterministic mode, the default mode against the reference, timing of mxfp8 AND
# mxfp8-exact), then the backward's gpu tests with v58 applied. Predictions in the patches:
#   v56_exact_pair_g  v55 (mxfp8's exponent section per block from the slots, by lanes and
#                     shuffles: two warpgroup barriers fewer) + mxfp8-exact's pair's G without
#                     its exchange barrier; its mxfp8 SASS is v55's, so mxfp8 times v55
#   v58_s_first       v56 + S and dP in two commit groups: P built while dP's products run
# Promote the last one that is exact (bytes the same), passes the checks and the tests, and
# beats the one before it beyond the drift between rounds.
# Usage (device, repo root): bash dev/sessions/twentythird_bwd2.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v58_s_first TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0|2x1536 4 2 1" \
  bash dev/backward/probe.sh v56_exact_pair_g v58_s_first
