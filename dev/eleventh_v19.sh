#!/bin/bash
# A short device command (~5 min), prepared in the eleventh session and not run there (its
# device time was spent): backward v19_pre_cpasync (check_v19_pre_cpasync) against the
# committed kernel (check_backward): dQ / dK / dV bytes in the deterministic mode and the CPU
# reference for the three kinds, the backward's time at 16x4096 (dev/backward/compare.sh),
# ncu durations of bwd_pre_do there (committed: 693-704 us mxfp8, 648 us exact).
# Predicted: v19 pre_do ~300-350 us.
# Build here first (repo root): sh dev/backward/build.sh dev/backward/v19_pre_cpasync.patch;
# carry dev/backward/bin.
# First, the gpu suite and compute-sanitizer on the committed library: the eleventh session's
# workspace changes (no dot_codes; BF16 operand copies for the bf16 recipe only) are
# host-side and were not run on the GPU there (~3 min; KEEP_LOGS so its logs stay in $OUT).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/eleventh_v19.sh > $OUT/v19.log 2>&1
export OMP_NUM_THREADS=16
KEEP_LOGS=1 bash experiments/latency/device_run.sh tests sanitize
BASE=check_backward NEW=check_v19_pre_cpasync
# bytes (deterministic dQ) and the reference for the three kinds, timing at 16x4096 (mxfp8)
KINDS="mxfp8 exact bf16" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=0 \
  WORKLOADS="16x4096 16 16 1" bash dev/backward/compare.sh $BASE $NEW
for kind in mxfp8 exact; do
  for b in $BASE $NEW; do
    GPU_FWD=1 timeout 60 bash dev/ncu_durations.sh "16x4096 $kind $b" bwd_pre_do dev/backward/bin/$b $kind 16x4096 16 16 1 none 0
  done
done
