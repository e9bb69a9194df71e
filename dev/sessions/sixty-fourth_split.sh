#!/bin/bash
# Sixty-fourth session, one device command, no device build (dev/backward/bin carried):
# a backward split in two without recomputation, counted by its two halves.
# 1. dev/backward/l_sketch: the dQ kernel of the split (per query tile, stream the dS codes and
#    row factors the main kernel wrote, dQ = sum over key pairs of 2^F (dS' K) in registers, BF16
#    out: no FP32 dq accumulator, no reduce-adds, no bwd_dq_out). Count: 2.2 GB of dS codes +
#    0.14 GB of factors at 16x4096, DRAM-bound: >= 0.70 ms at 3.35 TB/s (H100), 0.56 at 4.2 (H200).
# 2. dev/backward/v119_ds_out.patch (probe, timing only): the main kernel with dQ gone (no CTA
#    barrier in the sub-step, no dQ chains, staging, fence or reduce-adds) and each warpgroup's
#    dS tile + factors out by one TMA store a sub-step. Per-kernel times by ncu, base and probe.
#    Count: the forty-fifth session's v106 @dq removed the staging and adds alone: -22 % of the
#    backward; the chains, their scaling and the CTA barrier were 16.9 % of the stall samples.
# Prediction (16x4096, H100): probe main kernel 5.3-5.9 ms against the base's ~7.36; l_sketch
# 0.70-0.85 ms; so pre_do + main + dQ kernel ~6.4-7.1 ms against pre_do + main + dq_out ~8.0 ms.
# Decision: if probe main + l_sketch <= 0.85 x (base main + bwd_dq_out) at 16x4096, build the split
# (a real dQ kernel, the workspace as a triangle and chunked); otherwise set it aside.
# Here first: FWD_HEAD=1 sh dev/backward/build.sh "dev/backward/v119_ds_out.patch@on=BWD_DS_OUT=1";
#   nvcc (l_sketch.cu's header flags) -> dev/backward/bin/l_sketch and l_sketch_nomma (-DL_NO_MMA=1).
# Device (carry dev/backward/bin): bash dev/sessions/sixty-fourth_split.sh
# Result (H100): probe main 5.63 ms (base 7.38), l_sketch 1.63 ms (K^T from DRAM: the grid order); see _split2..6.sh.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== l_sketch (dQ kernel skeleton)"
for w in "16 4096" "4 4096" "64 1024"; do
  timeout 60 $B/l_sketch $w
  timeout 60 $B/l_sketch_nomma $w
done 2>&1 | tee $OUT/l_sketch.log
echo "l_sketch done ($(( $(date +%s) - t0 )) s)"
echo "== per-kernel ncu, base and v119 probe (mxfp8, us)"
for w in 16x4096 16x1024; do
  for b in check_backward check_v119_ds_out_on; do
    timeout 120 bash dev/ncu_durations.sh "$b $w" "bwd_" $B/$b mxfp8 $w 16 16 1 none 2
  done
done > $OUT/v119_ncu.log 2>&1
awk '{k = $1 " " $2 " " $3; v[k] = v[k] " " $4} END {for (x in v) print x ":" v[x]}' $OUT/v119_ncu.log | sort
echo "ncu done ($(( $(date +%s) - t0 )) s)"
echo "== whole backward, alternated (time_variants.sh)"
V="check_v119_ds_out_on" WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" timeout 300 bash dev/backward/time_variants.sh > $OUT/v119_time.log 2>&1
tail -n 12 $OUT/v119_time.log
echo "done ($(( $(date +%s) - t0 )) s)"
