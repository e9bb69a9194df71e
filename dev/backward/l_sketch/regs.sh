#!/bin/sh
# ptxas's register and spill counts for l_sketch.cu; no GPU needed. Pass -DL_... switches as arguments.
cd "$(dirname "$0")/../../.."
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats \
  -Ikernels/sm90 -Xptxas -v -DL_NO_MAIN -c dev/backward/l_sketch/l_sketch.cu -o /tmp/l_sketch.o "$@" 2>&1 | grep -E "registers|spill|error" | grep -v C7519
