#!/bin/bash
# Forty-sixth session: the v110 probe (dev/backward/v110_summed_dq.patch, timing only: each
# warpgroup's dQ from its own key blocks over all 128 dims, no CTA barrier before it, the two
# partials summed in shared memory before one set of reduce-adds; @bar keeps the barrier)
# against the working tree's backward, mxfp8, at 16x4096, 4x4096 and 16x1024
# (dev/backward/time_variants.sh).
# Usage (device, repo root; carry dev/backward/bin/check_backward and check_v110_summed_dq_*):
#   bash dev/sessions/forty-sixth_fourth.sh
V="check_v110_summed_dq_on check_v110_summed_dq_bar" WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1" \
  bash dev/backward/time_variants.sh
