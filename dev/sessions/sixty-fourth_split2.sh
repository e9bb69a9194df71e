#!/bin/bash
# Sixty-fourth session, second device command (dev/backward/bin carried): l_sketch again after the
# first command (dev/sessions/sixty-fourth_split.sh, H100) read 1.63 ms at 16x4096, 1.45 TB/s of
# dS + factors, the same without its MMAs: its longest-first grid put 132 different (document,
# head) pairs on the SMs at once, 132 x 512 KB of K^T > the 50 MB L2, so K^T came from DRAM too
# (as many bytes as dS). Now (document, head) is the slowest index (L_LPT=1 is the old order).
# Prediction (H100): DRAM reads ~2.5 GB instead of ~4.7; 0.80-0.95 ms at 16x4096.
# Decision (as the first command's): the split is worth building if probe main (5.63 ms) +
# l_sketch <= 0.85 x (base main 7.38 + bwd_dq_out 0.27) = 6.50 ms, i.e. l_sketch <= 0.87 ms.
# Result (H100): 1.066 ms, DRAM reads 2.49 GB (longest first 1.672 ms, 4.61 GB); 10 stages 1.066.
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for w in "16 4096" "4 4096" "64 1024"; do
  for b in l_sketch l_sketch_s10 l_sketch_lpt l_sketch_nomma; do timeout 60 $B/$b $w; done
done 2>&1 | tee $OUT/l_sketch2.log
for b in l_sketch l_sketch_lpt; do
  echo "== ncu $b 16x4096 (first launch)"
  timeout 90 ncu --clock-control none -k regex:l_sketch -c 1 --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
    $B/$b 16 4096 2>/dev/null | grep -E "gpu__time|dram__|lts__"
done 2>&1 | tee $OUT/l_sketch2_ncu.log
