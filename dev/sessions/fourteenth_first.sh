#!/bin/bash
# Prepared in the thirteenth session, not run (its device time was spent), ~5 min:
# (1) backward v29_pre_dequant (and @occ6: 40 registers, 6 CTAs per SM) against the committed kernel: deterministic-mode bytes (must
#     be equal), default mode against the reference, the backward's time on short and long
#     documents, and bwd_pre_do's duration under ncu (before: 619 us at 16x4096 mxfp8);
# (2) quantize v9_outlined against the committed kernel: every workspace byte against the
#     host quantization (the harness's full battery), then the recipes timed, alternated.
# (3) dev/backward/acc_bench: the FP8 wgmma's precision when adding into a live accumulator
#     over chains of 4..1024 k=32 blocks, against today's zeroed partials (decides
#     hopper-port.md 1 (c), in-place dK; ~1 s);
# Build here first (repo root), then carry both bin folders:
#   sh dev/backward/build.sh dev/backward/v29_pre_dequant.patch "dev/backward/v29_pre_dequant.patch@occ6=V29_REREAD=1"
#   sh dev/quantize/build.sh dev/quantize/v9_outlined.patch
#   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ikernels/formats \
#     -Ikernels/sm90 dev/backward/acc_bench.cu -o dev/backward/bin/acc_bench
#   (remove dev/backward/bin/obj and dev/quantize/bin/obj to stay under the carry limit)
# Usage (device, repo root): bash dev/sessions/fourteenth_first.sh > $OUT/first.log 2>&1
# Then, with the winners promoted: FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/twelfth_final.sh (Table A).
export OMP_NUM_THREADS=16
stamp() { echo "== [$SECONDS s] $*"; }
B=dev/backward/bin
stamp "backward v29"
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="512x128 16 16 1|64x1024 16 16 1|16x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward check_v29_pre_dequant check_v29_pre_dequant_occ6
for b in check_backward check_v29_pre_dequant check_v29_pre_dequant_occ6; do
  for k in mxfp8 exact; do
    GPU_FWD=1 timeout 60 bash dev/ncu_durations.sh "16x4096 $k $b" "bwd_pre_do" $B/$b $k 16x4096 16 16 1 none 0
  done
done
stamp "quantize v9"
WORKLOADS=16x4096,16x1024,logu-16k,logu-64k HIDE=bf16 bash dev/quantize/compare.sh check_quantize check_v9_outlined
stamp acc_bench
[ -x dev/backward/bin/acc_bench ] && timeout 60 dev/backward/bin/acc_bench
stamp done
