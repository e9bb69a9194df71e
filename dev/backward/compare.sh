#!/bin/bash
# Device comparison of two builds of the backward dev harness (dev/backward/bin/check_*):
# (1) bytes: both run the same packed layouts in the deterministic dQ mode (BWD_DET=1,
#     dQ summed in a fixed order) and dump dQ, dK, dV (BWD_DUMP); cmp says whether a
#     change meant to be exact is; (1b) the default mode of both against the reference;
# (2) timing of the backward alone on 16x4096, 4x4096 and
#     a packed pack, A and B alternated in one process each.
# Build here first and carry dev/backward/bin, e.g. the committed kernel as the base:
#   git show HEAD:kernels/sm90/backward.cu > dev/backward/bin/obj/base.cu
#   FWD_HEAD=1 sh dev/backward/build.sh dev/backward/bin/obj/base.cu
# Usage (device, repo root): bash dev/backward/compare.sh check_base check_backward [KINDS]
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/backward/bin
A=$1 Bn=$2 KINDS=${3:-"mxfp8 exact"}
T=$(mktemp -d)
for kind in $KINDS; do
  for layout in "rand3000:1 4 2 1" "rand2000:3 8 2 1" "3x1024 4 4 0"; do
    for b in $A $Bn; do
      BWD_DET=1 BWD_DUMP=$T/$b.bin timeout 60 $B/$b $kind $layout full 2>&1 | grep -E "dq|dk|dv|FAIL|PASS" | sed "s/^/$b: /" | cut -c1-160
    done
    if cmp -s $T/$A.bin $T/$Bn.bin; then echo "== $kind $layout: $Bn == $A bytes"; else echo "== $kind $layout: $Bn DIFFERS from $A"; fi
  done
done
# (1b) the default (non-deterministic) mode against the reference: relL2 / max / cosine per
# gradient and the harness's PASS/FAIL (numerics.md 8.2 bounds); the paths that only the
# default kernels take (v7_dqtma's TMA reduce-adds) are checked here, not by the bytes above
for kind in $KINDS; do
  for layout in "rand3000:1 4 2 1" "rand2000:3 8 2 1" "3x1024 4 4 0"; do
    for b in $A $Bn; do
      timeout 60 $B/$b $kind $layout full 2>&1 | grep -E "PASS|FAIL" | sed "s/^/default $b: /" | cut -c1-200
    done
  done
done
for kind in $KINDS; do
  for w in "16x4096 16 16 1" "4x4096 16 16 1" "rand65536:5 16 16 1"; do
    for b in $A $Bn $A $Bn; do
      GPU_FWD=1 timeout 60 $B/$b $kind $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/$kind $b ${w%% *}: /"
    done
  done
done
