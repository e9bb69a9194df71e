#!/bin/bash
# Prepared and run in the twenty-fourth session (~6 min with dev/backward/bin carried, built
# at the commit that added this script): three exact variants against the head (v64), by
# dev/backward/probe.sh (bytes in the deterministic mode, mxfp8 and exact, on two layouts; the
# default mode against the reference; mxfp8 AND mxfp8-exact timed), then the backward's gpu
# tests with v68 applied. They move shared-memory loads that the SASS had right after a wgmma
# wait to before it (predictions in the patches' headers):
#   v65_dq_factors_early     dQ's row factors for both chains read after the CTA barrier
#   v67_ds_loads_early       v65 + mxfp8's dS loop's first row constants before dP's wait
#   v68_exact_p_loads_early  v67 + mxfp8-exact's P loop's first factors before its wait
# Usage (device, repo root): bash dev/sessions/twentyfourth_bwd2.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v68_exact_p_loads_early TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  bash dev/backward/probe.sh v65_dq_factors_early v67_ds_loads_early v68_exact_p_loads_early
