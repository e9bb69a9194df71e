#!/bin/bash
# Forty-eighth session, second command: (1) the tree's build and test_gpu_backward (its new
# assertions: the launch order used exactly on FP8 GQA with documents of <= 2048 tokens, and a GQA
# case past that); (2) v113 (dev/backward/v113_head_groups.patch), the backward's items grouped by
# G heads inside each document, timed against the tree: g16 = the grid's own order through the
# ORDER kernels (the order table's own cost), g4 / g2 = groups of 4 / 2 heads. Why: longest first
# measured +16 % at 16x4096 MHA by spreading the resident CTAs over 8 documents; the grid's order
# holds 16 heads of one document (~4 MB each at 4096 tokens: 64 MB against 50 MB of L2), groups of
# 4 hold 16 MB. Prediction: g16 = tree within 0.3 %; g4 faster at 4096 tokens if L2 misses cost
# (the backward reads ~17 GB through L2 at 16x4096), no change at 1024.
# Usage (device, repo root): bash dev/sessions/forty-eighth_groups.sh   (~6 minutes)
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh # OUT, dev_setup (build-device; folded in after the run, which built the same with its own lines)
O=$OUT
V=/tmp/v113
dev_setup
s=$SECONDS
build-device/tests/gpu/test_gpu_backward > "$O/test_gpu_backward.log" 2>&1
echo "test_gpu_backward: rc=$? ($((SECONDS - s)) s)"
grep -E "launch order|FAIL|ok$" "$O/test_gpu_backward.log" | cut -c1-150 | sort | uniq -c | head -20
grep -E "^2100" "$O/test_gpu_backward.log" | cut -c1-200
s=$SECONDS
rm -rf $V && mkdir -p $V
tar --exclude='./build*' --exclude=./.git --exclude=./data/runs -cf - . | tar -xf - -C $V
(cd $V && patch -p1 -s < dev/backward/v113_head_groups.patch) || { echo "patch does not apply"; exit 1; }
(cd $V && dev_setup)
L=$V/build-device/kernels
CONFIGS="tree=LIB=build-device/kernels g16=LIB=$L,FLAMIA_SM90_BWD_ORDER=2,FLAMIA_SM90_BWD_GROUP=16 g4=LIB=$L,FLAMIA_SM90_BWD_ORDER=2,FLAMIA_SM90_BWD_GROUP=4 g2=LIB=$L,FLAMIA_SM90_BWD_ORDER=2,FLAMIA_SM90_BWD_GROUP=2" \
  WORKLOADS="${WL:-16x4096 4x4096 8192+224x256 16x1024}" PASSES=bwd ROUNDS=${ROUNDS:-2} \
  DRIVER=build-device/experiments/latency/latency bash dev/latency_ab.sh 2>&1 | tail -20
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
