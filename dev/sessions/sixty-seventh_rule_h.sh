#!/bin/bash
# Sixty-seventh session: rule H, the default mode's split longest first for any group (not only GQA groups
# of >= 4) where a chunk's grid misses the grid order's floor (8 CTAs an SM) or the split takes more than
# its 6 chunks, then down to 2 CTAs an SM and up to 16 chunks (FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP=1,
# FLAMIA_SM90_DQ_SPLIT_ORDERED_CHUNKS=16). Set from the doc_tiles run's exploration X (training call
# 0.943-0.968 on 8192+32x256, logu-16k, logu-64k, all taking the reduce-adds under rule F) and the
# sixty-sixth session's 4x4096 (0.951-0.959 longest first). Against F (=4, =6: rule F's plans exactly).
# Carry build-carry. Pass FLAMIA_GIT_COMMIT=<hash>.
# Plans (132 SMs) H / F: 4x4096 4 chunks of 528 ordered / none; 2x4096 4 of 264; 3x4096 4 of 396; 5x4096
# 4 of 660; 7x4096 4 of 924; 8x1024 2 of 576; 12x1024 2 of 864; 8x2048 3 of 680; 8192+64x256 4 of 1028;
# logu:32768:32:16384:7 16 of 264; logu:16384:32:8192:5 4 of 552 (all ordered under H, reduce-adds under F);
# controls 16x4096, 8192+224x256, gqa-16x1024: the same plan both ways.
# Predicted, training call H / F: 8192+32x256, logu-16k, logu-64k 0.94-0.97 (set); 4x4096 0.95-0.96;
# validation: 5x4096, 7x4096, 12x1024, 8x2048, 8192+64x256, the two logu 0.95-1.00; 2x4096, 3x4096, 8x1024
# 0.95-1.03 (unknown: 2-4 CTAs an SM); controls 0.99-1.01.
# Rule (before the run): H lands if no workload's training call H / F is > 1.01 (best of two) and the
# validation shapes' median is <= 0.98; else the patch does not land.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=$PWD/build-carry/kernels:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT/logs
C=build-carry
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
. dev/device_lib.sh
dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_backward test_gpu_api
echo "tests done ($(( $(date +%s) - t0 )) s)"
W="--workloads 8192+32x256,logu-16k,logu-64k,4x4096,5x4096,7x4096,12x1024,8x2048,8192+64x256,logu:32768:32:16384:7,logu:16384:32:8192:5,2x4096,3x4096,8x1024,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
for m in H F H2 F2; do
  case $m in F*) export FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP=4 FLAMIA_SM90_DQ_SPLIT_ORDERED_CHUNKS=6 ;;
             *) unset FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP FLAMIA_SM90_DQ_SPLIT_ORDERED_CHUNKS ;; esac
  timeout 150 $C/experiments/latency/latency --backend cuda $W --out $OUT/logs/lat_$m.h5 > $OUT/logs/lat_$m.log 2>&1; echo "latency $m rc=$? ($(( $(date +%s) - t0 )) s)"
done
python3 dev/sessions/ab_table.py $OUT/logs H:F:"rule H / rule F"
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(( $(date +%s) - t0 )) s)"
