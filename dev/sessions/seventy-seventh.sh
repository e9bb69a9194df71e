#!/bin/bash
# Seventy-seventh session. Step (default: items):
#   items: dev/forward/item_sketch with the epilogue as forward.cu has it since v131 (stmatrix into a
#     128-byte-swizzled tile, one thread's bulk store; the seventy-sixth session's rows had 4-byte
#     stores with 8-way bank conflicts, kept as the "plain-store" row) and v31's order in outline:
#     "next S ahead", the next item's first S issued in the last turn with the last P V, so that it
#     runs under this item's epilogue (carry dev/forward/bin after `sh dev/forward/item_sketch/build.sh`).
#     Three rounds at NT = 32 and NT = 8.
#     The seventy-sixth session's probe (H100, b08199a's binary; dev/logs/seventy-seventh_item_sketch_h100.log):
#     without the epilogue +2.7 % at NT = 32 and +19 % at NT = 8 (predicted +2..+4 / +6..+12 %), so
#     the outline's epilogue held ~16 % of the time on 1..8-tile items, with its conflicted stores.
#     Predicted (written before any run): today's with the TMA epilogue 720-770 TFLOP/s at NT = 8 and
#     835-860 at NT = 32 (between the plain-store row and the probe); next S ahead +2..+5 % over it at
#     NT = 8 and +0..+2 % at NT = 32 (the epilogue's chain runs under the first S, ~0.2 us a
#     warpgroup); next S ahead without the epilogue within +-2 % of the probe.
#     Rule: re-port v31's order onto today's forward.cu (v133) only if next S ahead beats today's by
#     >= 4 % at NT = 8 and >= 1 % at NT = 32 in every round, with today's drift check within 2 %.
# Usage: bash dev/sessions/seventy-seventh.sh [items]
. dev/device_lib.sh
steps=${*:-items}
if [[ " $steps " == *" items "* ]]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  for round in 1 2 3; do
    for nt in 32 8; do
      timeout 60 dev/forward/bin/item_sketch $nt $(( nt == 32 ? 2 : 8 )) 2>&1 | tee -a $OUT/item_sketch.log
      echo "round $round item_sketch $nt: rc=${PIPESTATUS[0]} ($(dev_elapsed) s)"
    done
  done
fi
echo "done ($(dev_elapsed) s)"
