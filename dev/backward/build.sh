#!/bin/sh
# Builds the backward dev harness: dev/backward/bin/check_backward (the working tree's
# backward: kernels/sm90/backward*.cu) and, for each dev/backward/vN_* given as argument,
# dev/backward/bin/check_vN_* (that variant's backward). Quantize and forward are the
# library's own. ARG@TAG=DEF[,DEF...] builds a variant with -DDEF... as check_vN_*_TAG.
# A variant is a .cu file (a whole backward.cu of before the split: it replaces every
# backward object) or a .patch against the backward of the commit on its "base:" line,
# materialized by dev/variant_src.sh:
#   base before the split (no kernels/sm90/backward_fp8.cu; every v1..v30): the patched
#     backward.cu replaces every backward object, as a .cu variant does;
#   base after it: each file the patch touches is taken at the base and patched; the
#     files it does not touch are the working tree's (their objects reused, or recompiled
#     with the variant's -D flags or against a patched backward header).
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
# the backward split by role (kernels/sm90/backward.cu has the map); SPLIT_SRCS also names
# the headers only the backward includes, which a post-split variant may patch
BWD_TUS="backward backward_prep backward_simt backward_fp8 backward_dq"
SPLIT_SRCS="$(for t in $BWD_TUS; do printf 'kernels/sm90/%s.cu ' $t; done)kernels/sm90/backward_launch.h kernels/sm90/backward_common.cuh"
BWD_OBJS=""
for t in $BWD_TUS; do
  $NV -c kernels/sm90/$t.cu -o $B/obj/$t.cu.o
  BWD_OBJS="$BWD_OBJS $B/obj/$t.cu.o"
done
$NV -Xcompiler -fopenmp -c dev/backward/check_backward.cu -o $B/obj/check_backward.o
OBJS="$B/obj/formats.o $(for f in kernels/ref/*.c; do printf '%s ' $B/obj/$(basename $f .c).o; done)"
link() { # link BINARY BACKWARD_OBJECTS...
  out=$1; shift
  $NV $B/obj/check_backward.o "$@" $B/obj/quantize.cu.o $B/obj/forward.cu.o $OBJS -lpthread -lgomp -o $B/$out
}
link check_backward $BWD_OBJS
for arg in "$@"; do
  v=${arg%%@*}; flags=""; n=$(basename $(basename $v .cu) .patch)
  case "$arg" in *@*) spec=${arg#*@}; n=${n}_${spec%%=*}
    for d in $(echo "${spec#*=}" | tr ',' ' '); do flags="$flags -D$d"; done ;; esac
  split=""
  case "$v" in *.patch) git cat-file -e "$(sh dev/variant_src.sh --base $v):kernels/sm90/backward_fp8.cu" 2>/dev/null && split=1 ;; esac
  if [ -z "$split" ]; then
    src=$(sh dev/variant_src.sh $v kernels/sm90/backward.cu $B/obj) # a .patch: materialized
    $NV $flags -c $src -o $B/obj/$n.cu.o
    link check_$n $B/obj/$n.cu.o
    continue
  fi
  srcs=$(sh dev/variant_src.sh $v "$SPLIT_SRCS" $B/obj)
  dir=$B/obj/$(basename $v .patch)/kernels/sm90 # where variant_src.sh put them
  header=""
  echo "$srcs" | grep -q '\.\(h\|cuh\)$' && header=1
  # the unpatched backward headers beside the patched one too, so that their own quoted
  # #include of it (backward_common.cuh includes backward_launch.h) finds the patched copy
  if [ -n "$header" ]; then
    for hd in $SPLIT_SRCS; do
      case "$hd" in *.h|*.cuh) [ -f $dir/$(basename $hd) ] || cp $hd $dir/ ;; esac
    done
  fi
  objs=""
  for t in $BWD_TUS; do
    src=$dir/$t.cu
    if [ ! -f $src ]; then
      if [ -z "$header$flags" ]; then objs="$objs $B/obj/$t.cu.o"; continue; fi
      # beside the patched header, which its quoted #include then finds first
      if [ -n "$header" ]; then cp kernels/sm90/$t.cu $src; else src=kernels/sm90/$t.cu; fi
    fi
    $NV $flags -c $src -o $B/obj/$n.$t.cu.o
    objs="$objs $B/obj/$n.$t.cu.o"
  done
  link check_$n $objs
done
