#!/bin/bash
# Prepared in the fifty-ninth session, not run (its device time went to v117 / v117b): v118
# (dev/backward/v118_pre_do_heads_fastest.patch), bwd_pre_do's CTAs in (window, head) order
# with the head fastest, so that the CTAs resident together touch every head of the same
# tokens (whole 4 KB [Hq][D] rows) instead of one head's 256-byte rows at a 4 KB stride.
# Counted: bwd_pre_do moves ~0.97 GB in the training call (dO and O in, the dO codes, their F16
# copy, D and the row constants out) in 443 us on the H100 (fifty-seventh session's ncu): 2.2
# TB/s, 65 % of 3.35; bwd_dq_out's contiguous rows run at 89 %. Predicted: bwd_pre_do 443 ->
# 380-440 us (the order is the only change; nothing else moves), training call 0..-0.6 % at
# 16x4096, 0..-1.5 % at 64x1024. Promote if bwd_pre_do is >= 3 % faster on all three
# workloads and the tests pass.
# Steps: build-device from the tree (base) and build-v118 (a copy of the tree with the patch;
# or carry build-v118/libflamia.so made on the CPU machine: git worktree at this commit, the
# patch applied, meson setup, meson compile flamia:shared_library, copy the .so); then
# test_gpu_backward and test_gpu_api against the v118 library; then ncu's bwd_pre_do time for
# both (the training call, mxfp8, 3 workloads); then dev/latency_ab.sh, 2 alternated rounds.
# About 450 s on a fresh machine (two ~130 s builds when nothing is carried).
# Usage (device, repo root): bash dev/sessions/fifty-ninth_pre_do.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh
dev_setup
V=build-v118
dev_variant_lib $V dev/backward/v118_pre_do_heads_fastest.patch
for t in backward api; do
  LD_LIBRARY_PATH=$V:$LD_LIBRARY_PATH timeout 200 $B/tests/gpu/test_gpu_$t > $OUT/v118_test_gpu_$t.log 2>&1
  echo "v118 test_gpu_$t rc=$? ($(dev_elapsed) s)"
done
for cfg in base v118; do
  lib=$B/kernels; [ $cfg = v118 ] && lib=$V
  for w in 16x4096 64x1024 gqa-16x1024; do
    LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 100 bash dev/ncu_durations.sh $w "bwd_pre_do" \
      $B/experiments/latency/latency --workloads $w --recipes mxfp8 --passes train --warmup 1 --iters 3 \
      --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-$cfg-$w.h5 > "$OUT/v118_ncu_${cfg}_$w.txt"
    echo "== $cfg $w: bwd_pre_do (median us)"; python3 dev/ncu_medians.py "$OUT/v118_ncu_${cfg}_$w.txt"
  done
done
CONFIGS="base= v118=LIB=$V" WORKLOADS="16x4096 64x1024 gqa-16x1024" PASSES=bwd,train ROUNDS=2 BUDGET=2 \
  DRIVER=$B/experiments/latency/latency OUTDIR=/tmp/ab118 bash dev/latency_ab.sh
echo "done ($(dev_elapsed) s)"
