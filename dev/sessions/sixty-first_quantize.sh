#!/bin/bash
# Sixty-first session, third command: the training call's quantize (quantize_block_warp_kernel
# writing Q^T and K^T besides V^T: 750 us at 16x4096 in the fifty-seventh session, against 567 us
# without them) under ncu. sixty-first.sh profiled the driver's first launch, which is the
# standalone quantize (565 us, DRAM 76 %); in `latency --passes train` the training call's first
# quantize is the 4th launch (dev/logs/fifty-seventh_ncu_train_16x4096_h100.txt). Here: the DRAM
# and L2 bytes of launches 1-4 (what the transposes cost in bytes), then the full profile of the 4th.
# Usage (device, repo root): bash dev/sessions/sixty-first_quantize.sh
export PATH=/usr/local/cuda/bin:$PATH
. dev/device_lib.sh
dev_setup
L="$B/experiments/latency/latency --workloads 16x4096 --recipes mxfp8 --passes train --warmup 1 --iters 1
   --pass-budget 0 --verify-rows 0 --quiet --out /tmp/ncu-q.h5"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_op_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
timeout 150 ncu --clock-control none -k regex:quantize_block_warp -c 4 --metrics $M $L 2>/dev/null |
  grep -E "quantize_block_warp|gpu__|dram__|lts__" | sed 's/  */ /g' | tee "$OUT/ncu_quantize_bytes.txt"
SKIP=3 timeout 150 bash dev/ncu_profile.sh quantize_trainstep_16x4096 quantize_block_warp $L
echo "done ($(dev_elapsed) s)"
