#!/bin/sh
# ptxas's register and spill counts for j_sketch.cu (the prefetch settings); no GPU needed.
cd "$(dirname "$0")/../../.."
for pf in "1 -DJ_BPREFETCH=1" "1 -DJ_BPREFETCH=0" "0 -DJ_BPREFETCH=0"; do
  echo "J_PREFETCH=$pf:"
  nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats \
    -Ikernels/sm90 -Xptxas -v -DJ_NO_MAIN -DJ_PREFETCH=$pf -c dev/backward/j_sketch/j_sketch.cu -o /tmp/j_sketch.o "$@" 2>&1 |
    grep -E "registers|spill|error|warning" | grep -v C7519
done
