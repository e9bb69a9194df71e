#!/bin/bash
# Sixty-eighth session, rule J: the layout grows dq_accum's room for every kv head in one chunk first,
# where that costs at most 1/8 of the regions before dq_accum (FLAMIA_SM90_DQ_ROOM_ONE_GROWTH, default 8),
# else for 4 chunks within 1/16 as before. Set from sixty-eighth_room1.sh's shapes (training call
# 0.931-0.989x on 16x1024, 64x1024, gqa-16x1024, 8x1024, 12x1024). Validated here on shapes new to it.
# Carry build-carry (bash dev/carry_bins.sh at the commit measured). Pass FLAMIA_GIT_COMMIT=<hash>.
# J: the default; O: FLAMIA_SM90_DQ_ROOM_ONE_GROWTH=0 (the layout before rule J).
# Host plans (132 SMs, the drivers' host copy of cu_seqlens), O -> J:
#   validation: 10x1024 reduce-adds -> 1 chunk (10.9 CTAs an SM); 24x1024 2 -> 1 chunk; 32x1024 2 -> 1;
#   gqa-32x1024 2 ordered -> 1 in the grid's order (8.7); gqa-64x1024 2 -> 1; gqa-8x1024 reduce-adds ->
#   1 chunk ordered (2.2 an SM).
#   controls, the same plan: 16x4096 (4), 4x4096 (4, ordered), 16x1536 (2), 4x1024 (reduce-adds; the
#   room grows 6 MB there, unused).
# Rule, written before the run: J stays the default if the validation shapes' training call J / O has a
# median <= 0.98 and no workload reads > 1.01.
# Predicted, training call J / O: 10x1024 0.93-0.96 (8x1024 0.944, 12x1024 0.931 in room1); 24x1024 and
# 32x1024 0.96-0.99 (16x1024 0.955, 64x1024 0.987); gqa-32x1024 0.97-1.00; gqa-64x1024 0.98-1.00;
# gqa-8x1024 0.90-1.00 (longest first at 2.2 CTAs an SM, against the reduce-adds); controls 0.99-1.01.
. dev/device_lib.sh
dev_carry
dev_gpu_tests $C/tests/gpu $OUT/logs test_gpu_backward test_gpu_api
W="--workloads 10x1024,24x1024,32x1024,gqa-32x1024,gqa-64x1024,gqa-8x1024,16x4096,4x4096,16x1536,4x1024 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
variant() { case $1 in O*) export FLAMIA_SM90_DQ_ROOM_ONE_GROWTH=0 ;; *) unset FLAMIA_SM90_DQ_ROOM_ONE_GROWTH ;; esac; }
dev_lat_ab "$W" variant J O J2 O2
python3 dev/sessions/ab_table.py $OUT/logs J:O:"rule J / without (one chunk first)"
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(dev_elapsed) s)"
