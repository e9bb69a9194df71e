#!/bin/sh
# ptxas's register and spill counts for k_sketch.cu; no GPU needed. Pass -DK_... switches as arguments.
cd "$(dirname "$0")/../../.."
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats \
  -Ikernels/sm90 -Xptxas -v -DK_NO_MAIN -c dev/backward/k_sketch/k_sketch.cu -o /tmp/k_sketch.o "$@" 2>&1 | grep -E "registers|spill" | grep -v C7519
