#!/bin/bash
# Prepared in the thirty-seventh session for the next (~6 min; carry dev/backward/bin, built
# here: check_backward = 99940d0's backward, check_v88_probe_no_split, check_v89_lean_body,
# check_v90_lean_kernel, check_v91_probe_no_masked; `sh dev/backward/build.sh
# dev/backward/v88_probe_no_split.patch dev/backward/v89_lean_body.patch
# dev/backward/v90_lean_kernel.patch dev/backward/v91_probe_no_masked.patch` if missing): does the
# backward's never-executed split P path cost time in its loop (the forward's v41: 3.8 %)?
# 1. compare.sh: bytes (deterministic dQ) and the reference checks on the usual layouts, where
#    every build takes its lean path (no row needs the split), then the timing;
# 2. rows past the direct range (BWD_QSCALE=40): v89 / v90 take their full path; their bytes
#    must equal the base's (v88, which has no split path, is expected to differ or fail).
# Usage (device, repo root): bash dev/sessions/thirty-eighth_bwd_lean.sh > $OUT/bwd_lean.log 2>&1
export OMP_NUM_THREADS=16
B=dev/backward/bin
V="check_backward check_v88_probe_no_split check_v89_lean_body check_v90_lean_kernel"
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" bash dev/backward/compare.sh $V
# v91 (v88 without the masked path too; wrong on diagonal sub-steps): timing only, mxfp8
CHECK=0 TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v88_probe_no_split check_v91_probe_no_masked

T=$(mktemp -d)
for kind in mxfp8 exact; do
  for b in $V; do
    BWD_QSCALE=40 BWD_DET=1 BWD_DUMP=$T/$b.bin timeout 60 $B/$b $kind "rand3000:2" 4 2 1 full 2>&1 \
      | grep -E "PASS|FAIL" | cut -c1-200 | sed "s/^/QSCALE=40 $kind $b: /"
    [ $b = check_backward ] && continue
    if cmp -s $T/check_backward.bin $T/$b.bin; then echo "== QSCALE=40 $kind: $b same bytes"; else echo "== QSCALE=40 $kind: $b DIFFERS"; fi
  done
done
