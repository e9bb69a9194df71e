#!/bin/bash
# Device profile of the FP8 backward main kernel (bwd_main_fp8, one launch; the harness's
# library quantize and forward fill the workspace): dev/ncu_profile.sh -> $OUT/ncu_bwd.txt,
# $OUT/ncu_bwd_sass.csv and the stall summary.
# Usage (device, repo root): bash dev/backward/profile.sh [BIN] [KIND] [WORKLOAD]
bin=${1:-check_backward} kind=${2:-mxfp8} w=${3:-"4x4096 16 16 1"}
GPU_FWD=1 exec bash dev/ncu_profile.sh bwd bwd_main_fp8 dev/backward/bin/$bin $kind $w none 1
