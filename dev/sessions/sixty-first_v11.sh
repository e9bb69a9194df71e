#!/bin/bash
# Sixty-first session (prepared with the last 255 s of its device time): quantize v11 and v11b
# against the tree's quantize (v10), with binaries built on the CPU machine and carried (no device
# build: carry61/ holds latency, test_gpu_quantize, test_gpu_api and the base libflamia.so in the
# build tree's layout, so their RUNPATH finds carry61/kernels; a LIB dir on LD_LIBRARY_PATH
# replaces it; dev/carry_bins.sh now makes the same folder as build-carry/: C=build-carry to rerun).
#  v11  (dev/quantize/v11_stage_ahead.patch): the block-warp kernel stages each warp's next
#       (block, head slot) rows in shared memory by cp.async while it converts the current one
#       (64 KB of dynamic shared memory a CTA, 2 CTAs an SM as before; 128 registers, 0 spills).
#  v11b (v11b_stage_ahead_48_slots.patch): v11 with 48 head slots a CTA (6 pairs a warp instead
#       of 2, so the prefetch hides more than the second pair's latency).
# After v10 the training call's quantize moves ~1.6 GB in 652 us on the H100 (74 % of 3.35 TB/s),
# latency-bound (0.22 eligible warps a scheduler, 70 % long-scoreboard stalls before v10).
# Predicted: v11 652 -> 560-620 us at 16x4096 (the second pair's load under the first's
# conversion), v11b a further 0..-5 %; fwd+quant -2..-4 %. Promote the faster if it is >= 3 %
# faster on both workloads and test_gpu_quantize is bit-exact and test_gpu_api passes with it.
# Usage (device, repo root; carry carry61, build-v11, build-v11b): bash dev/sessions/sixty-first_v11.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
C=${C:-carry61}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in v11 v11b; do
  for t in quantize api; do
    LD_LIBRARY_PATH=$PWD/build-$v:$LD_LIBRARY_PATH timeout 60 $C/tests/gpu/test_gpu_$t > $OUT/${v}_test_gpu_$t.log 2>&1
    echo "$v test_gpu_$t rc=$?: $(tail -n 1 $OUT/${v}_test_gpu_$t.log | cut -c1-100)"
  done
done
for w in 16x4096 64x1024; do
  for cfg in base v11 v11b; do
    lib=$PWD/$C/kernels; [ $cfg != base ] && lib=$PWD/build-$cfg
    LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 40 ncu --clock-control none -k regex:quantize_block_warp \
      --launch-skip 3 -c 3 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $C/experiments/latency/latency --workloads $w --recipes mxfp8 --passes train --warmup 1 --iters 2 \
      --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-$cfg-$w.h5 2>/dev/null |
      grep -E "gpu__time|dram__" | sed 's/  */ /g' > "$OUT/v11_ncu_${cfg}_$w.txt"
    echo "== $cfg $w: $(tr '\n' ' ' < "$OUT/v11_ncu_${cfg}_$w.txt")"
  done
done
CONFIGS="base= v11=LIB=build-v11 v11b=LIB=build-v11b" WORKLOADS="16x4096 64x1024" PASSES=fwd+quant ROUNDS=2 BUDGET=1 \
  DRIVER=$C/experiments/latency/latency OUTDIR=/tmp/ab11 bash dev/latency_ab.sh
