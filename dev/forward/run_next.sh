#!/bin/bash
# Next device call (not yet run, about 60-90 s): v5 (register relief) and v6 (exact exp split,
# promoted FP8 score, P through shared memory) with its switches, against flamia_ref_forward
# (relL2 of O, max |d lse|) and timed at mxfp8 16x4096 and 4x4096 (16 heads, causal).
# Build here first and carry dev/forward/bin (run_next builds only what is missing):
#   sh dev/forward/build.sh dev/forward/v5_regs.patch dev/forward/v6_exact.patch
# (v6_exact.patch's "@variant" header lines make build.sh build its switch variants too.)
# Binaries (v6 switches: e = FWD_EXP_SPLIT, p = FWD_S_PROMOTE, s = FWD_P_SMEM):
#   check_forward          v4 = kernels/sm90/forward.cu (timing only: same-session baseline)
#   check_v5_regs          v5 (baseline, expected bit-identical to v4)
#   check_v6_exact         e1 p1 s1 (the default: both fixes)
#   check_v6_exact_e1p0    exp split only (P in registers: v5 + split)
#   check_v6_exact_e0p1    promotion only (s1)
#   check_v6_exact_e1p2    split + the cheaper 2x2-chain promotion (s1)
#   check_v6_exact_e2p0    split with trunc by FRND (timing only; values identical to e1p0)
#   check_v6_exact_e0p0s1  v5 with P through shared memory (timing only; values identical to v5)
#   check_v6_exact_e1p1s0  both fixes with P in registers: ptxas serializes the wgmmas (timing only)
#   check_v6_exact_e3p0    floor split instead of trunc (NOT numerics.md 3.3; timing only)
#   fp8_acc_probe          S-tile accumulation error: chained / 4 fresh + FP32 / 2x2 chains + FP32
# Usage (device, repo root): bash dev/forward/run_next.sh   (log: $OUT/next_log.txt)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/forward/bin
LOG=${OUT:-/tmp}/next_log.txt
t() { local b=$1; shift; timeout ${TMO:-20} $B/$b "$@" 2>&1 | sed "s|^|$b: |" | tee -a $LOG; }
for b in check_forward check_v5_regs check_v6_exact check_v6_exact_e1p1s0 check_v6_exact_e3p0 fp8_acc_probe; do
  [ -x $B/$b ] || { echo "building (missing $b)" | tee -a $LOG; sh dev/forward/build.sh dev/forward/v5_regs.patch dev/forward/v6_exact.patch >/dev/null 2>&1; break; }
done
date | tee -a $LOG
timeout 20 $B/fp8_acc_probe 2>&1 | tee -a $LOG
# correctness vs flamia_ref_forward (full rows), small packed layouts
for b in check_v5_regs check_v6_exact check_v6_exact_e1p0 check_v6_exact_e0p1 check_v6_exact_e1p2; do
  t $b mxfp8 rand3000:1 4 2 1 full
  t $b exact rand2000:2 4 4 0 full
done
t check_v5_regs  bf16 rand3000:1 4 2 1 full
t check_v6_exact bf16 rand3000:1 4 2 1 full
# timing (median of 30) + 200 sampled rows of the 16x4096 case against the row reference
# (a 16x4096 run spends ~5 s on the host building its inputs: the timing-only builds get 4x4096)
for b in check_forward check_v5_regs check_v6_exact check_v6_exact_e1p0 check_v6_exact_e0p1 check_v6_exact_e1p2; do
  TMO=30 t $b mxfp8 16x4096 16 16 1 sample200 30
done
for b in check_forward check_v5_regs check_v6_exact check_v6_exact_e1p0 check_v6_exact_e0p1 check_v6_exact_e1p2 \
         check_v6_exact_e2p0 check_v6_exact_e3p0 check_v6_exact_e0p0s1 check_v6_exact_e1p1s0; do
  TMO=30 t $b mxfp8 4x4096  16 16 1 none 30
done
date | tee -a $LOG
