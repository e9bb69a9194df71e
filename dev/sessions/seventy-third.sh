#!/bin/bash
# Ran (seventy-fourth session): `FLAMIA_GIT_COMMIT=04a1991 CALL_S=510 bash dev/sessions/seventy-third.sh lean ratios`
# on an H100 (224 s; dev/logs/seventy-fourth_*): v131 met the rule and was promoted (af207b3).
# Seventy-third session. The seventy-second session's steps (dev/sessions/seventy-second.sh), with
# the variants' binaries carried packed: build-carry, .whl and build-v129 + build-v130 +
# dev/forward/bin together passed the 64 MiB carry limit, so `sh dev/pack_carry.sh build-v129
# build-v130 build-v131 dev/forward/bin` packs the variants into build-pack (16.5 MB) and this script
# unpacks them first. Carry build-carry and build-pack (and .whl for h200). Pass FLAMIA_GIT_COMMIT=<hash>.
# v131_skip_and_tma_store is v129 and v130 together (build-v131 packed with them): FWD_VARIANTS="v129_masked_blocks_skip
# v130_o_tma_store v131_skip_and_tma_store" TEST_VARIANTS=v131_skip_and_tma_store runs the gpu tests on the pair's library
# only (its code holds both patches), keeping the step inside a call's 10 minutes.
# Usage: bash dev/sessions/seventy-third.sh [lean] [steps of seventy-second.sh]
# Step lean (for a call with little device time left): the same comparison in the order that matters
# if the call is cut: the timing first (3 workloads, all four builds alternated, twice), then the bytes
# and reference checks (compare.sh with one small timed layout), then the forward's gpu tests on
# build-v131's library; each part's log under $OUT as it finishes.
. dev/device_lib.sh
dev_unpack_carry
rest=$(for a in "$@"; do [ "$a" = lean ] || echo -n "$a "; done)
if [[ " $* " == *" lean "* ]]; then
  dev_carry
  dev_forward_lean lean $PWD/build-v131 check_forward check_v129_masked_blocks_skip check_v130_o_tma_store \
    check_v131_skip_and_tma_store
  (cd $OUT && tar -czf lean_logs.tgz logs && rm -rf logs)
  echo "== timing ($(dev_elapsed) s)"
  cat $OUT/lean_timing.log
  export RATIO_TIMEOUT=${RATIO_TIMEOUT:-$(( ${CALL_S:-570} - $(dev_elapsed) ))} # the ratios get what is left of the call (CALL_S: its limit less a margin, when less device time is left)
fi
# the other steps (e.g. `lean ratios`: then the default mode's acceptance ratios, ~4 minutes, carry .whl)
[ -n "$rest" ] && bash dev/sessions/seventy-second.sh $rest
exit 0
