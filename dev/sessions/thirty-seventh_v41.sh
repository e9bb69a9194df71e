#!/bin/bash
# Prepared in the thirty-sixth session (~3 min; carry dev/forward/bin, built here: check_forward =
# 04d600a's kernel, check_fwd_head = 34adc67's, check_v41_osum_compiled_out from
# dev/forward/v41_osum_compiled_out.patch): where the rest of the O sum's fixed cost lives. v41
# compiles the sum out; against check_forward at O_FLUSH=0 it should give the same bytes, and its
# time says whether the addition blocks' presence in the loop is the cost (v41 ~ the head) or not
# (v41 ~ check_forward at 0).
# Usage (device, repo root): bash dev/sessions/thirty-seventh_v41.sh > $OUT/v41.log 2>&1
export OMP_NUM_THREADS=16
# compare.sh's checks, bytes and timing (both rounds alternated), all at interval 0
O_FLUSH=0 WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|4x4096 16 16 1" \
  bash dev/forward/compare.sh check_forward check_v41_osum_compiled_out check_fwd_head | sed "s/^/O_FLUSH=0 /"
