#!/bin/bash
# Thirty-ninth session (~3 min; carry dev/backward/bin/check_backward and
# dev/backward/bin/check_v95_doh_cpasync_on; build: sh dev/backward/build.sh
# "dev/backward/v95_doh_cpasync.patch@on=BWD_DOH_CPASYNC"). v95: the F16 dO panel by cp.async
# instead of TMA (out of the TMA unit's queue behind dQ's reduce-adds). Bytes (deterministic)
# must equal the base's in both recipes; default kernels against the reference; timing.
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_doh.sh > $OUT/bwd_doh.log 2>&1
export OMP_NUM_THREADS=16
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0|rand5000:11 4 4 1" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v95_doh_cpasync_on
