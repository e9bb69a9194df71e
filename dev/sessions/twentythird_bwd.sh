#!/bin/bash
# Prepared in the twenty-second session for the next one (~7-8 min with dev/backward/bin
# carried): three exact variants of the backward against the head, each the one before
# plus one change, by dev/backward/probe.sh (bytes, the default mode against the reference,
# timing), then the backward's gpu tests with the most complete one (v53) applied.
# Predictions in the patches' headers:
#   v51_ckq_ds          v49 (mxfp8's 2^eK c once a tile) + v50 (the dS stores as 4 offsets
#                       + immediates): -79 instructions a sub-step
#   v52_full_substeps   v51 + a mask-free P path for sub-steps with no masked pair (-68 more)
#   v53_tile_loads      v52 + the per-tile loads' addresses by constant strides (-176 a tile)
# (v50_ds_store_offsets.patch alone is kept for reference.) Promote the last one that is
# exact (bytes the same), passes the checks and the tests, and beats the one before it
# beyond the drift between rounds; v53's tests cover the code of v51 and v52.
# Usage (device, repo root): bash dev/sessions/twentythird_bwd.sh > $OUT/run.log 2>&1
# LAYOUTS adds two causal 1,536-token documents, so that the bytes cover v52's mask-free path
# on a causal tile run too (~+1.5 min).
exec env SUITE_WITH=v53_tile_loads LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0|2x1536 4 2 1" bash dev/backward/probe.sh v51_ckq_ds v52_full_substeps v53_tile_loads
