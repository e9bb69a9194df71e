#!/bin/bash
# Next device call for the quantize kernel (not yet run; estimated 40-60 s, the host builds
# the large packs' expected images with OpenMP): v4 (kernels/sm90/quantize.cu) against v5
# (dev/quantize/v5_occ512.patch) and its switch variants, bit-exactness first, then timing
# (median of 30 CUDA-event timings after 5 warm-ups, 16 heads, d = 128, Hadamard off).
# Build here first and carry dev/quantize/bin (run_next builds only what is missing):
#   sh dev/quantize/build.sh dev/quantize/v5_occ512.patch
# Binaries:
#   check_quantize            v4, the committed kernel (same-session baseline)
#   check_v5_occ512           v5: 512-thread token-block CTAs at 40 registers (3/SM) in group mode
#                             (halves on alternate head slots), word V^T stores, loads before the search
#   check_v5_occ512_g0        v5 with the plain 512-thread mapping (2 passes of 32 rows, no groups)
#   check_v5_occ512_b2        v5 at 64 registers (2 CTAs/SM, no spill; v5 spills 36 B at 40)
#   check_v5_occ512_t256      v5 with v4's 256-thread mapping (the word stores + early loads alone)
#   check_v5_occ512_nospec    v5 without the loads before the search
#   check_v5_occ512_e512      v5 with 512-thread per-token kernels too (mxfp8-exact, bf16)
# Usage (device, repo root): bash dev/quantize/run_next.sh   (log: $OUT/quant_log.txt)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/quantize/bin
LOG=${OUT:-/tmp}/quant_log.txt
V="check_v5_occ512 check_v5_occ512_g0 check_v5_occ512_b2 check_v5_occ512_t256 check_v5_occ512_nospec check_v5_occ512_e512"
t() { local b=$1; shift; timeout ${TMO:-40} $B/$b "$@" 2>&1 | sed "s|^|$b: |" | tee -a $LOG; }
for b in check_quantize $V; do
  [ -x $B/$b ] || { echo "building (missing $b)" | tee -a $LOG; sh dev/quantize/build.sh dev/quantize/v5_occ512.patch >/dev/null 2>&1; break; }
done
date | tee -a $LOG
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee -a $LOG
# bit-exactness (every workspace byte): the full battery for v4 and v5, the small one for the switches
t check_quantize check
t check_v5_occ512 check
for b in ${V#check_v5_occ512 }; do t $b quick; done
# timing: v4 first and last, so drift over the run shows
for b in check_quantize $V check_quantize; do TMO=30 t $b time 16x4096,logu-64k 30; done
echo "--- summary (median ms, % of 4.2 TB/s copy)" | tee -a $LOG
grep -E "bit-exact|FAIL| time " $LOG | grep -v " ok" | sed 's/ T=.*median/ median/; s/ (min.*GB  */  /' | tee -a $LOG.summary
date | tee -a $LOG
