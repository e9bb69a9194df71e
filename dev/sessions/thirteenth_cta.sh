#!/bin/bash
# Thirteenth session, ~4 min: what a backward CTA costs apart from its tile pairs.
# 1. The backward (harness, median of 10) and its main kernel alone (ncu duration) on six
#    packs of 65,536 tokens: 512x128 ... 16x4096. Every pack has the same 8,192 CTAs
#    (T / 128 key tiles x 16 heads), only the tile pairs per CTA change (1 ... 16.5), so a
#    line through (pairs, ms) gives the per-CTA and the per-pair cost without the Table A
#    fit's mix of workloads.
# 2. ncu profile of the main kernel at 512x128 (one key tile, one query tile per CTA: the
#    per-CTA part dominates): stall samples per SASS instruction ($OUT/ncu_cta_sass.csv).
# 3. L2 and pipe utilization of the main kernel at 16x4096 (is L2 already a bound?).
# Usage (device, repo root): bash dev/sessions/thirteenth_cta.sh > $OUT/cta.log 2>&1
export OMP_NUM_THREADS=16
stamp() { echo "== [$SECONDS s] $*"; }
B=dev/backward/bin
stamp "backward and main kernel on 65,536-token packs"
for L in 128 256 512 1024 2048 4096; do
  w="$((65536 / L))x$L"
  GPU_FWD=1 timeout 60 $B/check_backward mxfp8 $w 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/$w: /"
  GPU_FWD=1 timeout 60 bash dev/ncu_durations.sh "$w" "bwd_" $B/check_backward mxfp8 $w 16 16 1 none 0
done
stamp "profile 512x128"
GPU_FWD=1 timeout 200 bash dev/ncu_profile.sh cta bwd_main_fp8 $B/check_backward mxfp8 512x128 16 16 1 none 1
stamp "L2 / pipes at 16x4096"
GPU_FWD=1 timeout 120 ncu --clock-control none -k regex:bwd_main_fp8 -c 1 --metrics \
gpu__time_duration.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,\
lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,\
sm__inst_issued.avg.pct_of_peak_sustained_elapsed,smsp__warps_eligible.avg.per_cycle_active \
  $B/check_backward mxfp8 16x4096 16 16 1 none 0 2>&1 | grep -E "^ +(gpu__|lts__|dram__|sm__|smsp__)"
stamp done
