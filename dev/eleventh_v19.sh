#!/bin/bash
# A short device command (~5 min), prepared in the eleventh session and not run there (its
# device time was spent): backward v19_pre_cpasync (check_v19_pre_cpasync) against the
# committed kernel (check_backward): dQ / dK / dV bytes in the deterministic mode for the
# three kinds, ncu durations of bwd_pre_do at 16x4096 (committed: 693-704 us mxfp8, 648 us
# exact), and the backward's time there. Predicted: v19 pre_do ~300-350 us.
# Build here first (repo root): sh dev/backward/build.sh dev/backward/v19_pre_cpasync.patch;
# carry dev/backward/bin.
# First, the gpu suite and compute-sanitizer on the committed library: the eleventh session's
# workspace changes (no dot_codes; BF16 operand copies for the bf16 recipe only) are
# host-side and were not run on the GPU there (~3 min; KEEP_LOGS so its logs stay in $OUT).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/eleventh_v19.sh > $OUT/v19.log 2>&1
export OMP_NUM_THREADS=16
KEEP_LOGS=1 bash experiments/latency/device_run.sh tests sanitize
B=dev/backward/bin T=$(mktemp -d) BASE=check_backward NEW=check_v19_pre_cpasync
for spec in "mxfp8 rand3000:1 4 2 1" "exact rand2000:3 8 2 1" "bf16 rand2000:3 8 2 1" "mxfp8 3x1024 4 4 0"; do
  for b in $BASE $NEW; do
    BWD_DET=1 BWD_DUMP=$T/$b.bin timeout 60 $B/$b $spec none >/dev/null 2>&1 || echo "$b $spec: rc $?"
  done
  if cmp -s $T/$BASE.bin $T/$NEW.bin; then echo "== $spec: same bytes"; else echo "== $spec: DIFFERS"; fi
done
for kind in mxfp8 exact; do
  for b in $BASE $NEW; do
    GPU_FWD=1 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:bwd_pre_do \
      $B/$b $kind 16x4096 16 16 1 none 0 2>/dev/null | awk -v t="$kind $b" '/gpu__time_duration.sum/ { print "ncu bwd_pre_do 16x4096", t, $(NF), $(NF-1) }'
  done
done
for b in $BASE $NEW $BASE $NEW; do
  GPU_FWD=1 timeout 60 $B/$b mxfp8 16x4096 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/16x4096 mxfp8 $b: /"
done
