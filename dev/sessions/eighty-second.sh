#!/bin/bash
# Eighty-second session. Steps (default: promoted v152 v151), run in the order given, each guarded by CALL_S:
#   promoted: the eighty-first session's queued suite, dev/sessions/eighty-first.sh promoted (8cd9da5's
#     backward against HEAD's, four rounds; the gpu suite and sanitizers at HEAD, whose v150 no suite had
#     run). ~250 s.
#   v151: dev/sessions/eighty-first.sh v151 (prepared there; its prediction and rule are there). ~150 s.
#   v152: dev/backward/v152_dv_operand_codes.patch beside the committed harness, as dev_bwd_variant runs a
#     variant (bytes on three layouts, both recipes; the default mode's checks; four timing rounds), then
#     dV's error against the reference of both builds on every checked layout and both recipes (read off
#     those checks' lines) and the
#     bytes gradient by gradient in the deterministic mode (see the rule), then racecheck and
#     synccheck while time is left. ~170 s.
#     Why: the eighty-first session's recount puts 258 of the sub-step's ~1,067 instructions a warp in P's
#     codes and dV's operand (18 % of the stall samples). dV's A operand was F16(P 2^(eDO - G + 14)) with
#     P = dec(code) norm 2^-8: per k-pair four FMUL (P times the factor) and an F2FP pack. v152 makes
#     mxfp8's A operand the code's exact F16 value times 2^(eDO - G + 3) (one HMUL2 a k-pair, exact while
#     eDO - G >= -18) and moves the row's norm into dV's B operand, which bwd_pre_do now writes for mxfp8
#     as F16(code norm 2^3) instead of the exact codes: A B is the same product, its one F16 rounding on
#     dO's code times norm instead of on P (numerics.md 4.6 would say so). mxfp8-exact keeps today's
#     operands (its split kernel spilled 4 B with the F16 form). SASS here, mxfp8 split kernel: 5,560 ->
#     5,464 (P's codes and dV's operand lose 32 FMUL and 16 F2FP a sub-step, gain 16 HMUL2); every
#     kernel's spills as committed.
#     Predicted (written before any run): mxfp8-exact the same bytes in all three gradients and mxfp8 in dQ
#     and dK, on every layout; mxfp8's dV error against the reference about the committed's (the same
#     size of rounding, moved); the backward -1..-3 % at 16x4096 and at 1,024 tokens.
#     Rule: promote (kernels/, numerics.md 4.6, backward_fp8.cu's header) if those bytes hold, every check
#     passes, mxfp8's dV relL2 (two digits) is no more than one step in the second digit above the
#     committed's and its cosine (six digits) no more than 2e-6 below on every layout, racecheck and
#     synccheck are clean, and the backward is >= 1 % faster at 16x4096 (median of four rounds) and
#     nowhere > 0.3 % slower.
#   final: dev/sessions/eighty-first.sh final (the record on an H200; mxfp8-exact's backward timed on any
#     other card).
# Carry build-pack: `sh dev/backward/build.sh dev/backward/committed_8cd9da5.patch
# dev/backward/v151_store_under_dv.patch dev/backward/v152_dv_operand_codes.patch`, then `sh dev/pack_carry.sh
# dev/backward/bin/check_backward dev/backward/bin/check_committed_8cd9da5 dev/backward/bin/check_v151_store_under_dv
# dev/backward/bin/check_v152_dv_operand_codes`; for promoted also build-carry (`bash dev/carry_bins.sh`), for
# final also .whl (docs/hopper-port.md).
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eighty-second.sh [promoted] [v152] [v151] [final]
. dev/device_lib.sh
steps=${*:-promoted v152 v151}
CALL_S=${CALL_S:-570}
V152=check_v152_dv_operand_codes
step_v152() {
  dev_bwd_variant_checks v152 $V152
  echo "== dV against the reference (relL2 maxrel cos), committed then v152 on each layout, default mode:"
  grep "^default " $OUT/v152_compare.log | grep -o "^default [a-z0-9_]*: [a-z0-9]* v[0-9] [a-z0-9:]*\|dV [0-9.e+-]* [0-9.e+-]* [0-9.]*" |
    paste - -
  local k l
  for k in mxfp8 exact; do
    for l in "rand3000:1 4 2 1" "rand2000:3 8 2 1" "3x1024 4 4 0"; do
      dev_bwd_gradient_bytes $V152 $k $l
    done
  done
  dev_bwd_sanitizers $V152 v152 40
}
# the steps in the order given, each with what is left of CALL_S
for step in $steps; do
  left=$(( CALL_S - $(dev_elapsed) ))
  [ $left -gt 100 ] || { echo "$step: no time left"; continue; }
  case $step in
    promoted | v151 | final) CALL_S=$left bash dev/sessions/eighty-first.sh $step ;;
    v152) (CALL_S=$left; t0=$(date +%s); step_v152) ;;
  esac
done
echo "done ($(dev_elapsed) s)"
