#!/bin/bash
# Sixty-sixth session, prepared, NOT RUN (the session's device time ran out). First, on the CPU
# machine: `git apply dev/backward/v126_rule_g.patch && bash dev/carry_bins.sh`.
# Rule G (v126), the grid order's floor 4 CTAs an SM (not 8) where documents are 4,096
# tokens or more (FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_LONG / _LONG_DOC), set from rule E's run
# (4x4096 and 6x4096 0.949x in the grid's order at 4-6 CTAs an SM; 8x2048 1.000x and 8x1024 1.021x, whose
# documents are shorter). Against A (FLAMIA_SM90_DQ_SPLIT_MIN_CTAS=8). Carry build-carry. Pass
# FLAMIA_GIT_COMMIT=<hash>.
# Validation shapes, new, path changes (reduce-adds -> split in 4 chunks): 5x4096 (5.0 CTAs an SM) and
# 7x4096 (7.0): training call G / A predicted 0.93-0.97. Set G: 4x4096, 6x4096 (~0.95). Controls:
# 3x4096 (3.0, under both floors), 8x1024 (floor 8 both), 16x4096 (past both): 0.99-1.01.
# Rule (before the run): G stays the default if both validation shapes are <= 0.98x and no workload is
# > 1.01x (best of two); else the patch does not land.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
W="--workloads 5x4096,7x4096,4x4096,6x4096,3x4096,8x1024,16x4096 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in G A G2 A2; do
  case $m in A*) export FLAMIA_SM90_DQ_SPLIT_MIN_CTAS=8 ;; *) unset FLAMIA_SM90_DQ_SPLIT_MIN_CTAS ;; esac
  timeout 100 $C/experiments/latency/latency --backend cuda $W --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$?"
done
python3 dev/sessions/ab_table.py $OUT/logs G:A:"default mode"
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
