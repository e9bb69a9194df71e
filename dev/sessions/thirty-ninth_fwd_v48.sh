#!/bin/bash
# Prepared in the thirty-eighth session for the next (~3 min; carry dev/forward/bin, built here:
# check_forward = 7999caf's kernel (v46), check_v48_osum_halves; if missing:
# sh dev/forward/build.sh dev/forward/v48_osum_halves.patch). Does adding oacc's two column
# halves at different steps (half a burst under each Q K product) hide the rest of the O sum's
# cost? 1. V = 1 bias by position (expected about v46's); 2. at interval 2 v48 adds both halves
# together, so its bytes must equal v46's there (the reference checks run too); 3. at the
# default interval (4) checks and timing; 4. interval 8, timing.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_fwd_v48.sh > $OUT/fwd_v48.log 2>&1
export OMP_NUM_THREADS=16
V="check_forward check_v48_osum_halves"
bash dev/forward/bias_by_position.sh $V
echo "== interval 2 (v48 = v46 expected: same bytes)"
O_FLUSH=2 WORKLOADS="16x4096 16 16 1" bash dev/forward/compare.sh $V
echo "== interval 4 (default)"
BYTES=0 WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" bash dev/forward/compare.sh $V
echo "== interval 8"
O_FLUSH=8 CHECK=0 BYTES=0 WORKLOADS="16x4096 16 16 1" bash dev/forward/compare.sh $V
