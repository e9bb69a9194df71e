#!/bin/bash
# Prepared in the thirty-eighth session for the next (~2 min; carry the three binaries by name:
# dev/backward/bin/check_backward, check_v92_probe_dq_staging_noadd,
# check_v92_probe_dq_staging_nostage; if missing: sh dev/backward/build.sh
# "dev/backward/v92_probe_dq_staging.patch@noadd=BWD_PROBE_DQ=1"
# "dev/backward/v92_probe_dq_staging.patch@nostage=BWD_PROBE_DQ=2"). What the main kernel's dQ
# staging and reduce-adds cost (timing only: the probes' dQ is wrong), the ceiling of a
# dQ-writer warpgroup (perf-notes "Backward kernel", thirty-eighth session).
# Usage (device, repo root): bash dev/sessions/thirty-ninth_bwd_probe.sh > $OUT/bwd_probe.log 2>&1
export OMP_NUM_THREADS=16
CHECK=0 TKINDS="mxfp8 exact" WORKLOADS="16x4096 16 16 1|16x1024 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v92_probe_dq_staging_noadd check_v92_probe_dq_staging_nostage
