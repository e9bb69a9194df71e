#!/bin/bash
# Forty-sixth session: the v109 probe (dev/backward/v109_own_dq.patch, timing only: each
# warpgroup's dQ from its own key blocks over all 128 dims, no CTA barrier before it, twice the
# reduce-adds; @bar keeps the barrier, @noadd stages without adding) against the working tree's
# backward, mxfp8, at 16x4096, 4x4096, 2x4096 and 16x1024 (dev/backward/time_variants.sh).
# Usage (device, repo root; carry dev/backward/bin/check_backward and check_v109_own_dq_*):
#   bash dev/sessions/forty-sixth_third.sh
V="check_v109_own_dq_on check_v109_own_dq_bar check_v109_own_dq_noadd" bash dev/backward/time_variants.sh
