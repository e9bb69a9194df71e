#!/bin/bash
# Eightieth session. Steps (default: v148):
#   v148: dev/backward/v148_ds_stsm_split.patch (the split kernels' dS tile written by two
#     stmatrix.x4.trans a sub-step instead of 16 two-byte stores) beside the committed harness:
#     compare.sh (the bytes in the deterministic mode, which takes the split, on three layouts and
#     both recipes; the default mode's reference checks; two timing rounds, mxfp8, 16x4096, 64x1024,
#     16x1024), two more timing rounds, then racecheck and synccheck (dev_bwd_sanitizers) while time
#     is left. Carry build-pack (`sh dev/backward/build.sh dev/backward/v148_ds_stsm_split.patch`, then
#     `sh dev/pack_carry.sh dev/backward/bin/check_backward dev/backward/bin/check_v148_ds_stsm_split`).
#     ~150 s.
#     Why: the eightieth session's count of the split kernel's sub-step (perf-notes "Backward kernel")
#     puts 342 of its ~1,200 instructions a warp in the dS maxima and codes, and the fortieth
#     session's v103 showed that instructions added to the codes loop are on the sub-step's path.
#     The loop's 16 two-byte stores a sub-step (and one of its two byte permutes a j) become two
#     transposing stmatrix (v106 built it for the reduce-adds kernel, where it spilled 156 B; here
#     ptxas: mxfp8 split 0 B, mxfp8-exact split 8 / 16 B, committed 0). Static SASS of the mxfp8
#     split kernel: 5,760 -> 5,720 instructions (STS 40 -> 24, STSM 16 -> 18, PRMT 24 -> 16).
#     Predicted (written before any run): the same bytes; -0.5..-1.5 % of the backward at 16x4096,
#     about as much at 1,024 tokens (~30-40 of ~1,200 instructions a warp and sub-step, on the path).
#     Rule: promote (into kernels/, then the gpu suite and the sanitizers on every dQ path) if the
#     bytes are the same on every layout, every check passes, racecheck and synccheck are clean, the
#     backward is >= 0.7 % faster at 16x4096 (median of four rounds) and nowhere > 0.3 % slower;
#     else it is recorded with its figures and the codes loop's stores are not the sub-step's cost.
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eightieth.sh [v148]
. dev/device_lib.sh
steps=${*:-v148}
CALL_S=${CALL_S:-570}
if [[ " $steps " == *" v148 "* ]]; then
  dev_bwd_variant v148 check_v148_ds_stsm_split
fi
echo "done ($(dev_elapsed) s)"
