#!/bin/sh
# Builds the forward dev harness: dev/forward/bin/check_forward (current kernel)
# and, for each dev/forward/vN_*.cu given as argument, dev/forward/bin/check_vN.
# Usage (from the repo root): sh dev/forward/build.sh [dev/forward/v1_sync.cu ...]
set -e
cd "$(dirname "$0")/../.."
B=dev/forward/bin
mkdir -p $B/obj
CC=${CC:-gcc}
for f in kernels/formats/formats.c kernels/ref/*.c; do
  o=$B/obj/$(basename $f .c).o
  [ "$o" -nt "$f" ] || $CC -O2 -std=c11 -Ikernels/include -Ikernels/formats -Ikernels/ref -c $f -o $o
done
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/formats -Ikernels/sm90 -Ikernels/ref -Xcompiler -fopenmp -lgomp"
$NV dev/forward/check_forward.cu $B/obj/*.o -o $B/check_forward
for v in "$@"; do
  n=$(basename $v .cu)
  $NV -DFWD_SRC="\"$(pwd)/$v\"" dev/forward/check_forward.cu $B/obj/*.o -o $B/check_$n
done
