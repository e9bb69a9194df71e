#!/bin/bash
# Sixty-seventh session: rule I, set from rule H's run (dev/logs/sixty-seventh_rule_h_h100.log). Groups below
# 4 (MHA, 2) whose split chunks miss the grid order's floor (8 CTAs an SM) or limit (6 chunks) launch
# them longest first where the chunk's tile pairs an SM reach its longest CTA's query tiles (else that
# CTA alone sets each chunk's time: logu:32768:32:16384:7, 0.70, lost 20 % under H) and the longest
# document has >= 16 tiles (8x1024 and 12x1024, 8 tiles, lost 1-2 % under H), floor 4 CTAs an SM (2x4096
# and 3x4096 at 2-3 an SM: +-1 %), up to 16 chunks. GQA groups of >= 4: rule F as before. Against F
# (FLAMIA_SM90_DQ_SPLIT_LONG_TILES=1000000: rule F's plans exactly). Carry build-carry. Pass
# FLAMIA_GIT_COMMIT=<hash>.
# Set (in rule H's run, where rule I takes H's plan): 8192+32x256 0.955, logu-16k 0.961, logu-64k 0.951,
# 4x4096 0.957, 5x4096 0.957, 7x4096 0.942, 8x2048 0.982, 8192+64x256 0.956, logu:16384:32:8192:5 0.964.
# Validation, new, path changes (plans at 132 SMs): 6x4096 4 chunks of 792; 10x2048 3 of 850; 12x2048 3 of
# 1020; 4096+32x256 2 of 1032; logu:32768:32:16384:9 8 of 538; logu:65536:32:16384:2 8 of 1078 (past 6
# chunks). Predicted 0.93-0.99 each (median ~0.96).
# Controls, the same plan both ways: 16x4096, 8192+224x256, gqa-16x1024, 3x4096, 12x1024,
# logu:32768:32:16384:7: 0.99-1.01.
# Rule (before the run): I lands if no workload's training call I / F is > 1.01 (best of two) and the
# validation shapes' median is <= 0.98; else the patch does not land.
. dev/device_lib.sh
dev_carry
dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_backward test_gpu_api
echo "tests done ($(dev_elapsed) s)"
W="--workloads 6x4096,10x2048,12x2048,4096+32x256,logu:32768:32:16384:9,logu:65536:32:16384:2,8192+32x256,logu-16k,logu-64k,4x4096,7x4096,8x2048,16x4096,8192+224x256,gqa-16x1024,3x4096,12x1024,logu:32768:32:16384:7 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
variant() { case $1 in F*) export FLAMIA_SM90_DQ_SPLIT_LONG_TILES=1000000 ;; *) unset FLAMIA_SM90_DQ_SPLIT_LONG_TILES ;; esac; }
dev_lat_ab "$W" variant I F I2 F2
python3 dev/sessions/ab_table.py $OUT/logs I:F:"rule I / rule F"
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(dev_elapsed) s)"
