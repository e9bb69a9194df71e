#!/bin/bash
# Forty-fourth session, first device command (~5 min, carried build/): packed vs padded
# documents (experiments/packed_memory, one process per workload, merged into
# $OUT/packed_memory_gpu.h5) and the GQA workload's Table A rows (ours: the latency driver;
# peers: peers.py, K and V with 4 heads by enable_gqa) as a trial before the full Table A.
# Usage (device, repo root): bash dev/sessions/forty-fourth_first.sh
set -u
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O"
B=build
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader
echo "== (1) packed vs padded"
P=/tmp/pm; rm -rf $P; mkdir -p $P; i=0
for w in 8192+32x256 8192+224x256 logu-16k logu-64k logu:131072:32:32768:128; do
  i=$((i+1))
  /usr/bin/time -f "  $w: %e s, host peak %M KB" timeout 240 $B/experiments/packed_memory --backend cuda \
    --workloads "$w" --recipes mxfp8,mxfp8-exact --out $P/$i.h5 --quiet >"$O/pm_$i.log" 2>&1
  echo "  $w rc=$?"; tail -4 "$O/pm_$i.log" | cut -c1-200
done
python3 experiments/latency/merge_h5.py "$O/packed_memory_gpu.h5" $(ls $P/*.h5 | sort -V)
rm -rf /tmp/pmt && $B/experiments/h5totsv "$O/packed_memory_gpu.h5" /tmp/pmt >/dev/null &&
  cut -f1-2,4-10,12-15,17- /tmp/pmt/packed_memory.tsv | column -t -s$'\t'
echo "== (2) gqa-16x1024: ours and the peers"
$B/experiments/latency/latency --workloads gqa-16x1024 --out "$O/gqa_ours.h5" --pass-budget 3 >"$O/gqa_ours.log" 2>&1
echo "latency rc=$?"; grep -vE "^\[" "$O/gqa_ours.log" | tail -25 | cut -c1-200
PYTHONUNBUFFERED=1 python3 experiments/latency/peers.py --layouts "$O/gqa_ours.h5" --out "$O/gqa_peers.h5" \
  --systems cudnn-bf16,flash-bf16,varlen-bf16 --passes fwd,fwdbwd >"$O/gqa_peers.log" 2>&1
echo "peers rc=$?"; grep -E "^  |Error" "$O/gqa_peers.log" | tail -20 | cut -c1-220
python3 experiments/latency/join.py "$O/gqa_ours.h5" "$O/gqa_peers.h5" --recipe mxfp8 | tee "$O/gqa_join.md"
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
