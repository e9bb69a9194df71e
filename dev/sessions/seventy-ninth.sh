#!/bin/bash
# Seventy-ninth session. Steps (default: tile):
#   tile: dev/backward/v146_probe_tile_start.patch, two probes (wrong gradients, timing only) beside the
#     committed backward in the dev harness, mxfp8, three rounds alternated by process, on 16x4096, 64x1024
#     and 16x1024 (each in the default mode's split dQ, printed per run): @noload (no tile loads after a
#     CTA's first) and @nostart (that and a warpgroup barrier in place of the tile start's CTA barrier).
#     First one reference check of the committed harness (PASS) and one run of each probe (no hang).
#     Carry build-pack (`sh dev/pack_carry.sh dev/forward/bin dev/backward/bin` after `sh
#     dev/backward/build.sh dev/backward/v146_probe_tile_start.patch@noload=BWD_PROBE_TILE=1
#     dev/backward/v146_probe_tile_start.patch@nostart=BWD_PROBE_TILE=2`). ~150 s.
#     Why: a producer warpgroup (loads, row constants and the F16 dO panel issued a tile ahead; the
#     consumers on full / empty mbarriers, no CTA barrier) was held back since the fifth session by the
#     register file: beside it the consumers get 240 registers, where the reduce-adds kernels spill
#     104-164 B. The split-dQ kernels, the default at these shapes since the sixty-fifth session, have no
#     dQ in the main kernel: ptxas gives mxfp8's 0 B of spills at 240 (mxfp8-exact's 60 B). The tile
#     start was 18.4 % of the stall samples (forty-sixth session, the reduce-adds kernel), unmeasured on
#     the split kernel.
#     Predicted (written before any run): @noload -1..-3 % of the backward at every workload (the loads
#     are already a tile ahead; i_sketch without its loads: -0.8 %); @nostart -3..-7 % at 16x4096 and
#     -4..-9 % at 1,024 tokens (a CTA barrier a tile, two sub-steps, with both warpgroups in lockstep).
#     Rule: @nostart >= 5 % faster at 16x4096 and >= 4 % at both 1,024-token workloads -> a producer
#     warpgroup for the split kernels (mxfp8 first) is built next, as a numbered variant; @nostart < 3 %
#     at 16x4096 -> the backward's producer line closes (the tile start is not what the consumers pay);
#     between -> ncu's phases of the split kernel first.
#     Measured (H100, dev/logs/seventy-ninth_tile_h100.log; medians of three rounds, ms, base / @noload /
#     @nostart): 16x4096 7.849 / 7.588 (-3.3 %) / 7.443 (-5.2 %); 64x1024 2.884 / 2.836 (-1.7 %) / 2.802
#     (-2.8 %); 16x1024 0.797 / 0.784 (-1.6 %) / 0.776 (-2.6 %). The rule's 1,024-token clause fails, its
#     16x4096 one holds: between, so ncu's phases (step phases) of the committed kernel and of v147.
#   phases: ncu's SASS source page of the split-dQ main kernel (mxfp8, 16x4096 and 64x1024, one launch
#     each, clocks not locked) into $OUT, with dev/ncu_phases.py's landmark listing; split into phases
#     here afterwards, as the forty-sixth session did for the reduce-adds kernel (PHASE_RUNS: BINARY:WORKLOAD
#     words instead, e.g. v147's beside the committed one). Carry build-pack as
#     for tile. ~150 s. No rule: the map the next backward step is chosen from.
#   v147: dev/backward/v147_producer.patch (the split kernels with a producer warpgroup, consumers at 240
#     registers; built before the tile probes ran, while no machine came) against the committed harness:
#     compare.sh (the bytes in the deterministic mode, which takes the split, on three layouts and both
#     recipes; the default mode's reference checks; timing, mxfp8, 16x4096, 64x1024, 16x1024, two rounds),
#     then compute-sanitizer racecheck and synccheck on a small packed layout of each recipe. Carry
#     build-pack (`sh dev/backward/build.sh dev/backward/v147_producer.patch`, packed with the rest).
#     Predicted (written before any run): the same bytes; -2..-5 % at 16x4096 and -3..-7 % at 1,024
#     tokens (the @nostart probe's gain less the producer's own costs).
#     Rule: promote (into kernels/, then the whole gpu suite and the acceptance ratios) if the bytes are
#     the same on every layout, every check passes, both sanitizers report nothing and the backward is
#     >= 2 % faster at 16x4096 and nowhere > 0.5 % slower; else its timing beside @nostart says whether
#     the producer's cost or the protocol lost the gain.
#     Measured (H100, dev/logs/seventy-ninth_v147_h100.log): the same bytes on all six layouts, every check
#     PASS, synccheck 0 errors; racecheck 3 reports a recipe (the producer's row-constant writes against the
#     consumers' reads: the tile released by one lane a warp after __syncwarp, the form racecheck flagged in
#     the forward and dq_split before). Timing (two rounds, ms, base / v147): 16x4096 7.854, 7.861 / 7.813,
#     7.791 (-0.7 %); 64x1024 2.880, 2.871 / 2.941, 2.916 (+1.9 %); 16x1024 0.798, 0.797 / 0.802, 0.804
#     (+0.7 %). Not promoted. ncu (step phases, one launch at 16x4096): of the consumers' samples the tile
#     start falls from 18.1 % to 10.9 %, but the S / dP waits (+2.3 points), dP's (+2.1) and dK / dV's (+1.2)
#     grow; 5.8 % of the consumers' samples wait at the tables' barrier for thread 0, which waits there for
#     the dS store it has just issued: v147b.
#   v147b: dev/backward/v147b_producer_late_read.patch (v147, the store's read wait moved to the sub-step
#     that rewrites its region, a tile consumed released by every consumer thread) beside the committed
#     harness and v147: compare.sh (bytes, checks, two timing rounds) and a third timing round, racecheck and
#     synccheck on both recipes, then one ncu page at 16x4096. Carry build-pack (`sh dev/backward/build.sh
#     dev/backward/v147b_producer_late_read.patch`, packed with check_backward and check_v147_producer).
#     Predicted (written before any run): the same bytes, no sanitizer report; -2..-4 % against the
#     committed kernel at 16x4096, -0..-2 % at 1,024 tokens.
#     Rule: v147's (promote if the bytes are the same, every check passes, both sanitizers are clean, >= 2 %
#     faster at 16x4096 and nowhere > 0.5 % slower).
#     Not run in the seventy-ninth session (no second machine started). Measured in the eightieth (H100,
#     dev/logs/eightieth_v147b_h100.log; medians, ms, base / v147 / v147b): 16x4096 7.864 / 7.767 / 7.904
#     (+0.5 %), 64x1024 2.868 / 2.890 / 2.927 (+2.1 %), 16x1024 0.791 / 0.795 / 0.806 (+1.9 %); the same
#     bytes, every check PASS, racecheck and synccheck clean on both recipes. Refuted: the producer line
#     closes. ncu: the tile start's vote barrier holds 4.0 % of all samples in v147 and v147b alike (the
#     warps' skew, not the read); the moved read wait 0.5 %.
#   osum, record: dev/sessions/seventy-eighth.sh's steps (their predictions are there).
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/seventy-ninth.sh [tile] [v147] [v147b] [phases] [osum] [record]
. dev/device_lib.sh
steps=${*:-tile}
CALL_S=${CALL_S:-570}
# dev_bwd_compare, dev_bwd_ncu_pages and dev_bwd_sanitizers: dev/device_lib.sh
if [[ " $steps " == *" tile "* ]]; then
  dev_unpack_carry
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  export OMP_NUM_THREADS=16
  BB=dev/backward/bin
  timeout 120 $BB/check_backward mxfp8 "rand3000:1" 4 2 1 full 2>&1 | grep -E "dQ:|PASS|FAIL" | cut -c1-200
  for b in check_v146_probe_tile_start_noload check_v146_probe_tile_start_nostart; do
    GPU_FWD=1 timeout 60 $BB/$b mxfp8 16x1024 16 16 1 none 2 2>&1 | grep -o "bwd .*" | sed "s/^/$b first run: /"
    [ ${PIPESTATUS[0]} = 0 ] || echo "$b: rc=${PIPESTATUS[0]}"
  done
  for round in 1 2 3; do
    for w in 16x4096 64x1024 16x1024; do
      for b in check_backward check_v146_probe_tile_start_noload check_v146_probe_tile_start_nostart; do
        GPU_FWD=1 timeout 60 $BB/$b mxfp8 $w 16 16 1 none 10 > /tmp/tile_run.log 2>&1
        grep -q "split" /tmp/tile_run.log || echo "$b $w: not the split dQ ($(grep -m1 'dQ:' /tmp/tile_run.log))"
        grep -o "bwd .*" /tmp/tile_run.log | sed "s/^/round $round $w $b: /" | tee -a $OUT/tile_timing.log
      done
    done
  done
  for w in 16x4096 64x1024 16x1024; do
    base=$(grep " $w check_backward: " $OUT/tile_timing.log | awk '{print $6}' | sort -n | sed -n 2p)
    for b in check_backward check_v146_probe_tile_start_noload check_v146_probe_tile_start_nostart; do
      m=$(grep " $w $b: " $OUT/tile_timing.log | awk '{print $6}' | sort -n | sed -n 2p)
      echo "$w $b: median $m ms ($(awk -v m=$m -v b=$base 'BEGIN {printf "%+.1f %%", 100 * (m / b - 1)}'))"
    done
  done
  echo "tile done ($(dev_elapsed) s)"
fi
if [[ " $steps " == *" v147 "* ]]; then
  dev_unpack_carry
  export OMP_NUM_THREADS=16
  KINDS="mxfp8 exact" TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|64x1024 16 16 1|16x1024 16 16 1" \
    bash dev/backward/compare.sh check_backward check_v147_producer 2>&1 | tee $OUT/v147_compare.log |
    grep -E "==|FAIL|default|^mxfp8" | cut -c1-200
  dev_bwd_sanitizers check_v147_producer v147 90
fi
if [[ " $steps " == *" v147b "* ]]; then
  dev_unpack_carry
  export OMP_NUM_THREADS=16
  dev_bwd_compare v147b "16x4096 16 16 1|64x1024 16 16 1|16x1024 16 16 1" check_backward check_v147_producer \
    check_v147b_producer_late_read
  dev_bwd_sanitizers check_v147b_producer_late_read v147b 60
  dev_bwd_ncu_pages 40 check_v147b_producer_late_read:16x4096 | grep -v "^loop"
fi
if [[ " $steps " == *" phases "* ]]; then
  dev_unpack_carry
  dev_bwd_ncu_pages 150 ${PHASE_RUNS:-check_backward:16x4096 check_backward:64x1024}
fi
rest=$(echo " $steps " | sed 's/ tile / /; s/ v147 / /; s/ v147b / /; s/ phases / /')
[ -n "${rest// /}" ] && CALL_S=$(( CALL_S - $(dev_elapsed) )) bash dev/sessions/seventy-eighth.sh $rest
echo "done ($(dev_elapsed) s)"
