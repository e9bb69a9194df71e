#!/bin/bash
# Tenth session's last device command: what the backward's transposed-tile path costs
# (Q^T / K^T / dO^T by TMA only for documents starting on a 16-token boundary, the others
# built from staged row tiles: backward.cu tma_ok), measured as the forward's was: the
# catalogue's logu-64k lengths as they are against rounded up to 16 (every document by TMA,
# +0.12 % FLOPs); then Table A at the working tree (device_run.sh).
# Build here first: sh dev/backward/build.sh; carry dev/backward/bin.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/backward/run_tenth_final.sh
export OMP_NUM_THREADS=16
LOGU64K=lens:644,266,4260,1092,55,3420,612,333,161,197,46,18293,66,125,976,20103,124,1142,886,58,140,1162,9359,2016 # data/workloads/catalogue.tsv
LOGU64K16=lens:656,272,4272,1104,64,3424,624,336,176,208,48,18304,80,128,976,20112,128,1152,896,64,144,1168,9360,2016
for rep in 1 2; do
  for L in $LOGU64K $LOGU64K16; do
    GPU_FWD=1 timeout 90 dev/backward/bin/check_backward mxfp8 $L 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/${L:0:12} /"
  done
done
LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh tests sanitize ours peers flex
