#!/bin/bash
# Sixty-first session, second command, after v118 was promoted (98cfedd): the gpu suite and the
# acceptance ratios (mxfp8, 3 alternated rounds) at the new HEAD through fifty-seventh.sh, then
# one ncu profile of the training call's quantize kernel at 16x4096 (quantize_block_warp_kernel
# with Q^T and K^T: 750 us, ~2.15 TB/s, 64 % of the H100's 3.35 TB/s in the fifty-seventh
# session), to see what bounds it before changing it: DRAM throughput, the stall reasons, L2.
# Usage (device, repo root; carry .whl for the cudnn-fp8 peer): bash dev/sessions/sixty-first.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16 PYTHONUNBUFFERED=1
bash dev/sessions/fifty-seventh.sh suite ratios mxfp8
rc=$?
. dev/device_lib.sh
timeout 120 bash dev/ncu_profile.sh quantize_train_16x4096 quantize_block_warp \
  $B/experiments/latency/latency --workloads 16x4096 --recipes mxfp8 --passes train --warmup 1 --iters 1 \
  --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-q.h5
echo "sixty-first: rc=$rc ($(dev_elapsed) s since the profile began)"
exit $rc
