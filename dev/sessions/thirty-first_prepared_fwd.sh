#!/bin/bash
# Prepared in the thirty-first session for the next one (~4 min with dev/forward/bin carried,
# built here by `git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v30_desc_advance.patch
# dev/forward/v29_fma_frame.patch`): two forward variants against the committed kernel,
# builds alternated (dev/forward/compare.sh: reference checks, bytes, then timings x2):
#   v30_desc_advance  wgmma descriptors advanced by one add, the warpgroup index uniform:
#                     "same bytes" expected on every layout; predicted -0.5..-2 % at 16x4096
#   v29_fma_frame     ex2 of fma(u, cc, -M'): a timing probe (what numerics.md 5's split form costs), so
#                     "DIFFERS" is expected, the reference checks must PASS; predicted -1..-4 %
# Predictions and SASS counts in each patch's header and in docs/perf-notes.md.
# Usage (device, repo root): bash dev/sessions/thirty-first_prepared_fwd.sh > $OUT/fwd.log 2>&1
set -u
export OMP_NUM_THREADS=16
t0=$(date +%s)
WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_head check_v30_desc_advance check_v29_fma_frame
echo "== done at $(( $(date +%s) - t0 )) s"
