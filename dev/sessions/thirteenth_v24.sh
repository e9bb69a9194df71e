#!/bin/bash
# Prepared in the twelfth session, not run (its device time was spent), ~8 min: backward
# v24_dq_chains (dQ's key blocks in two in-place chains of two), v25_tr_prmt (bwd_transpose
# without local memory, byte-permute transpose) and v26_pre_tr_fused (v25 + bwd_pre_do and
# bwd_transpose in one launch) against the committed kernel.
# v25 and v26 must give the base's bytes (cmp of dQ, dK, dV in the deterministic mode). v24 changes
# dQ's bytes by design (the chain's second block is accumulated by the wgmma): compare.sh
# will print DIFFERS for it; its checks are the reference PASS lines (deterministic and
# default mode) and its dK / dV being unchanged.
# Then the backward's time on 4x4096, 16x4096, 16x1024 and a random pack, alternated, and
# ncu durations of bwd_pre_do and bwd_transpose at 16x4096 (base: 616 and 191 us).
# Timing only: v27_nobarrier (the per-sub-step CTA barrier made a warpgroup barrier; wrong
# gradients), an upper bound on what desynchronized warpgroups could buy.
# Last, the L2 rates a 64-key backward would need (docs/hopper-port.md 1 (d); ~10 s).
# Build here first (repo root):
#   sh dev/backward/build.sh dev/backward/v24_dq_chains.patch dev/backward/v25_tr_prmt.patch \
#     dev/backward/v26_pre_tr_fused.patch "dev/backward/v27_nobarrier.patch@t=V27_NO_SUBSTEP_BARRIER=1"
#   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/sm90 \
#     dev/backward/l2_bench.cu -o dev/backward/bin/l2_bench
# and carry dev/backward/bin.
# Usage (device, repo root): bash dev/sessions/thirteenth_v24.sh > $OUT/v24.log 2>&1
export OMP_NUM_THREADS=16
stamp() { echo "== [$SECONDS s] $*"; }
B=dev/backward/bin
stamp compare
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="4x4096 16 16 1|16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v24_dq_chains check_v25_tr_prmt check_v26_pre_tr_fused
stamp "timing only: v27_nobarrier (no CTA barrier per sub-step; wrong gradients), the lockstep's cost"
for w in "16x4096 16 16 1" "16x1024 16 16 1"; do
  for b in check_backward check_v27_nobarrier_t check_backward check_v27_nobarrier_t; do
    GPU_FWD=1 timeout 60 $B/$b mxfp8 $w none 10 2>&1 | grep -o "bwd .*" | sed "s/^/mxfp8 $b ${w%% *}: /"
  done
done
stamp ncu
for b in check_backward check_v25_tr_prmt check_v26_pre_tr_fused; do
  GPU_FWD=1 timeout 60 bash dev/ncu_durations.sh "16x4096 mxfp8 $b" "bwd_pre_do|bwd_transpose" $B/$b mxfp8 16x4096 16 16 1 none 0
done
stamp l2_bench
[ -x $B/l2_bench ] && timeout 120 $B/l2_bench
stamp done
