#!/bin/bash
# Sixty-first session: quantize v10 (dev/quantize/v10_no_spills.patch). The mxfp8 block-warp
# kernel (D = 128) spilled 132 bytes a thread, inside its (block, head slot) loop: ~20 STL and
# ~25 LDL a pair, because the rare NaN path reused the block max's 64 masked words, so they
# stayed live beside the 64 raw words. v10 loads the rows again in that path; ptxas: 128
# registers, 0 spills. The training call's quantize (ncu, sixty-first_quantize.sh, H100) took
# 752 us, DRAM 72 %, 998 MB written against ~805 MB of outputs, 54.9 M L2 write sectors.
# Predicted: the L2 write sectors -~8 M (the spill stores), quantize 752 -> 700-750 us (0..-7 %),
# training call 0..-0.5 % at 16x4096. Promote if the quantize kernel is >= 1 % faster at 16x4096,
# no workload's quantize is > 1 % slower, and test_gpu_quantize, test_gpu_api, test_gpu_leak pass.
# Steps: base build (the tree) on the device; the v10 library carried as build-v10 (built here:
# git worktree at this commit + the patch, ninja kernels/libflamia.so) or built here from the
# patch; the tests against v10; ncu durations and bytes of the quantize launches of the mxfp8
# training call, base and v10, three workloads; dev/latency_ab.sh, fwd+quant and train, 2 rounds.
# Usage (device, repo root; carry build-v10): bash dev/sessions/sixty-first_v10.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh
dev_setup
V=build-v10
dev_variant_lib $V dev/quantize/v10_no_spills.patch
for t in quantize api leak; do
  LD_LIBRARY_PATH=$V:$LD_LIBRARY_PATH timeout 120 $B/tests/gpu/test_gpu_$t > $OUT/v10_test_gpu_$t.log 2>&1
  echo "v10 test_gpu_$t rc=$? ($(dev_elapsed) s): $(tail -n 1 $OUT/v10_test_gpu_$t.log | cut -c1-100)"
done
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum
for w in 16x4096 64x1024 logu-64k; do
  for cfg in base v10; do
    lib=$B/kernels; [ $cfg = v10 ] && lib=$V
    # launches 4-6: the training call's (the driver's first three are the standalone quantize)
    LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 100 ncu --clock-control none -k regex:quantize_block_warp \
      --launch-skip 3 -c 3 --metrics $M $B/experiments/latency/latency --workloads $w --recipes mxfp8 --passes train \
      --warmup 1 --iters 2 --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-$cfg-$w.h5 2>/dev/null |
      grep -E "gpu__|dram__|lts__" | sed 's/  */ /g' > "$OUT/v10_ncu_${cfg}_$w.txt"
    echo "== $cfg $w (launches 4-6; medians): $(python3 - "$OUT/v10_ncu_${cfg}_$w.txt" <<'PY'
import sys, statistics as st, collections
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 3: v[f[0]].append((float(f[-1].replace(",", "")), f[-2]))
print("  ".join("%s %.4g %s" % (k.split("__")[1].split(".")[0] + ":" + k.split("__")[0], st.median(x for x, _ in l), l[0][1])
                for k, l in v.items()))
PY
)"
  done
done
CONFIGS="base= v10=LIB=$V" WORKLOADS="16x4096 64x1024 logu-64k" PASSES=fwd+quant,train ROUNDS=2 BUDGET=2 \
  DRIVER=$B/experiments/latency/latency OUTDIR=/tmp/ab10 bash dev/latency_ab.sh
echo "done ($(dev_elapsed) s)"
