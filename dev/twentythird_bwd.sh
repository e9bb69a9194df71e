#!/bin/bash
# Prepared in the twenty-second session for the next one (~7 min with dev/backward/bin
# carried): three exact variants of the backward's sub-step against the head, by
# dev/backward/probe.sh (bytes, the default mode against the reference, timing), then the
# backward's gpu tests with the most complete one (v52) applied. Predictions in the patches'
# headers:
#   v50_ds_store_offsets  the dS codes' stores as 4 offsets + immediates (-55 instructions)
#   v51_ckq_ds            v50 + v49_ckq_table (mxfp8's 2^eK c once a tile; -79 in all)
#   v52_full_substeps     v51 + a mask-free P path for sub-steps with no masked pair
# Promote the fastest that is exact (bytes the same), passes the checks and the tests, and
# beats the head beyond the drift between rounds; v52's tests cover v51's and v50's code.
# Usage (device, repo root): bash dev/twentythird_bwd.sh > $OUT/run.log 2>&1
exec env SUITE_WITH=v52_full_substeps bash dev/backward/probe.sh v50_ds_store_offsets v51_ckq_ds v52_full_substeps
