#!/bin/bash
# Forty-fifth session: the v106 probes (dev/backward/v106_probes.patch: dV at the FP8 rate, no dS
# block maxima, no dQ staging / reduce-adds, all three) against the working tree's backward in
# the harness, timing only (their gradients are wrong by construction), mxfp8, alternated twice,
# at 16x4096, 4x4096, 2x4096 and 16x1024, after each binary's wgmma mix in its mxfp8 main kernel
# (dev/backward/time_variants.sh, since the forty-sixth session).
# Usage (device, repo root; carry dev/backward/bin/check_backward and check_v106_probes_*):
#   bash dev/sessions/forty-fifth_probes.sh
V="check_v106_probes_dv check_v106_probes_ds check_v106_probes_dq check_v106_probes_all" bash dev/backward/time_variants.sh
