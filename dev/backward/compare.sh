#!/bin/bash
# Device comparison of builds of the backward dev harness (dev/backward/bin/check_*), the
# first one the base:
# (1) bytes: all run the same packed layouts in the deterministic dQ mode (BWD_DET=1,
#     dQ summed in a fixed order) and dump dQ, dK, dV (BWD_DUMP); cmp says whether a
#     change meant to be exact is;
# (1b) the default mode of each against the reference (relL2 / max / cosine per gradient and
#     the harness's PASS/FAIL, numerics.md 8.2): the paths only the default kernels take
#     (the dQ TMA reduce-adds) are checked here, not by the bytes above;
# (2) timing of the backward alone on 16x4096, 4x4096 and a packed pack, the builds
#     alternated, twice each, one process per timing.
# Build here first and carry dev/backward/bin, e.g. the committed kernel as the base:
#   git show HEAD:kernels/sm90/backward.cu > dev/backward/bin/obj/base.cu
#   FWD_HEAD=1 sh dev/backward/build.sh dev/backward/bin/obj/base.cu
# Usage (device, repo root): KINDS="mxfp8 exact" TKINDS=mxfp8 [LAYOUTS="rand3000:1 4 2 1|..."] [DEFAULT_CHECK=0] [CHECK=0] [FULL_LINES=1]
#   [WORKLOADS="16x1024 16 16 1|..."]
#   bash dev/backward/compare.sh check_base check_backward [check_...]
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/backward/bin
A=$1 ALL="$*"
KINDS=${KINDS:-"mxfp8 exact"} TKINDS=${TKINDS:-$KINDS} # TKINDS: the kinds timed
# the CPU reference dominates the run (466 s for 5 builds in the sixth session): LAYOUTS
# narrows the checked layouts, DEFAULT_CHECK=0 skips (1b) (the bytes of (1) still compare
# every build with the base)
LAYOUTS=${LAYOUTS:-"rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0"}
DEFAULT_CHECK=${DEFAULT_CHECK:-1}
T=$(mktemp -d)
# a long result line shortened in the middle, so that its PASS / FAIL end stays readable; FULL_LINES=1
# keeps it whole (every gradient's relL2 / max / cosine, for a log that is read for them)
keep_status() {
  if [ "${FULL_LINES:-0}" = 1 ]; then cat; else sed -E 's/^(.{150}).*(\| unwritten=.*)$/\1 ... \2/'; fi
}
IFS='|' read -r -a LAY <<< "$LAYOUTS"
[ "${CHECK:-1}" = 1 ] || KINDS="" DEFAULT_CHECK=0 # CHECK=0: the timing alone
for kind in $KINDS; do
  for layout in "${LAY[@]}"; do
    for b in $ALL; do
      BWD_DET=1 BWD_DUMP=$T/$b.bin timeout 60 $B/$b $kind $layout full 2>&1 | grep -E "dq|dk|dv|FAIL|PASS" | sed "s/^/$b: /" | keep_status
      [ "$b" = "$A" ] && continue
      if cmp -s $T/$A.bin $T/$b.bin; then echo "== $kind $layout: $b == $A bytes"; else echo "== $kind $layout: $b DIFFERS from $A"; fi
    done
  done
done
for kind in $KINDS; do
  [ "$DEFAULT_CHECK" = 1 ] || break
  for layout in "${LAY[@]}"; do
    for b in $ALL; do
      timeout 60 $B/$b $kind $layout full 2>&1 | grep -E "PASS|FAIL" | sed "s/^/default $b: /" | keep_status
    done
  done
done
# WORKLOADS: the timed shapes, '|'-separated
WORKLOADS=${WORKLOADS:-"16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1"}
IFS='|' read -r -a WORK <<< "$WORKLOADS"
for kind in $TKINDS; do
  for w in "${WORK[@]}"; do
    for b in $ALL $ALL; do
      GPU_FWD=1 timeout 60 $B/$b $kind $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/$kind $b ${w%% *}: /"
    done
  done
done
