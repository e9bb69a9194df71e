#!/bin/sh
# Builds the quantize dev harness: dev/quantize/bin/check_quantize (the committed
# kernels/sm90/quantize.cu, v4) and, for each dev/quantize/vN_*.cu given as argument,
# dev/quantize/bin/check_vN_* (-DQUANT_SRC="that file"). A source may list compile-time
# switch variants in lines " * @variant TAG=DEF[,DEF...]" (v5_occ512.patch does): each is
# built too, with -DDEF ..., into dev/quantize/bin/check_<name>_<TAG> (VARIANTS=0 skips
# them). An argument FILE.cu@TAG=DEF[,DEF...] builds one such variant explicitly.
# Host side: kernels/formats/formats.c, kernels/ref/*.c (flamia_ref_hadamard) and
# experiments/common/{util,workloads}.c (the catalogue's layouts, e.g. logu-64k).
# PTXAS=1: ptxas -v per binary into dev/quantize/bin/ptxas_<binary>.txt, a one-line
# summary per kernel on stdout. The nvcc runs go in parallel (PAR=0: one at a time).
# A variant is a .cu file or a .patch against the kernel of its "base:" commit (frozen
# versions are kept that way; dev/variant_src.sh materializes them into bin/obj).
# Usage (from anywhere): sh dev/quantize/build.sh [dev/quantize/v5_occ512.patch ...]
set -e
cd "$(dirname "$0")/../.."
B=dev/quantize/bin
mkdir -p $B/obj
CC=${CC:-gcc}
for f in kernels/formats/formats.c kernels/ref/*.c; do
  o=$B/obj/$(basename $f .c).o
  [ "$o" -nt "$f" ] || $CC -O2 -std=c11 -Ikernels/include -Ikernels/formats -Ikernels/ref -c $f -o $o
done
# util.c also holds the drivers' option handling (needs compute.c and the CUDA API):
# one section per function and --gc-sections below keep only what workloads.c uses
for f in experiments/common/util.c experiments/common/workloads.c; do
  o=$B/obj/xp_$(basename $f .c).o
  [ "$o" -nt "$f" ] || $CC -O2 -std=gnu11 -ffunction-sections -Ikernels/include -Iexperiments/common -c $f -o $o
done
NV="nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/formats -Ikernels/sm90
  -Ikernels/ref -Iexperiments/common -Xcompiler -fopenmp -lgomp -lm -Xlinker --gc-sections"
nv1() { # nv1 OUT [flags...]
  out=$1; shift
  if [ -n "$PTXAS" ]; then
    $NV -Xptxas -v "$@" dev/quantize/check_quantize.cu $B/obj/*.o -o $B/$out > $B/ptxas_$out.txt 2>&1 ||
      { cat $B/ptxas_$out.txt; return 1; }
    # per kernel <D, GRAN, FP8, HAD>: registers, spill bytes, shared memory
    awk -v b=$out '/Compiling entry function/ { k = ""; if (match($0, /quantize_kernelILi[0-9]+ELi[0-9]+ELb[01]ELb[01]/)) {
        t = substr($0, RSTART + 16, RLENGTH - 16); gsub(/[^0-9]+/, " ", t); split(t, f, " ")
        k = sprintf("D=%s gran=%s fp8=%s had=%s", f[1], f[2], f[3], f[4]) } }
      k != "" && /spill stores/ { sp = $5 + 0 }
      k != "" && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); r = substr($0, RSTART + 5, RLENGTH - 15)
        sm = "0"; if (match($0, /[0-9]+ bytes smem/)) sm = substr($0, RSTART, RLENGTH - 11)
        printf "%s: %-30s %3d regs  spill %d B  smem %s B\n", b, k, r, sp, sm; k = "" }' $B/ptxas_$out.txt
  else
    $NV "$@" dev/quantize/check_quantize.cu $B/obj/*.o -o $B/$out
  fi
}
pids=""
nv() {
  if [ "${PAR:-1}" = 1 ]; then nv1 "$@" & pids="$pids $!"; else nv1 "$@"; fi
}
variant() { # variant SRC TAG DEFS
  flags=""
  for d in $(echo "$3" | tr ',' ' '); do flags="$flags -D$d"; done
  nv check_$(basename $1 .cu)_$2 -DQUANT_SRC="\"$(pwd)/$1\"" $flags
}
nv check_quantize
for v in "$@"; do
  src=$(sh dev/variant_src.sh ${v%%@*} kernels/sm90/quantize.cu $B/obj) # a .patch: materialized (dev/variant_src.sh)
  case "$v" in
  *@*)
    spec=${v#*@}
    variant $src ${spec%%=*} ${spec#*=} ;;
  *)
    nv check_$(basename $src .cu) -DQUANT_SRC="\"$(pwd)/$src\""
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
