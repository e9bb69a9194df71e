#!/bin/bash
# Twelfth session, first device command (~8 min): backward v19_pre_cpasync (bwd_pre_do rows by
# cp.async; prepared in the eleventh session, not run there) and v20_prologue (the main
# kernel's first query-tile loads before the key constants and G) against the committed kernel
# (check_backward):
#  1. dQ / dK / dV bytes in the deterministic mode and the CPU reference, three kinds
#     (dev/backward/compare.sh), the backward's time at 16x4096 and 16x1024 (mxfp8);
#  2. ncu durations of bwd_pre_do at 16x4096 (committed: 693-704 us mxfp8, 648 us exact;
#     v19 predicted ~300-350 us);
#  3. the gpu suite and compute-sanitizer on the committed library: the eleventh session's
#     workspace changes (no dot_codes; BF16 operand copies for the bf16 recipe only) are
#     host-side and were not run on the GPU there (KEEP_LOGS so its logs stay in $OUT).
# Build here first (repo root):
#   sh dev/backward/build.sh dev/backward/v19_pre_cpasync.patch dev/backward/v20_prologue.patch
# and carry dev/backward/bin.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twelfth_first.sh > $OUT/first.log 2>&1
export OMP_NUM_THREADS=16
stamp() { echo "== [$SECONDS s] $*"; }
BASE=check_backward
stamp compare
KINDS="mxfp8 exact bf16" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=0 \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" bash dev/backward/compare.sh $BASE check_v19_pre_cpasync check_v20_prologue
stamp ncu
for kind in mxfp8 exact; do
  for b in $BASE check_v19_pre_cpasync; do
    GPU_FWD=1 timeout 60 bash dev/ncu_durations.sh "16x4096 $kind $b" bwd_pre_do dev/backward/bin/$b $kind 16x4096 16 16 1 none 0
  done
done
stamp tests
KEEP_LOGS=1 bash experiments/latency/device_run.sh tests sanitize
stamp done
