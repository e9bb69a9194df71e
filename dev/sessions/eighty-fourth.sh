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
# Carry: build-pack as eighty-third.sh says (its eleven variant builds and check_backward).
# Usage (device, repo root): [CALL_S=s] bash dev/sessions/eighty-fourth.sh [step...] (default: v155)
exec bash dev/sessions/eighty-third.sh ${*:-v155}
