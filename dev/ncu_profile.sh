#!/bin/bash
# One kernel launch under ncu: warp-state, scheduler, speed-of-light, memory, compute-pipe
# (tensor pipe utilization) and instruction-mix sections
# plus per-SASS-instruction stall samples, written to $OUT (or /tmp) as ncu_NAME.txt and
# ncu_NAME_sass.csv, then summed by instruction class and stall reason (dev/backward/stalls.py).
# SKIP=N profiles the (N+1)-th matching launch instead of the first.
# Usage (device, repo root): [SKIP=N] bash dev/ncu_profile.sh NAME KERNEL_REGEX COMMAND [ARGS...]
name=$1 kernel=$2; shift 2
O=${OUT:-/tmp}
ncu --clock-control none -k regex:$kernel --launch-skip ${SKIP:-0} -c 1 \
  --section WarpStateStats --section SourceCounters --section SchedulerStats --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats -o /tmp/prof_$name -f "$@" >/dev/null 2>&1
ncu -i /tmp/prof_$name.ncu-rep --page details > $O/ncu_$name.txt 2>&1
ncu -i /tmp/prof_$name.ncu-rep --page source --csv --print-source sass > $O/ncu_${name}_sass.csv 2>&1
grep -E "Duration|Issue Slots|Eligible|No Eligible|Warp Cycles Per Issued|DRAM Throughput|L2 Hit|Registers Per|Executed Ipc|Pipe|Tensor" $O/ncu_$name.txt | head -30
python3 dev/backward/stalls.py $O/ncu_${name}_sass.csv 2>/dev/null | sed -n '2,60p'
