#!/bin/bash
# sass_counts.sh LIB OUT - per kernel function in LIB's sm_90a SASS: how many QGMMA (FP8
# wgmma), HGMMA (BF16/F16 wgmma), MUFU.EX2 and spill (STL/LDL) instructions it holds.
# Needs cuobjdump (the CUDA toolkit on the GPU machine). Example:
#   tools/sass_counts.sh build-device/kernels/libflamia.so /tmp/sass_counts.txt
set -eu
LIB=$1 OUT=$2
cuobjdump -sass "$LIB" | awk '
  /Function : / { if (name != "") printf "QGMMA %4d HGMMA %4d MUFU.EX2 %5d STL %4d LDL %4d  %s\n", q, h, e, st, ld, name
                  name = $3; q = h = e = st = ld = 0 }
  /QGMMA/ { q++ } /HGMMA/ { h++ } /MUFU.EX2/ { e++ } / STL/ { st++ } / LDL/ { ld++ }
  END { if (name != "") printf "QGMMA %4d HGMMA %4d MUFU.EX2 %5d STL %4d LDL %4d  %s\n", q, h, e, st, ld, name }' \
  | c++filt | cut -c1-200 | tee "$OUT"
