#!/bin/bash
# Prepared in the twelfth session, not run (its device time was spent), ~4 min: backward
# v24_dq_chains (dQ's key blocks in two in-place chains of two) against the committed kernel.
# dQ's bytes differ by design (the chain's second block is accumulated by the wgmma), so the
# checks are the reference PASS lines of the default and deterministic modes; dK / dV bytes
# are unchanged (compare.sh's cmp covers dQ, dK, dV together and will say DIFFERS).
# Then the backward's time on 4x4096, 16x4096, 16x1024 and a random pack, alternated.
# Build here first: sh dev/backward/build.sh dev/backward/v24_dq_chains.patch; carry dev/backward/bin.
# Usage (device, repo root): bash dev/thirteenth_v24.sh   (also runs dev/backward/bin/l2_bench, see the end)
export OMP_NUM_THREADS=16
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="4x4096 16 16 1|16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v24_dq_chains
# then the L2 rates a 64-key backward would need (docs/hopper-port.md 1 (d); ~10 s). Build it
# here too: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/sm90 \
#   dev/backward/l2_bench.cu -o dev/backward/bin/l2_bench
[ -x dev/backward/bin/l2_bench ] && timeout 120 dev/backward/bin/l2_bench
