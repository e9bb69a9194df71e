#!/bin/bash
# Queued by the sixty-eighth session (no H200 came since the sixty-first). Carry build-carry
# (bash dev/carry_bins.sh at the commit measured) and .whl (the cudnn-fp8 peer). Pass
# FLAMIA_GIT_COMMIT=<hash>. Best on an H200 (the acceptance GPU); on an H100 every step still tells.
# 1. Every gpu test program (since the sixty-eighth session: rule J, the room for one chunk).
# 2. Table D's pair (pipelines/config.yaml deterministic_default / deterministic_on) into $OUT. On an
#    H200: copy them to data/measured/h200/ and drop data/measured/h100's pair (tables.smk reads the first
#    folder with a pair, h100 first). On an H100: they replace data/measured/h100's. Then
#    `snakemake -c2 paper_tables/table_d_deterministic_cost.md`. Rule J moves gqa-16x1024's default
#    column from 2 chunks to 1.
# 3. The acceptance ratios, the default mode then the deterministic one, 3 rounds each
#    (dev/sessions/sixty-fifth_ratios.sh). On an H200 the default run's file becomes
#    data/measured/h200/ratios_gpu.h5 (set its git_commit) and perf-notes "Where the targets stand" takes
#    its figures. Predicted from the H100 (sixty-eighth session, rule J: 366.2 TFLOP/s, 0.864x, 4 of 9,
#    16x1024 0.75x, gqa-16x1024 0.90x): on an H200 backward ~365-380 TFLOP/s at 16x4096 (336 at d8dca16),
#    training call ~0.84-0.88x cuDNN BF16 (0.818x), still 4 of 9 ahead of the fastest peer.
. dev/device_lib.sh
dev_carry
dev_all_gpu_tests
dev_table_d
tar -C $OUT -czf $OUT/tests.tgz logs && rm -rf $OUT/logs
echo "tests done ($(dev_elapsed) s)"
MODES="default det" bash dev/sessions/sixty-fifth_ratios.sh
echo "done ($(dev_elapsed) s)"
