#!/bin/bash
# Twenty-second session, last device command (~8.5 min): Table A at the commit with v46
# promoted (mxfp8's dK partial exponent from lane 0; -1.5 % of the backward alone at 16x4096
# in dev/logs/twentysecond_bwd.log): dev/sessions/twelfth_final.sh (gpu suite, sanitizers, ours,
# peers, FlexAttention; logs in $OUT/logs.tgz), then the training call's kernels by ncu
# (16x4096 mxfp8, graph-replayed, Q^T / K^T written by quantize: the default).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twentysecond_final.sh > $OUT/final.log 2>&1
bash dev/sessions/twelfth_final.sh
exec bash dev/ncu_train_step.sh
