#!/bin/bash
# The eleventh session's last, short device command (~2 min; 237 s of device time were
# left): backward v19_pre_cpasync (the working tree, check_backward) against HEAD's kernel
# (check_head): dQ / dK / dV bytes in the deterministic mode for the three kinds, ncu
# durations of bwd_pre_do at 16x4096, and the backward's time there.
# Build here first: git show HEAD:kernels/sm90/backward.cu > dev/backward/bin/obj/head.cu;
#   sh dev/backward/build.sh dev/backward/bin/obj/head.cu; carry dev/backward/bin.
# Usage (device, repo root): bash dev/eleventh_v19.sh > $OUT/v19.log 2>&1
export OMP_NUM_THREADS=16
B=dev/backward/bin T=$(mktemp -d)
for spec in "mxfp8 rand3000:1 4 2 1" "exact rand2000:3 8 2 1" "bf16 rand2000:3 8 2 1" "mxfp8 3x1024 4 4 0"; do
  for b in check_head check_backward; do
    BWD_DET=1 BWD_DUMP=$T/$b.bin timeout 60 $B/$b $spec none >/dev/null 2>&1 || echo "$b $spec: rc $?"
  done
  if cmp -s $T/check_head.bin $T/check_backward.bin; then echo "== $spec: same bytes"; else echo "== $spec: DIFFERS"; fi
done
for kind in mxfp8 exact; do
  for b in check_head check_backward; do
    GPU_FWD=1 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:bwd_pre_do \
      $B/$b $kind 16x4096 16 16 1 none 0 2>/dev/null | awk -v t="$kind $b" '/gpu__time_duration.sum/ { print "ncu bwd_pre_do 16x4096", t, $(NF), $(NF-1) }'
  done
done
for b in check_head check_backward check_head check_backward; do
  GPU_FWD=1 timeout 60 $B/$b mxfp8 16x4096 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/16x4096 mxfp8 $b: /"
done
