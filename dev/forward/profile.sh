#!/bin/bash
# Device profile of the forward kernel (fwd_kernel, one launch of the dev harness, no
# correctness check): dev/ncu_profile.sh -> $OUT/ncu_fwd.txt, $OUT/ncu_fwd_sass.csv and the
# stall summary.
# Usage (device, repo root): bash dev/forward/profile.sh [BIN] [KIND] [WORKLOAD]
bin=${1:-check_forward} kind=${2:-mxfp8} w=${3:-"4x4096 16 16 1"}
exec bash dev/ncu_profile.sh fwd fwd_kernel dev/forward/bin/$bin $kind $w none 1
