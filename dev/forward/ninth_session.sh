#!/bin/bash
# The forward experiments prepared in the eighth session, as one device command (~5 min).
# Build here first (from the repo root), then carry dev/forward/bin:
#   git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu
#   sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v16_split_exit.patch \
#     dev/forward/v18_item_turn.patch "dev/forward/v15_bounds.patch@nomma=FWD_BOUND=1" \
#     "dev/forward/v15_bounds.patch@nosoftmax=FWD_BOUND=2"
# (1) v16 and v18 against the committed kernel: reference checks, bytes, timing;
# (2) the ping-pong hypothesis (docs/hopper-port.md, forward next steps): the committed
#     kernel with PINGPONG=0 on long and short documents;
# (3) the bound study on the direct form (v15): no MMA / no softmax.
B=dev/forward/bin
echo "== (1) v16, v18 vs the committed kernel"
bash dev/forward/compare.sh check_fwd_head check_v16_split_exit check_v18_item_turn
echo "== (2) ping-pong off"
for w in "16x4096 16 16 1" "16x1024 16 16 1" "64x1024 16 16 1"; do
  for pp in 1 0 1 0; do
    PINGPONG=$pp timeout 40 $B/check_fwd_head mxfp8 $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/${w%% *} PINGPONG=$pp /"
  done
done
echo "== (3) bounds on the direct form"
CHECK=0 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" bash dev/forward/compare.sh check_fwd_head check_v15_bounds_nomma check_v15_bounds_nosoftmax | grep -v "== QSCALE"
