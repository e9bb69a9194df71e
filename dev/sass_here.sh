#!/bin/sh
# SASS on this machine (no GPU needed): cuobjdump and the nvdisasm it calls, from PyPI's
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels (CUDA 13.5; this machine's toolkit ships
# neither), then one kernel's SASS from a .cu compiled for
# sm_90a. Thirty-fifth session (docs/hopper-port.md, Next steps).
# Usage (repo root): sh dev/sass_here.sh SOURCE.cu FUNCTION_SUBSTRING OUT.sass
#   e.g. sh dev/sass_here.sh kernels/sm90/forward.cu \
#        _ZN10flamia_fwd10fwd_kernelILi1ELi3ELb1ELb0ELb0ELb0EEEvNS_7FwdMapsENS_6ParamsE /tmp/fwd.sass
#   then python3 dev/sass_hist.py /tmp/fwd.sass [/tmp/other.sass] for the instruction mix.
#   SASS_FLAGS="-DNAME=VALUE ..." adds nvcc flags (a compile-time switch's other setting).
set -e
src=$1 fn=$2 out=$3
T=${SASS_TOOLS:-/tmp/flamia-sass-tools}
if [ ! -x $T/nvidia/cu13/bin/cuobjdump ] || [ ! -x $T/nvidia/cu13/bin/nvdisasm ]; then
  mkdir -p $T
  pip download --no-deps -q nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm -d $T
  (cd $T && for w in nvidia_cuda_cuobjdump-*.whl nvidia_cuda_nvdisasm-*.whl; do unzip -o -q $w; done)
fi
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a $SASS_FLAGS -Ikernels/include -Ikernels/formats -Ikernels/sm90 \
  -Ikernels/ref -cubin "$src" -o "$out.cubin"
PATH=$T/nvidia/cu13/bin:$PATH cuobjdump -sass "$out.cubin" > "$out.all"
awk -v fn="$fn" '/Function : /{p = index($0, fn) > 0} p' "$out.all" > "$out"
rm -f "$out.all"
[ -s "$out" ] || { echo "sass_here.sh: no function matching $fn in $src" >&2; exit 1; }
echo "$out: $(grep -c '/\*[0-9a-f]*\*/' "$out") instructions"
