#!/bin/bash
# Forty-fifth session: ncu of cuDNN's FP8 forward kernel (sdpa_sm90_flash_fprop_wgmma_f8_knob_32_64x256x128_4x1x1)
# and of ours (fwd_kernel, mxfp8) at 16x4096: launch shape, occupancy, throughput, and each SASS's
# opcode histogram (dev/sessions/forty-fifth_ncu_sass.py). cuDNN's FP8 forward leads ours there (1.42-1.50
# against 1.59-1.60 ms in this session's commands).
# Usage (device, repo root; carry build and .whl): [WHO="cudnn ours"] bash dev/sessions/forty-fifth_ncu_fwd.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
export PYTHONPATH=/tmp/site
D="--clock-control none -c 1 --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats"
S="--clock-control none -c 1 --section SourceCounters --page source --csv --print-source sass"
KEYS="Duration|Block Size|Grid Size|Registers Per|Dynamic Shared|Waves Per SM|Achieved Occupancy|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued|Issued Warp Per|No Eligible|Active Warps Per|Eligible Warps"
# ours: the main launch of the mxfp8 forward (fwd_kernel<1, 3, PP, SPLIT = false, DQZ = false>),
# not its split relaunch
KO=(--kernel-name-base demangled -k "regex:fwd_kernel<\(int\)1, \(int\)3, \(bool\)[01], \(bool\)0, \(bool\)0>" -s 2)
KC=(-k regex:flash_fprop -s 3)
RO=(build/experiments/latency/latency --workloads 16x4096 --recipes mxfp8 --passes fwd --iters 3 --warmup 2
    --verify-rows 0 --out /tmp/lat.h5)
RC=(python3 dev/sessions/forty-fifth_kernels.py 16)
for who in ${WHO:-cudnn ours}; do
  echo "== $who"
  if [ $who = cudnn ]; then K=("${KC[@]}"); R=("${RC[@]}"); else K=("${KO[@]}"); R=("${RO[@]}"); fi
  timeout 150 ncu $D "${K[@]}" "${R[@]}" > "$O/ncu_fwd_$who.txt" 2>&1
  grep -E "fprop|fwd_kernel|$KEYS" "$O/ncu_fwd_$who.txt" | grep -v "==PROF==" | head -20
  timeout 150 ncu $S "${K[@]}" "${R[@]}" > "$O/ncu_fwd_sass_$who.csv" 2>/dev/null
  python3 dev/sessions/forty-fifth_ncu_sass.py "$O/ncu_fwd_sass_$who.csv" 30
  gzip -f "$O/ncu_fwd_sass_$who.csv"
done
