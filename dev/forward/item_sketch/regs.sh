#!/bin/sh
# ptxas's register and spill counts for every item_sketch instantiation; no GPU needed.
cd "$(dirname "$0")/../../.."
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats \
  -Ikernels/sm90 -Idev/forward/s256_sketch -Xptxas -v -c dev/forward/item_sketch/item_sketch.cu -o /tmp/item_sketch.o "$@" 2>&1 |
  grep -E "Compiling entry|registers|spill|error|warning" | grep -v C7519
