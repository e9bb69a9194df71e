#!/bin/sh
# ptxas's register and spill counts for i_sketch.cu (hopper-port.md (i)); no GPU needed.
# Build the timing binary: nvcc (these flags) dev/backward/i_sketch/i_sketch.cu -o dev/backward/bin/i_sketch
cd "$(dirname "$0")/../../.."
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats \
  -Ikernels/sm90 -Xptxas -v -DI_NO_MAIN -c dev/backward/i_sketch/i_sketch.cu -o /tmp/i_sketch.o "$@" 2>&1 | grep -E "registers|spill" | grep -v C7519
