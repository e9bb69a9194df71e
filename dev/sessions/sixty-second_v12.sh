#!/bin/bash
# Sixty-second session, one device command, no device build (everything carried):
# 1. The sixty-first session's queued v12 probe (what holds the training call's quantize at ~74 %
#    of bandwidth: the transposes' 32-byte pieces?), with v12c beside it: ncu of the block-warp
#    quantize kernel in the mxfp8 training call, base / v12a (no Q^T, K^T stores) / v12b (the same
#    bytes contiguous, timing only) / v12c (dev/quantize/v12c_blocked_qkt.patch: Q^T and K^T in
#    blocks of 32 positions, [h][t_vpad/32][D][32], read by the backward through a 4-D TMA map).
#    Count (sixty-first session): at the base's rate, 268 MB fewer bytes take 652 * 1.34 / 1.61 =
#    ~543 us (v12a) and v12b equals the base. Predicted if the 32-byte pieces are the cap: v12a < 520 us and
#    v12b <= 600 us against the base's ~652 (H100); v12c's quantize as v12b's.
# 2. dev/quantize/tma_blocked_check.cu: the 4-D map with a 32-byte inner box lands the tile byte
#    for byte as today's 3-D map (128-byte swizzle), and both maps' TMA read rates.
# 3. v12c's correctness: test_gpu_quantize (Q^T, K^T of a train step against the host's blocked
#    layout) and test_gpu_backward (standalone backward: bwd_transpose writes the blocks; train
#    step: quantize does), built here with the patch.
# 4. A/B base vs v12c, dev/latency_ab.sh, passes bwd and train (bwd: bwd_transpose + the main
#    kernel's 4-D loads; train: quantize's blocked stores too), 3 workloads, 2 rounds.
# Decision: promote v12c if 2 and 3 pass, the training call is >= 0.5 % faster at 16x4096 and no
# workload's bwd or train is > 0.5 % slower; if v12b is within 3 % of the base, the pieces are not
# the cap and the layout stays (v12c then only if 4 shows a gain on its own).
# Here first: bash dev/carry_bins.sh; nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a
#   -Ikernels/sm90 -o build-carry/tma_blocked_check dev/quantize/tma_blocked_check.cu;
#   bash dev/variant_lib_here.sh dev/quantize/v12a_probe_tr_skip.patch build-v12a (and v12b);
#   bash dev/variant_lib_here.sh dev/quantize/v12c_blocked_qkt.patch build-v12c
#   tests/gpu/test_gpu_quantize tests/gpu/test_gpu_backward (the library and both patched tests).
# Device (carry build-carry build-v12a build-v12b build-v12c): bash dev/sessions/sixty-second_v12.sh
# Result (sixty-third session, H100, after variant_lib_here.sh's fix): quantize base 645 us,
# v12a 500, v12b 605, v12c 606; v12c's 4-D map faults / fails test_gpu_backward: refuted.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
C=build-carry
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== tma_blocked_check (16 heads, t_vpad 65536 = 16x4096's Q^T)"
./$C/tma_blocked_check 65536 > $OUT/tma_blocked_check.log 2>&1; echo "rc=$?"; cat $OUT/tma_blocked_check.log
for t in ${TESTS-quantize backward}; do
  LD_LIBRARY_PATH=$PWD/build-v12c:$LD_LIBRARY_PATH timeout 200 build-v12c/test_gpu_$t > $OUT/v12c_test_gpu_$t.log 2>&1
  echo "v12c test_gpu_$t rc=$? ($(( $(date +%s) - t0 )) s): $(tail -n 1 $OUT/v12c_test_gpu_$t.log | cut -c1-110)"
done
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
for w in 16x4096; do
  for cfg in ${CFGS:-base v12a v12b v12c}; do
    lib=$PWD/$C/kernels; [ $cfg != base ] && lib=$PWD/build-$cfg
    # launches 4-6: the training call's quantize (Q^T, K^T too); 1-3 are the standalone one's
    LD_LIBRARY_PATH=$lib:$LD_LIBRARY_PATH timeout 60 ncu --clock-control none -k regex:quantize_block_warp \
      --launch-skip 3 -c 3 --metrics $M $C/experiments/latency/latency --workloads $w --recipes mxfp8 --passes train \
      --warmup 1 --iters 2 --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-$cfg-$w.h5 2>/dev/null |
      grep -E "gpu__time|dram__" | sed 's/  */ /g' > "$OUT/v12_ncu_${cfg}_$w.txt"
    echo "== $cfg $w (training call's quantize, launches 4-6):" \
      $(awk '{v[$1] = v[$1] " " $NF} END {for (k in v) print k ":" v[k] ";"}' "$OUT/v12_ncu_${cfg}_$w.txt" | sort)
  done
done
echo "ncu done ($(( $(date +%s) - t0 )) s)"
[ "${AB:-1}" = 0 ] || CONFIGS="base= v12c=LIB=build-v12c" WORKLOADS="16x4096 64x1024 gqa-16x1024" PASSES=bwd,train ROUNDS=${ROUNDS:-2} BUDGET=2 \
  DRIVER=$C/experiments/latency/latency OUTDIR=/tmp/ab12 bash dev/latency_ab.sh 2>&1 | tee $OUT/v12c_ab.log | tail -12
echo "done ($(( $(date +%s) - t0 )) s)"
