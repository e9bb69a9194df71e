#!/bin/sh
# Builds the backward dev harness: dev/backward/bin/check_backward (kernels/sm90/backward.cu)
# and, for each dev/backward/vN_* given as argument, dev/backward/bin/check_vN_* (that
# variant linked in place of backward.cu). Quantize and forward are the library's own.
# A variant is a .cu file, or a .patch applied to backward.cu of the commit on its
# "base:" line; ARG@TAG=DEF[,DEF...] builds it with -DDEF... as check_vN_*_TAG.
# Usage (repo root): sh dev/backward/build.sh [dev/backward/v5_onecvt.patch dev/backward/v4_overlap.patch@dqpipe=V4_DQ_PIPE=1 ...]
set -e
cd "$(dirname "$0")/../.."
B=dev/backward/bin
mkdir -p $B/obj
CC=${CC:-gcc}
for f in kernels/formats/formats.c kernels/ref/*.c; do
  o=$B/obj/$(basename $f .c).o
  [ "$o" -nt "$f" ] || $CC -O2 -std=c11 -D_GNU_SOURCE -Ikernels/include -Ikernels/formats -Ikernels/ref -c $f -o $o
done
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats -Ikernels/sm90 -Ikernels/ref"
# FWD_HEAD=1: the committed forward (git HEAD) instead of the working tree's (others edit it)
$NV -c kernels/sm90/quantize.cu -o $B/obj/quantize.cu.o
if [ -n "$FWD_HEAD" ]; then
  git show HEAD:kernels/sm90/forward.cu > $B/obj/forward_head.cu
  $NV -c $B/obj/forward_head.cu -o $B/obj/forward.cu.o
else
  $NV -c kernels/sm90/forward.cu -o $B/obj/forward.cu.o
fi
$NV -c kernels/sm90/backward.cu -o $B/obj/backward.cu.o
$NV -Xcompiler -fopenmp -c dev/backward/check_backward.cu -o $B/obj/check_backward.o
OBJS="$B/obj/formats.o $(for f in kernels/ref/*.c; do printf '%s ' $B/obj/$(basename $f .c).o; done)"
$NV $B/obj/check_backward.o $B/obj/backward.cu.o $B/obj/quantize.cu.o $B/obj/forward.cu.o $OBJS -lpthread -lgomp -o $B/check_backward
for arg in "$@"; do
  v=${arg%%@*}; flags=""; n=$(basename $(basename $v .cu) .patch)
  case "$arg" in *@*) spec=${arg#*@}; n=${n}_${spec%%=*}
    for d in $(echo "${spec#*=}" | tr ',' ' '); do flags="$flags -D$d"; done ;; esac
  src=$(sh dev/variant_src.sh $v kernels/sm90/backward.cu $B/obj) # a .patch: materialized
  $NV $flags -c $src -o $B/obj/$n.cu.o
  $NV $B/obj/check_backward.o $B/obj/$n.cu.o $B/obj/quantize.cu.o $B/obj/forward.cu.o $OBJS -lpthread -lgomp -o $B/check_$n
done
