#!/bin/bash
# Thirtieth session, first device command (~7 min): programmatic dependent launch
# (kernels/sm90/sm90_pdl.cuh; the training call's quantize zeroes the forward's counters, so
# no memset stands between its kernels). The gpu suite (test_gpu_api runs twice: PDL on, and
# FLAMIA_SM90_PDL=0; its back-to-back calls check that no kernel touches memory before its
# wait) and the sanitizers on the PDL build, then an A/B of FLAMIA_SM90_PDL=0 against on
# with the latency driver (dev/latency_ab.sh: configurations alternated per workload and round).
# Ran at 1adbc2a (log dev/logs/thirtieth_pdl.log); the change was not kept: it is dev/pdl_v1.patch
# (git apply it first to run this again).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/thirtieth_pdl.sh > $OUT/run.log 2>&1
set -u
export OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}
t0=$(date +%s)
KEEP_LOGS=1 bash experiments/latency/device_run.sh tests sanitize
echo "== tests and sanitizers done at $(( $(date +%s) - t0 )) s"
CONFIGS="off=FLAMIA_SM90_PDL=0 on=" WORKLOADS="16x4096 16x1024 64x1024 logu-16k" PASSES=fwd,bwd,train \
  ROUNDS=2 DRIVER=build-device/experiments/latency/latency OUTDIR=/tmp/latency_ab bash dev/latency_ab.sh | tee "$OUT/ab.md"
cp /tmp/latency_ab/latency.log "$OUT/ab_driver.log"
echo "== done at $(( $(date +%s) - t0 )) s"
cd "$OUT" && f=$(ls *.log *.txt 2>/dev/null | grep -v '^run.log$'); tar czf logs.tgz $f && rm -f $f
