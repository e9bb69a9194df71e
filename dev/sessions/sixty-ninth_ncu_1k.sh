#!/bin/bash
# Prepared in the sixty-eighth session (its device time ran out), not run: where the training call's time goes at 16x1024
# (0.75x the fastest peer with rule J) against 16x4096 (0.86x), by kernel (ncu gpu__time_duration,
# medians over the launches of 4 graph-replayed steps). Carry build-carry. For the next session's
# choice, no decision here.
. dev/device_lib.sh
dev_carry
K="quantize|fwd_kernel|bwd_pre_do|bwd_transpose|bwd_main|bwd_order|dq_split|bwd_dq_out"
for w in 16x1024 16x4096 gqa-16x1024 64x1024; do
  bash dev/ncu_durations.sh $w "$K" $C/experiments/latency/latency --backend cuda --workloads $w --recipes mxfp8 \
    --passes train --warmup 1 --iters 3 --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu_$w.h5 > $OUT/ncu_$w.txt
  echo "== $w: train step kernels (median us over the launches) ($(dev_elapsed) s)"
  python3 dev/ncu_medians.py $OUT/ncu_$w.txt
done
