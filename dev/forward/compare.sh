#!/bin/bash
# Device comparison of two builds of the forward dev harness (dev/forward/bin/check_*):
# correctness of both against flamia_ref_forward on small packed layouts, then the
# forward alone timed (median of 30) on the equal-length and packed workloads, A and B
# alternated. Build here first and carry dev/forward/bin, e.g. the committed kernel:
#   git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu
#   sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu
# Usage (device, repo root): bash dev/forward/compare.sh check_fwd_head check_forward
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/forward/bin
A=$1 Bn=$2
for b in $A $Bn; do
  for args in "mxfp8 rand3000:1 4 2 1" "exact rand2000:2 4 4 0" "bf16 rand3000:1 4 2 1"; do
    timeout 30 $B/$b $args full 2>&1 | tail -1 | sed "s/^/$b: /" | cut -c1-170
  done
done
# bytes: O, lse and frames of both builds on layouts with many work items per CTA (a change
# meant to keep the bits, e.g. the persistent grid, shows "same bytes")
T=$(mktemp -d)
for args in "mxfp8 rand20000:3 8 2 1" "exact rand20000:4 8 8 1" "bf16 rand12000:5 4 2 1" "mxfp8 rand9000:6 4 4 0" "mxfp8 3x4096 16 16 1"; do
  for b in $A $Bn; do FWD_DUMP=$T/$b.bin timeout 60 $B/$b $args none > /dev/null 2>&1; done
  if cmp -s $T/$A.bin $T/$Bn.bin; then echo "== $args: same bytes"; else echo "== $args: $Bn DIFFERS from $A"; fi
done
for w in "16x4096 16 16 1" "4x4096 16 16 1" "16x1024 16 16 1" "64x1024 16 16 1" "rand65536:5 16 16 1"; do
  for b in $A $Bn $A $Bn; do
    timeout 40 $B/$b mxfp8 $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/${w%% *} $b /"
  done
done
