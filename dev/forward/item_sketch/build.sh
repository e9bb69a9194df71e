#!/bin/sh
# Builds dev/forward/bin/item_sketch here (nvcc, no GPU needed); carry dev/forward/bin.
cd "$(dirname "$0")/../../.."
mkdir -p dev/forward/bin
nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats \
  -Ikernels/sm90 -Idev/forward/s256_sketch dev/forward/item_sketch/item_sketch.cu -o dev/forward/bin/item_sketch -lcuda "$@"
