#!/bin/bash
# Fortieth session (~4 min; carry dev/backward/bin/check_backward, check_v99_dq_writer_on and
# check_v99_dq_writer_regs; build: sh dev/backward/build.sh
# "dev/backward/v99_dq_writer.patch@on=FLAMIA_BWD_DQ_WRITER=1"
# "dev/backward/v99_dq_writer.patch@regs=FLAMIA_BWD_DQ_WRITER=2"). v99: a dQ-writer warpgroup
# issues the default kernels' reduce-adds (consumers at 240 registers); @regs the same
# 384-thread structure with the consumers adding themselves (the register cost alone).
# Checked (the default kernels against the reference; bytes in the deterministic mode, which
# v99 leaves as it is), synccheck and racecheck on a small case, then timed.
# Usage (device, repo root): bash dev/sessions/fortieth_bwd_writer.sh > $OUT/bwd_writer.log 2>&1
export OMP_NUM_THREADS=16
B=dev/backward/bin
for t in synccheck racecheck; do
  for k in mxfp8 exact; do
    echo "== $t $k check_v99_dq_writer_on"
    timeout 150 compute-sanitizer --tool $t $B/check_v99_dq_writer_on $k rand700:3 4 2 1 full 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|PASS|FAIL" | head -5
  done
done
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand5000:11 4 4 1" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v99_dq_writer_on check_v99_dq_writer_regs
TKINDS=exact CHECK=0 WORKLOADS="16x4096 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v99_dq_writer_on check_v99_dq_writer_regs
