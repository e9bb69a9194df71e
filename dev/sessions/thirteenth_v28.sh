#!/bin/bash
# Thirteenth session, ~5 min: backward v28_epilogue (dV's 2^(G-14) once per CTA, the dQ
# completion waited last) and v28 staged (+ v15's dK / dV through shared memory) against
# the committed kernel: deterministic-mode bytes (must be equal), default mode against the
# reference, then the backward's time on short and long documents, alternated.
# Build here first (repo root):
#   sh dev/backward/build.sh dev/backward/v28_epilogue.patch "dev/backward/v28_epilogue.patch@staged=V28_STAGED=1"
# and carry dev/backward/bin.
# Usage (device, repo root): bash dev/sessions/thirteenth_v28.sh > $OUT/v28.log 2>&1
export OMP_NUM_THREADS=16
stamp() { echo "== [$SECONDS s] $*"; }
stamp compare
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="512x128 16 16 1|256x256 16 16 1|64x1024 16 16 1|16x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v28_epilogue check_v28_epilogue_staged
stamp done
