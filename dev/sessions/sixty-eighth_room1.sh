#!/bin/bash
# Prepared in the sixty-seventh session, not run: what the default mode's split gains from one chunk
# instead of two, where the workspace grows for it by at most 1/8 (region dq_room; today's cap is 1/16,
# aimed at 4 chunks). An exploration for a later rule, no decision here. Carry build-carry. Pass
# FLAMIA_GIT_COMMIT=<hash>.
# B: FLAMIA_SM90_DQ_ROOM_CHUNKS=1 FLAMIA_SM90_DQ_ROOM_GROWTH=8 (grow dq_accum's room until every kv head
# fits one chunk, where that costs at most 1/8 of the regions before dq_accum); A: the defaults (4, 16).
# Host plans with the drivers' host copy of cu_seqlens (132 SMs), A -> B, workspace:
#   16x1024 2 chunks -> 1 (2,304 CTAs), 452.0 -> 477.1 MB; 64x1024 2 -> 1, 1,807.8 -> 1,908.5 MB;
#   gqa-16x1024 2 -> 1 (576 CTAs, ordered), 349.3 -> 374.5 MB; 8x1024 reduce-adds -> 1 chunk (1,152 CTAs,
#   8.7 an SM), 226.0 -> 238.6 MB; 12x1024 reduce-adds -> 1 (1,728), 339.0 -> 357.8 MB;
#   controls, the same plan: 128x512 (1 chunk), 8192+224x256 (2), 16x2048 (3).
# Predicted, training call B / A: 16x1024 0.95-0.98 (the deterministic mode's single chunk was 4.5 %
# faster, sixty-seventh session's ratios), 64x1024 0.97-0.99 (2.1 %), gqa-16x1024 0.97-1.00, 8x1024 and
# 12x1024 0.98-1.02 (short documents: the split gained little there), controls 0.99-1.01.
. dev/device_lib.sh
dev_carry
W="--workloads 16x1024,64x1024,gqa-16x1024,8x1024,12x1024,128x512,8192+224x256,16x2048 --recipes mxfp8 --passes bwd,train --warmup 3 --iters 20 --verify-rows 0"
variant() { case $1 in B*) export FLAMIA_SM90_DQ_ROOM_CHUNKS=1 FLAMIA_SM90_DQ_ROOM_GROWTH=8 ;;
                       *) unset FLAMIA_SM90_DQ_ROOM_CHUNKS FLAMIA_SM90_DQ_ROOM_GROWTH ;; esac; }
dev_lat_ab "$W" variant B A B2 A2
python3 dev/sessions/ab_table.py $OUT/logs B:A:"one chunk within 1/8 / defaults"
tar -C $OUT -czf $OUT/logs.tgz logs && rm -rf $OUT/logs
echo "done ($(dev_elapsed) s)"
