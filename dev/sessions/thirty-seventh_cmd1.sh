#!/bin/bash
# Thirty-seventh session, device command 1 (carry build/ and dev/forward/bin): the O-sum
# ablation with its refactor checks, then v41 (the sum compiled out) in what time is left.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/thirty-seventh_cmd1.sh
O=${OUT:-/tmp/flamia-out}
bash dev/sessions/thirty-seventh_osum.sh > "$O/osum.log" 2>&1
echo "osum done at $SECONDS s"
timeout $((575 - SECONDS)) bash dev/sessions/thirty-seventh_v41.sh > "$O/v41.log" 2>&1
echo "v41 rc=$? at $SECONDS s"
tail -40 "$O/osum.log"; echo ----; tail -30 "$O/v41.log"
