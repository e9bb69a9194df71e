#!/bin/bash
# One backward variant against the base in the harness, the sessions' standard round: checked
# against the reference (mxfp8 and mxfp8-exact on three layouts: packed GQA with 1-token
# documents, packed MHA, non-causal), then timed (median of 10, two rounds) on 16x4096, 16x1024
# and a packed 65,536-token layout in mxfp8, and on 16x4096 in mxfp8-exact.
# Usage (device, repo root; the binaries carried): bash dev/backward/variant_check.sh check_vN_name [BASE]
V=$1 BASE=${2:-check_backward}
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand5000:11 4 4 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh $BASE $V
TKINDS=exact CHECK=0 WORKLOADS="16x4096 16 16 1" bash dev/backward/compare.sh $BASE $V
