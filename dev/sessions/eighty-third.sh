#!/bin/bash
# Eighty-third session. Steps (default: v153), run in the order given, each skipped when CALL_S has
# less left than it needs (330 s for v153 and v155, 100 s for the others):
#   promoted, v152, v151, final: dev/sessions/eighty-second.sh's steps (their predictions and rules there).
#   v153 (v153, v154, v154b, v159) and v155 (v158, v155, v156, v157): builds beside the committed harness, all scheduling
#     only (the same bytes by construction), all from the eighty-first session's stall samples (dev/logs/eighty-first_ncu_split_h100.csv.gz, one
#     bwd_main_fp8 launch at 16x4096, 114,287 samples):
#     - v153 (dev/backward/v153_fences_off_path.patch): the split kernels' proxy fence of the dS tile and
#       G (for their TMA store) issued after dK's first partial and dV's products instead of before them
#       (there the FENCE and the WARPGROUP.ARRIVE after it waited 3,274 samples, 2.9 %, long scoreboard);
#       the fence after the F16 dO panel's wait only where cp.async wrote the panel (761 samples, 0.7 %).
#     - v154 (dev/backward/v154_ckq_early.patch): v153, and mxfp8's S factors of the sub-step (sCkqW,
#       four LDS.128) read before S and dP are issued instead of in P's loop after S's wait (its first
#       multiply waited 2,989 samples on the load, 2.6 %; the fifth pair's 603).
#     - v154b (v154's patch with -DV154_LATE=1): the same reads after S and dP are issued, before their
#       wait, should WARPGROUP.ARRIVE wait for outstanding loads.
#     - v155 (dev/backward/v155_tile_counters.patch, independent of the others): the query-tile loop's
#       head and tile as counters instead of it / per_head and it % per_head (two integer divisions a
#       tile, MUFU.RCP and ~25 dependent instructions each, ~3,800 samples, 3.3 %, at the tile start
#       and in load_tile); the turns kernels keep the division (32 B of spills with the counters).
#     - v156 (dev/backward/v156_pair_maxima.patch, independent): the mxfp8 split's dS maxima exchanged by
#       warp pair (a 64-thread named barrier of the two warps sharing a 32-key block) instead of by the
#       warpgroup, each warp deriving only its own key block's blocks (the other's fed dQ's pair fold,
#       which the split does not make): that barrier and the BSSY after it held 2,509 samples (2.2 %),
#       the warps' skew.
#     - v157 (dev/backward/v157_panel_by_wg1.patch, independent): the F16 dO panel's two TMA boxes issued
#       by warpgroup 1's first thread instead of thread 0, which also issues the next tile's three
#       (~73 of the tile start's ~290 instructions a warp ran in warp 0 alone, and the warpgroup barrier
#       after the per-tile factors waited 2,044 samples, 1.8 %, for it); and the split kernels wait for
#       the panel right before dV's products instead of after S and dP's issue (725 samples, 0.6 %).
#     - v158 (dev/backward/v158_combined.patch): v154 (with v153), v155, v156 and v157 in one kernel, for
#       their sum (where v153 and v157 meet: the split waits for the panel before dV, every kernel
#       fences only a cp.async panel).
#     - v159 (dev/backward/v159_first_tile_early.patch, independent; not in v158): the first query tile's
#       loads issued in the prologue right after K, V and K^T instead of after the prologue's barrier,
#       so that they land under its global loads (key constants, the G search) instead of after them
#       (one CTA an SM: nothing else hides a CTA's prologue; ~4.5 query tiles a CTA at 1,024 tokens).
#     ptxas: every kernel's spills as committed; static SASS of the mxfp8 split kernel 5,560 (v153),
#     5,552 (v154, v154b), 5,520 (v155), 5,544 (v156), 5,544 (v157), 5,504 (v158), 5,544 (v159); mxfp8-exact split 6,288 -> 6,296 (v153,
#     v154), 6,248 (v155), 6,256 (v158).
#     Runs (each step): compare.sh on its builds and the committed one (bytes in the deterministic mode
#     on three layouts, both recipes; the default mode's reference checks; two timing rounds, mxfp8,
#     16x4096, 64x1024, 16x1024), two more rounds of every build, then racecheck and synccheck while
#     time is left (in the order the step names its builds: v154, v153, v159, v154b; v158, v155, v156, v157). ~350 s each.
#     Predicted (written before any run): every build the committed kernel's bytes in all three
#     gradients on every layout, both recipes; v153 -1..-2.5 % at 16x4096 and -0.5..-2 % at 1,024
#     tokens; v154 a further -0.5..-2 %; v154b within 0.5 % of v154; v155 -0.5..-1.5 % at 16x4096,
#     -1..-2 % at 1,024 tokens (more tiles a CTA's sub-step count there); v156 -0.3..-1 % everywhere;
#     v157 -0.3..-1 %; v158 about their sum, -3..-8 % at 16x4096; v159 -0.3..-1 % at 16x4096 and
#     -1..-3 % at 1,024 tokens.
#     Rule: of the builds whose bytes hold everywhere, whose checks all pass and whose racecheck and
#     synccheck are clean, promote the fastest at 16x4096 (median of four rounds) if it is >= 0.7 %
#     faster than the committed kernel there and nowhere > 0.3 % slower; v154 or v154b only if also
#     >= 0.5 % faster than v153 at 16x4096, else v153. v155, v156 and v157 each on its own rule, the same but
#     >= 0.5 % faster at 16x4096. When every one of v154 (or v153), v155, v156 and v157 wins, promote v158
#     if it passes the same checks and is the fastest; else the winners are combined in a new patch (v153
#     and v157 both change the panel's wait: combined as v158 does) and the combination is checked,
#     sanitized and timed against the committed kernel before it is promoted. v159 on its own rule:
#     >= 0.5 % faster at 16x4096 or >= 1 % at both 1,024-token workloads, nowhere > 0.3 % slower.
# Carry build-pack: `sh dev/backward/build.sh dev/backward/committed_8cd9da5.patch
# dev/backward/v151_store_under_dv.patch dev/backward/v152_dv_operand_codes.patch
# dev/backward/v153_fences_off_path.patch dev/backward/v154_ckq_early.patch
# dev/backward/v154_ckq_early.patch@late=V154_LATE=1 dev/backward/v155_tile_counters.patch
# dev/backward/v156_pair_maxima.patch dev/backward/v157_panel_by_wg1.patch dev/backward/v158_combined.patch
# dev/backward/v159_first_tile_early.patch`, then `sh dev/pack_carry.sh` with
# dev/backward/bin/check_backward and each of the bins it built (check_committed_8cd9da5,
# check_v151_store_under_dv, check_v152_dv_operand_codes, check_v153_fences_off_path,
# check_v154_ckq_early, check_v154_ckq_early_late, check_v155_tile_counters, check_v156_pair_maxima,
# check_v157_panel_by_wg1, check_v158_combined, check_v159_first_tile_early); for promoted also build-carry (`bash
# dev/carry_bins.sh`), for final also .whl (docs/hopper-port.md).
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eighty-third.sh [v153] [v155] [promoted] [v152] [v151] [final]
. dev/device_lib.sh
steps=${*:-v153}
CALL_S=${CALL_S:-570}
for step in $steps; do
  left=$(( CALL_S - $(dev_elapsed) ))
  need=100 # a variant step needs ~350 s: started with less, it would outrun the call
  case $step in v153 | v155) need=330 ;; esac
  [ $left -gt $need ] || { echo "$step: no time left ($left s, needs $need)"; continue; }
  case $step in
    promoted | v152 | v151 | final) CALL_S=$left bash dev/sessions/eighty-second.sh $step ;;
    v153) (CALL_S=$left; t0=$(date +%s); dev_bwd_step_variants v153 check_v154_ckq_early check_v153_fences_off_path check_v159_first_tile_early check_v154_ckq_early_late) ;;
    v155) (CALL_S=$left; t0=$(date +%s); dev_bwd_step_variants v155 check_v158_combined check_v155_tile_counters check_v156_pair_maxima check_v157_panel_by_wg1) ;;
    *) echo "$step: no such step (v153 v155 promoted v152 v151 final)" ;;
  esac
done
echo "done ($(dev_elapsed) s)"
