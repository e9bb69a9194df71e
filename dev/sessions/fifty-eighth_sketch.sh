#!/bin/bash
# Fifty-eighth session: k_sketch (dev/backward/k_sketch/k_sketch.cu), the skeleton of a backward
# main kernel with two CTAs an SM, each one warpgroup walking its 64-key tile's sub-steps alone
# (no CTA barrier shared by two warpgroups), timed over 16x4096's causal grid against the same
# code at one CTA an SM (k_sketch_one), its probes without dQ's reduce-adds / without wgmma, the
# fortieth session's i_sketch, and today's whole backward in the dev harness (check_backward,
# fe63a67's kernels; its main kernel is the whole less ~0.7 ms of per-token passes on an H100).
# Binaries built here and carried (dev/backward/bin/{k_sketch,k_sketch_one,k_sketch_noadds,
# k_sketch_nomma,i_sketch,check_backward}); build lines in k_sketch.cu's header.
# Predicted: k_sketch 6.5-8.5 ms (its second stream against doubled dQ adds and tile loads),
# k_sketch_one 1.5-1.8x k_sketch. Decision: worth building only if k_sketch <= 0.85x today's
# main kernel in the same run.
# Second run (`adds64`): k_sketch against k_sketch_adds64 (-DK_ADDS64=1: dQ's adds by thread 0 as
# four [64][32] boxes after a barrier of the one-warpgroup CTA, instead of each warp's lane 0
# adding its 16 rows; the first run's no-adds probe took 17 % off) and its one-CTA form.
# Predicted: adds64 -5..-10 % against k_sketch; building the structure pays only at <= 0.85x
# today's main kernel.
# Third run (`short`): k_sketch and its one-CTA form on 64x1024 (`k_sketch 64 1024`), where
# today's kernel pays a CTA's prologue and epilogue every ~4.5 tile pairs and a second CTA an SM
# could run under them; 16x4096 again beside it, and the dev harness's whole backward on both
# (its main kernel on an H100 by ncu, fifty-seventh session: 2,260 us at 64x1024, 7,360 at
# 16x4096). Predicted: k_sketch 0.85-0.95x today's main kernel at 64x1024.
# Usage (device, repo root): bash dev/sessions/fifty-eighth_sketch.sh [adds64|short] > $OUT/sketch.log 2>&1
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
SK="k_sketch k_sketch_one k_sketch_noadds k_sketch_nomma i_sketch"
[ "${1:-}" = adds64 ] && SK="k_sketch k_sketch_adds64 k_sketch_adds64_one"
if [ "${1:-}" = short ]; then
  for round in 1 2; do
    for s in k_sketch k_sketch_one; do timeout 60 $B/$s 64 1024 || echo "$s: rc=$?"; done
    timeout 60 $B/k_sketch || echo "k_sketch: rc=$?"
    for w in "64x1024 16 16 1" "16x4096 16 16 1"; do
      GPU_FWD=1 timeout 60 $B/check_backward mxfp8 $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/check_backward ${w%% *}: /"
    done
  done
  exit 0
fi
for round in 1 2; do
  for s in $SK; do
    timeout 60 $B/$s || echo "$s: rc=$?"
  done
  GPU_FWD=1 timeout 60 $B/check_backward mxfp8 16x4096 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/check_backward 16x4096: /"
done
