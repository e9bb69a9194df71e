#!/bin/bash
# Prepared in the sixty-first session (no device time left), to run next: what holds the training
# call's quantize at 74 % of the H100's bandwidth after v10 (652 us for ~1.6 GB at 16x4096)? The
# suspect: Q^T, K^T and V^T (~400 MB) are written as 32-byte pieces of rows t_vpad bytes apart.
# Two timing-only probes (their Q^T and K^T are wrong; the rest of the step runs on them):
#   v12a (dev/quantize/v12a_probe_tr_skip.patch): no Q^T / K^T stores (268 MB fewer writes);
#   v12b (v12b_probe_tr_contiguous.patch): the same bytes, each warp's 4 KB piece contiguous.
# Count: at the base's rate, 268 MB fewer bytes take 652 * 1.34 / 1.61 = ~543 us (v12a), and v12b
# equals the base. Predicted if the 32-byte pieces are the cap: v12a < 520 us, v12b <= 600 us.
# Decision: v12b <= 600 us (-8 %) -> design a blocked Q^T / K^T layout the backward's TMA can
# read; v12b within 3 % of the base -> the pattern is not the cap, quantize stays as it is.
# Needs no device build: carry build-carry (bash dev/carry_bins.sh), build-v12a and build-v12b
# (bash dev/variant_lib_here.sh dev/quantize/v12a_probe_tr_skip.patch build-v12a, the same
# for v12b). ~60 s on a fresh machine.
# Usage (device, repo root): bash dev/sessions/sixty-first_v12_probe.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
C=${C:-build-carry}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum
for w in 16x4096 64x1024; do
  for cfg in base v12a v12b; do
    lib=$PWD/$C/kernels; [ $cfg != base ] && lib=$PWD/build-$cfg
    # launches 1-3: the standalone quantize (V^T only); 4-6: the training call's (Q^T, K^T too)
    LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 60 ncu --clock-control none -k regex:quantize_block_warp -c 6 \
      --metrics $M $C/experiments/latency/latency --workloads $w --recipes mxfp8 --passes train --warmup 1 \
      --iters 2 --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-$cfg-$w.h5 2>/dev/null |
      grep -E "gpu__time|dram__|lts__" | sed 's/  */ /g' > "$OUT/v12_ncu_${cfg}_$w.txt"
    echo "== $cfg $w (launches 1-6, one line a metric):"
    awk '{v[$1] = v[$1] "  " $NF " " $(NF-1)} END {for (k in v) print "  " k ":" v[k]}' "$OUT/v12_ncu_${cfg}_$w.txt" | sort
  done
done
