#!/bin/bash
# Forty-fifth session: ncu of cuDNN's FP8 backward main kernel (sdpa_sm90_flash_bprop_wgmma_f8...)
# at 2x4096 and 16x4096: launch shape, occupancy, and where its memory traffic goes (L2 hit rate,
# DRAM throughput), to test whether its rate falls with the batch because its FP32 dQ workspace
# (64 MB at B = 2, 516 MB at B = 16) leaves the L2. One kernel launch each, clocks not locked.
# Usage (device, repo root; carry .whl): bash dev/sessions/forty-fifth_ncu.sh
O=${OUT:-/tmp/flamia-out}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
export PYTHONPATH=/tmp/site
for B in 2 16; do
  timeout 200 ncu --clock-control none -k regex:flash_bprop -s 3 -c 1 --section LaunchStats --section Occupancy \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    python3 dev/sessions/forty-fifth_kernels.py $B > "$O/ncu_bprop_B$B.txt" 2>&1; echo "ncu B=$B rc=$?"
  grep -E "flash_bprop|Duration|Block Size|Grid Size|Registers Per|Shared Memory Configuration Size|Dynamic Shared|Threads|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Compute \(SM\) Throughput|Mem Busy|Max Bandwidth|L2 Compression" "$O/ncu_bprop_B$B.txt" | head -30
done
