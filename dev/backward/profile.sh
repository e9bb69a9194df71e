#!/bin/bash
# Device profile of the FP8 backward main kernel: ncu's warp-state and source counters
# (stall reasons per SASS instruction) for one launch of bwd_main_fp8, written to $OUT as
# ncu_bwd.txt (sections) and ncu_bwd_sass.csv (per instruction: samples by stall reason),
# then summed by instruction class and by stall reason (dev/backward/stalls.py).
# Usage (device, repo root): bash dev/backward/profile.sh [BIN] [KIND] [WORKLOAD]
B=dev/backward/bin
bin=${1:-check_backward} kind=${2:-mxfp8} w=${3:-"4x4096 16 16 1"}
O=${OUT:-/tmp}
GPU_FWD=1 ncu --clock-control none -k regex:bwd_main_fp8 -c 1 \
  --section WarpStateStats --section SourceCounters --section SchedulerStats --section SpeedOfLight \
  --section MemoryWorkloadAnalysis -o /tmp/bwdprof -f $B/$bin $kind $w none 1 >/dev/null 2>&1
ncu -i /tmp/bwdprof.ncu-rep --page details > $O/ncu_bwd.txt 2>&1
ncu -i /tmp/bwdprof.ncu-rep --page source --csv --print-source sass > $O/ncu_bwd_sass.csv 2>&1
grep -E "Duration|Issue Slots|Eligible|No Eligible|Warp Cycles Per Issued|DRAM Throughput|L2 Hit|Stall" $O/ncu_bwd.txt | head -30
python3 dev/backward/stalls.py $O/ncu_bwd_sass.csv | head -60
