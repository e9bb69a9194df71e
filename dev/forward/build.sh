#!/bin/sh
# Builds the forward dev harness: dev/forward/bin/check_forward (current kernel)
# and, for each dev/forward/vN_*.cu given as argument, dev/forward/bin/check_vN_*.
# An argument FILE.cu@TAG=DEF[,DEF...] builds FILE.cu with -DDEF ... into
# dev/forward/bin/check_<name>_<TAG> (compile-time switch variants, e.g.
# dev/forward/v6_exact.cu@e0p1=FWD_EXP_SPLIT=0,FWD_S_PROMOTE=1).
# PTXAS=1: also print ptxas -v (registers, spills, C75xx warnings) per kernel into
# dev/forward/bin/ptxas_<binary>.txt.
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
nv() { # nv OUT [flags...]
  out=$1; shift
  if [ -n "$PTXAS" ]; then
    $NV -Xptxas -v "$@" dev/forward/check_forward.cu $B/obj/*.o -o $B/$out > $B/ptxas_$out.txt 2>&1 || { cat $B/ptxas_$out.txt; exit 1; }
    grep -E "C75|spill|Used" $B/ptxas_$out.txt | sed "s/^/$out: /"
  else
    $NV "$@" dev/forward/check_forward.cu $B/obj/*.o -o $B/$out
  fi
}
nv check_forward
# the FP8 accumulation probe (numerics.md 8)
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/formats -Ikernels/sm90 \
  dev/forward/fp8_acc_probe.cu $B/obj/formats.o -o $B/fp8_acc_probe
for v in "$@"; do
  case "$v" in
  *@*)
    src=${v%%@*}; spec=${v#*@}; tag=${spec%%=*}; defs=${spec#*=}
    n=$(basename $src .cu)_$tag
    flags=""
    for d in $(echo "$defs" | tr ',' ' '); do flags="$flags -D$d"; done
    nv check_$n -DFWD_SRC="\"$(pwd)/$src\"" $flags ;;
  *)
    n=$(basename $v .cu)
    nv check_$n -DFWD_SRC="\"$(pwd)/$v\"" ;;
  esac
done
