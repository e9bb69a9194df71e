#!/bin/bash
# Eighty-sixth session (no machine lent: lending paused). Steps (default: v165 v163), run in the order
# given, each skipped when CALL_S has less left than it needs (330 s for v165 and v162, 280 s for v163,
# 100 s for the others):
#   promoted, v151, final: dev/sessions/eighty-second.sh's steps (their predictions and rules there).
#   v162 (v162, v160, v161): builds beside the committed harness, all scheduling only (the same bytes by
#     construction), cutting instructions on the sub-step's path, the kind of change that paid twice
#     (v148, v155) where moving a wait did not (three of four slower, eighty-fifth session):
#     - v160 (dev/backward/v160_rows_by_warpgroup.patch): load_tile's row constants with the field number a
#       compile-time constant per warpgroup (a warp-uniform branch) instead of w = (tid >> 7) + 2 k: the
#       region ran ~75 instructions a thread a tile (eighty-first recount, 0x5070-0x57d0), now ~37 by the
#       SASS here (the branches a field, the neutral-value selects and a 64-bit multiply go; !ok becomes
#       predication). ~19 a warp and sub-step, in the tile start, as v155's two divisions were.
#     - v161 (dev/backward/v161_vdo_table.patch): mxfp8's dP factor 2^eV 2^eDO from a per-warpgroup table
#       built once a tile (as S's 2^eK c is) instead of two FMUL a column pair in the dS loop: 16 FMUL a
#       sub-step fewer, right after dP's wait, and one dependent step less before dS; the split kernels only
#       (the reduce-add kernel spilled 168 B with it).
#     - v162 (dev/backward/v162_rows_vdo.patch): both, for their sum.
#     ptxas: every kernel's spills as committed (the mxfp8-exact turns kernel 16 -> 12 B with v160); static
#     SASS of the mxfp8 split kernel 5,520 -> 5,416 (v160), 5,504 (v161), 5,408 (v162).
#     Runs: dev_bwd_step_variants (bytes in the deterministic mode on three layouts, both recipes; the
#     default mode's reference checks; four timing rounds of every build, six of the committed and v161,
#     mxfp8, 16x4096, 64x1024, 16x1024; racecheck and synccheck on v162, v160, v161 while time is left).
#     ~420 s.
#     Predicted (written before any run): every build the committed kernel's bytes in all three gradients
#     on every layout, both recipes; v160 -0.5..-2 % at 16x4096 and at 1,024 tokens; v161 -0.3..-1.5 %;
#     v162 about their sum, -1..-3 %.
#   v163 (v164, v163): two more builds, the same bytes by construction:
#     - v163 (dev/backward/v163_dv_halves.patch): the mxfp8 split kernel issues dV's four F16 products in
#       two halves, dK's first partial with the first half and dK's second partial with the second, and
#       waits for the second partial only: its wait and 64 FFMA of scaling, the dS store and the next
#       sub-step's issue then run under dV's second half instead of after all of dV with the tensor cores
#       idle (that wait held 3.1 % of the eighty-first session's stall samples). The half is retired by the
#       next sub-step's S wait (the groups complete in order) or, after a tile's last sub-step, by a
#       wait<0> before the tile barrier (it reads the F16 dO panel the next tile reloads). Counted: the
#       scaling's 64 FFMA a warp (~128 issue cycles a scheduler) and the tail after it leave the path
#       where dV's second half (~256 tensor cycles for both warpgroups) covers them.
#     - v164 (dev/backward/v164_all.patch): v160, v161 and v163 together.
#     ptxas: no injected waits; every kernel's spills as committed; static SASS of the mxfp8 split kernel
#     5,520 (v163), 5,416 (v164).
#     Runs: dev_bwd_step_variants with v164 then v163 (four timing rounds each, six of the committed and
#     v163; racecheck and synccheck on both: v163 changes which tensor work is in flight where). ~350 s.
#     Predicted (written before any run): both the committed kernel's bytes everywhere, both recipes;
#     v163 -1..-4 % at 16x4096 and at 1,024 tokens; v164 about v162's and v163's sum, -2..-6 %.
#   v165 (v168, v167, v165): the sub-step's tensor work moved under its element-wise work, the same bytes by
#     construction:
#     - v165 (dev/backward/v165_dv_early.patch): dV += P^T dO needs only P, ready when P's loop ends, before
#       dP's wait; the mxfp8 split kernel issued dV's four F16 products (~512 tensor cycles for both
#       warpgroups) only after the dS codes, so from dP's wait to there (dS, the block maxima, the
#       warpgroup barrier, the exponents, the codes: ~300 instructions a warp) the tensor cores idled.
#       v165 issues dV right after P's loop and waits for it before the codes' stores (in flight across the
#       codes loop's stores ptxas spilled 28 B). dK's partials then run alone.
#     - v167 (dev/backward/v167_dk_halves.patch, holds v165): dK's two partials as four m64n64 products by
#       halves of the head dims, each scaled while the next runs (registers as before): of the partials'
#       two waits and 128 FFMA, which v165 leaves with nothing under them, only the first wait and 32 FFMA
#       stay on the path. Its bytes equal the committed kernel's if the tensor core's k=32 sum for an
#       output element does not depend on N (64 or 128); the byte checks test that.
#     - v168 (dev/backward/v168_all_dv_early.patch): v160, v161, v165 and v167 together.
#     ptxas: every kernel's spills as committed; static SASS of the mxfp8 split kernel 5,520 (v165),
#     5,528 (v167), 5,424 (v168).
#     Runs: dev_bwd_step_variants with v168, v167, v165 (four timing rounds each, six of the committed
#     and v165; racecheck and synccheck on each: they change which tensor work is in flight where). ~420 s.
#     Predicted (written before any run): every build the committed kernel's bytes everywhere, both
#     recipes; v165 -1..-5 % at 16x4096 and at 1,024 tokens; v167 a further -1..-3 %; v168 -3..-9 %. The
#     counts behind them (perf-notes "Backward kernel", eighty-sixth session) assume the element-wise
#     phase from dP's wait to the codes outlasts dV's products; if it does not, the codes wait for them.
#   Rules, written before any run. A build is eligible when its bytes hold everywhere, its checks all pass
#     and its racecheck and synccheck are clean.
#     - Step v165: promote the fastest eligible of v168, v167 and v165 at 16x4096 (median of the rounds) if
#       it is >= 1 % faster than the committed kernel there and nowhere > 0.3 % slower. A promoted v165 or
#       v167 makes v163 and v164 moot (dV no longer runs after the codes); v160 and v161, if v168 was not
#       the one promoted, then go through step v162 rebased onto the new HEAD.
#     - Step v163 (when step v165 promoted nothing): promote v164 if it is >= 0.7 % faster than the
#       committed kernel at 16x4096, nowhere > 0.3 % slower and at 16x4096 faster than v163; else v163 if
#       it is >= 0.5 % faster at 16x4096 and nowhere > 0.3 % slower.
#     - Step v162: promote v162 if it is >= 0.7 % faster at 16x4096, nowhere > 0.3 % slower and at 16x4096
#       faster than each of v160 and v161; else whichever of v160 and v161 is faster at 16x4096 if it is
#       >= 0.5 % faster there and nowhere > 0.3 % slower (the other only after a run of the two together).
# Carry build-pack: `sh dev/backward/build.sh dev/backward/committed_8cd9da5.patch
# dev/backward/v151_store_under_dv.patch dev/backward/v160_rows_by_warpgroup.patch
# dev/backward/v161_vdo_table.patch dev/backward/v162_rows_vdo.patch dev/backward/v163_dv_halves.patch
# dev/backward/v164_all.patch dev/backward/v165_dv_early.patch dev/backward/v167_dk_halves.patch
# dev/backward/v168_all_dv_early.patch`, then `sh dev/pack_carry.sh` with dev/backward/bin/check_backward and
# each of the bins it built (check_committed_8cd9da5, check_v151_store_under_dv, check_v160_rows_by_warpgroup,
# check_v161_vdo_table, check_v162_rows_vdo, check_v163_dv_halves, check_v164_all, check_v165_dv_early,
# check_v167_dk_halves, check_v168_all_dv_early);
# for promoted also build-carry (`bash dev/carry_bins.sh`), for final also .whl (docs/hopper-port.md).
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eighty-sixth.sh [v165] [v163] [v162] [promoted] [v151] [final]
. dev/device_lib.sh
steps=${*:-v165 v163}
CALL_S=${CALL_S:-570}
for step in $steps; do
  left=$(( CALL_S - $(dev_elapsed) ))
  need=100
  case $step in v165 | v162) need=330 ;; v163) need=280 ;; esac
  [ $left -gt $need ] || { echo "$step: no time left ($left s, needs $need)"; continue; }
  case $step in
    promoted | v151 | final) CALL_S=$left bash dev/sessions/eighty-second.sh $step ;;
    v162) (CALL_S=$left; t0=$(date +%s); dev_bwd_step_variants v162 check_v162_rows_vdo check_v160_rows_by_warpgroup check_v161_vdo_table) ;;
    v163) (CALL_S=$left; t0=$(date +%s); dev_bwd_step_variants v163 check_v164_all check_v163_dv_halves) ;;
    v165) (CALL_S=$left; t0=$(date +%s); dev_bwd_step_variants v165 check_v168_all_dv_early check_v167_dk_halves check_v165_dv_early) ;;
    *) echo "$step: no such step (v165 v163 v162 promoted v151 final)" ;;
  esac
done
echo "done ($(dev_elapsed) s)"
