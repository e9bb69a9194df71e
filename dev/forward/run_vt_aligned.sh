#!/bin/bash
# Device command of the document-aligned V^T (tenth session): the forward with every
# document's V^T tiles by TMA (check_forward, the working tree) against dd62ac5's
# (check_fwd_final: TMA only for documents starting on a 16-token boundary, the others
# through the producer's shared-memory transpose): reference checks, O / lse / frame bytes
# (must be the same: only where V^T lives changed), timing on two equal-length and three
# packed workloads; then, if all of that passed, Table A (device_run.sh: gpu suite,
# compute-sanitizer, ours, peers, Flex).
# Build here first: the dd62ac5 kernel with its own harness (git show dd62ac5:... and
# dev/forward/build.sh at dd62ac5) as dev/forward/bin/check_fwd_final, then
# sh dev/forward/build.sh; carry dev/forward/bin.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/forward/run_vt_aligned.sh
export OMP_NUM_THREADS=16
B=dev/forward/bin
OUT=${OUT:-/tmp/flamia-out}
LOG=$OUT/vt_aligned.log
WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_final check_forward 2>&1 | tee $LOG
LOGU64K=lens:644,266,4260,1092,55,3420,612,333,161,197,46,18293,66,125,976,20103,124,1142,886,58,140,1162,9359,2016
LOGU16K=lens:2132,5076,3609,445,57,312,39,74,51,2917,1672 # data/workloads/catalogue.tsv
for rep in 1 2; do
  for L in $LOGU64K $LOGU16K; do
    for b in check_fwd_final check_forward; do
      timeout 60 $B/$b mxfp8 $L 16 16 1 none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/${L:0:12} $b /"
    done
  done
done 2>&1 | tee -a $LOG
if grep -q "FAIL\|DIFFERS" $LOG; then echo "reference or bytes check failed: no Table A"; exit 1; fi
LAT_ARGS="--pass-budget 3" bash experiments/latency/device_run.sh tests sanitize ours peers flex
