#!/bin/sh
# Builds the forward dev harness: dev/forward/bin/check_forward (current kernel),
# dev/forward/bin/fp8_acc_probe, dev/forward/bin/ex2_identity_probe and, for each dev/forward/vN_*.cu given as argument,
# dev/forward/bin/check_vN_*. A source may list compile-time switch variants in lines
# " * @variant TAG=DEF[,DEF...]" (v6_exact.patch does): each is built too, with -DDEF ...,
# into dev/forward/bin/check_<name>_<TAG> (VARIANTS=0 skips them). An argument
# FILE.cu@TAG=DEF[,DEF...] builds one such variant explicitly.
# PTXAS=1: ptxas -v (registers, spills, C75xx) per binary into dev/forward/bin/ptxas_<binary>.txt,
# summary lines on stdout. The nvcc runs go in parallel (PAR=0: one at a time).
# A variant is a .cu file or a .patch against the kernel of its "base:" commit (frozen
# versions are kept that way; dev/variant_src.sh materializes them into bin/obj).
# Usage (from the repo root): sh dev/forward/build.sh [dev/forward/v5_regs.patch dev/forward/v6_exact.patch ...]
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
nv1() { # nv1 OUT [flags...]
  out=$1; shift
  if [ -n "$PTXAS" ]; then
    $NV -Xptxas -v "$@" dev/forward/check_forward.cu $B/obj/*.o -o $B/$out > $B/ptxas_$out.txt 2>&1 || { cat $B/ptxas_$out.txt; return 1; }
    grep -E "C75|spill|Used" $B/ptxas_$out.txt | sed "s/^/$out: /"
  else
    $NV "$@" dev/forward/check_forward.cu $B/obj/*.o -o $B/$out
  fi
}
pids=""
nv() {
  if [ "${PAR:-1}" = 1 ]; then nv1 "$@" & pids="$pids $!"; else nv1 "$@"; fi
}
variant() { # variant SRC TAG DEFS
  flags=""
  for d in $(echo "$3" | tr ',' ' '); do flags="$flags -D$d"; done
  nv check_$(basename $1 .cu)_$2 -DFWD_SRC="\"$(pwd)/$1\"" $flags
}
nv check_forward
# the FP8 accumulation probe (numerics.md 8)
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/formats -Ikernels/sm90 \
  dev/forward/fp8_acc_probe.cu $B/obj/formats.o -o $B/fp8_acc_probe
# the exponential identity probe (v9_ex2direct relies on it)
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a dev/forward/ex2_identity_probe.cu -o $B/ex2_identity_probe
for v in "$@"; do
  src=$(sh dev/variant_src.sh ${v%%@*} kernels/sm90/forward.cu $B/obj) # a .patch: materialized (dev/variant_src.sh)
  case "$v" in
  *@*)
    spec=${v#*@}
    variant $src ${spec%%=*} ${spec#*=} ;;
  *)
    nv check_$(basename $src .cu) -DFWD_SRC="\"$(pwd)/$src\""
    if [ "${VARIANTS:-1}" = 1 ]; then
      for spec in $(sed -n 's/^ \* @variant \([^ ]*\).*/\1/p' $src); do
        variant $src ${spec%%=*} ${spec#*=}
      done
    fi ;;
  esac
done
rc=0
for p in $pids; do wait $p || rc=1; done
[ $rc = 0 ] || echo "build.sh: a build failed" >&2
exit $rc
