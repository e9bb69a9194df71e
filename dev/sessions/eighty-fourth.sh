#!/bin/bash
# Eighty-fourth session. Its steps are dev/sessions/eighty-third.sh's (v153, v155, promoted, v152, v151,
# final; their builds, predictions and rules are in that header); this script only changes the order and
# adds one rule, written before any run:
#   Order: v155 first. Machines are scarce today (six calls, 22:19-23:01 UTC, none started), and v155's
#     step times v158 (every part in one kernel) beside three of its parts; v153's step holds the fourth
#     part (v154, with v153) and v159.
#   Rule for v158 when only the v155 step ran (the eighty-third rule needs every part's own win, and v154's
#     was not measured): promote v158 if its bytes hold everywhere, its checks pass, its racecheck and
#     synccheck are clean, it is >= 0.7 % faster than the committed kernel at 16x4096 (median of four
#     rounds) and nowhere > 0.3 % slower, and at 16x4096 it is faster than each of v155, v156 and v157.
#     Its parts are all scheduling (the same bytes by construction), so a combination that passes those
#     costs nothing a later attribution could undo; v153's step, when it runs later, attributes the rest.
#   v158 (a step of its own, ~220 s, for a call with too little device time left for v155's ~350 s):
#     v158 alone beside the committed kernel, as dev_bwd_variant runs a variant (bytes on three layouts,
#     both recipes; the default mode's checks; four timing rounds at 16x4096, 64x1024, 16x1024), then
#     racecheck and synccheck on both recipes while 40 s are left. Predicted as in eighty-third.sh (the
#     same bytes; -3..-8 % at 16x4096). Rule when only this step ran: promote v158 if its bytes hold
#     everywhere, every check passes, racecheck and synccheck are clean on both recipes, and it is >= 0.7 %
#     faster at 16x4096 (median of four rounds) and nowhere > 0.3 % slower; the parts' own steps, when they
#     run, attribute it.
# Carry: build-pack as eighty-third.sh says (its eleven variant builds and check_backward).
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eighty-fourth.sh [step...] (default: v155)
. dev/device_lib.sh
steps=${*:-v155}
CALL_S=${CALL_S:-570}
for step in $steps; do
  left=$(( CALL_S - $(dev_elapsed) ))
  case $step in
    v158) # ~220 s; dev_bwd_variant's sanitizers stop by themselves 40 s before CALL_S
      [ $left -gt 200 ] || { echo "v158: no time left ($left s, needs 200)"; continue; }
      dev_bwd_variant v158 check_v158_combined ;;
    *) CALL_S=$left bash dev/sessions/eighty-third.sh $step ;;
  esac
done
echo "done ($(dev_elapsed) s)"
