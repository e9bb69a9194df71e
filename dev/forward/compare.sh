#!/bin/bash
# Device comparison of builds of the forward dev harness (dev/forward/bin/check_*), the
# first one the base: correctness of each against flamia_ref_forward on small packed
# layouts (the harness's PASS / FAIL: the gpu suite's bounds, numerics.md 8.2), the O / lse
# / frame bytes of each against the base's on layouts with many work items per CTA (two of
# them with QSCALE=40 logits, so that the SPLIT launch runs), then the forward alone timed
# (median of 30) on the equal-length and packed workloads, all builds alternated, twice (REPS).
# Build here first and carry dev/forward/bin, e.g. the committed kernel as the base:
#   git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu
#   sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v18_item_turn.patch
# Usage (device, repo root): bash dev/forward/compare.sh check_fwd_head check_forward [check_v18_item_turn ...]
#   WORKLOADS="16x4096 16 16 1|..." narrows the timing; CHECK=0 skips the reference checks;
#   BYTES=0 skips the byte comparisons (a change meant to move the arithmetic);
#   RECIPES="mxfp8 exact" times each workload under each recipe (default mxfp8).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/forward/bin
A=$1 ALL="$*"
if [ "${CHECK:-1}" = 1 ]; then
  for b in $ALL; do
    for args in "mxfp8 rand3000:1 4 2 1" "exact rand2000:2 4 4 0" "bf16 rand3000:1 4 2 1"; do
      timeout 30 $B/$b $args full 2>&1 | tail -1 | sed -E "s/^/$b: /; s/^(.{120}).*(unwritten=.*)$/\1 ... \2/"
    done
  done
fi
# bytes: a change meant to keep the arithmetic (scheduling, the grid, the item boundary)
# shows "same bytes"
T=$(mktemp -d)
same_bytes() { # same_bytes VAR=VALUE ARGS...: every build's dump against the base's
  local env=$1; shift
  for b in $ALL; do env $env FWD_DUMP=$T/$b.bin timeout 60 $B/$b "$@" none > /dev/null 2>&1; done
  for b in $ALL; do
    [ "$b" = "$A" ] && continue
    if cmp -s $T/$A.bin $T/$b.bin; then echo "== $env $*: $b same bytes"; else echo "== $env $*: $b DIFFERS from $A"; fi
  done
}
[ "${BYTES:-1}" = 1 ] && for spec in "1 mxfp8 rand20000:3 8 2 1" "1 exact rand20000:4 8 8 1" "1 bf16 rand12000:5 4 2 1" \
            "1 mxfp8 rand9000:6 4 4 0" "1 mxfp8 3x4096 16 16 1" "40 mxfp8 rand9000:7 4 2 1" "40 exact rand9000:8 4 2 1"; do
  same_bytes QSCALE=${spec%% *} ${spec#* }
done
# rows whose scores are all negative (check_forward NEGQ=1): a row maximum below zero
[ "${BYTES:-1}" = 1 ] && for spec in "mxfp8 rand9000:9 4 2 1" "mxfp8 3x4096 8 8 1"; do same_bytes NEGQ=1 $spec; done
if [ "${CHECK:-1}" = 1 ]; then
  for b in $ALL; do NEGQ=1 timeout 30 $B/$b mxfp8 rand3000:10 4 2 1 full 2>&1 | tail -1 | sed -E "s/^/NEGQ=1 $b: /" | cut -c1-200; done
fi
IFS='|' read -r -a WL <<< "${WORKLOADS:-16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|64x1024 16 16 1|rand65536:5 16 16 1}"
for r in ${RECIPES:-mxfp8}; do
  for w in "${WL[@]}"; do
    for rep in $(seq ${REPS:-2}); do
      for b in $ALL; do
        timeout 40 $B/$b $r $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/$r ${w%% *} $b /"
      done
    done
  done
done
