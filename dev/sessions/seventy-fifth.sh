#!/bin/bash
# Seventy-fifth session: the queued measurement of the promoted forward (v131, af207b3) in one call,
# ordered by what matters if the call is cut short (machines came rarely: the seventy-third to
# seventy-fifth sessions lost 180 s of device time to each failed start). Carry build-carry (`bash
# dev/carry_bins.sh` at the commit measured) and .whl. Pass FLAMIA_GIT_COMMIT=<hash>, and CALL_S (the
# call's limit less a margin) when less than 600 s of device time is left.
#   1. The default mode's acceptance ratios (sixty-fifth_ratios.sh, 3 rounds). On an H200 these are
#      the figures of record (the file becomes data/measured/h200/ratios_gpu.h5 with git_commit set).
#   2. The whole gpu suite (the promoted forward has run only the forward's five programs).
#   3. On an H200: Table D's pair (dev/sessions/sixty-ninth_queued.sh says where the files go).
#      On an H100: racecheck of the four small test programs (seventy-first.sh racecheck).
# Each step starts only if the time it needs is left of CALL_S.
# Predicted (hopper-port, current plan): on the H200 the forward ~1.575 ms at 16x4096, 1.27-1.31x cuDNN
# BF16; backward ~365 TFLOP/s, training call ~0.85x; on an H100 the forward ~1.568 ms, ~1.26x.
. dev/device_lib.sh
dev_carry
CALL_S=${CALL_S:-570}
left() { echo $(( CALL_S - $(dev_elapsed) )); }
export RATIO_TIMEOUT=$(( $(left) - 30 < 300 ? $(left) - 30 : 300 ))
MODES=default bash dev/sessions/sixty-fifth_ratios.sh
h200=0
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in *H200*) h200=1 ;; esac
if [ $(left) -gt 200 ]; then dev_all_gpu_tests; else echo "no time left for the suite ($(left) s)"; fi
if [ $h200 = 1 ] && [ $(left) -gt 150 ]; then
  dev_table_d
elif [ $h200 = 0 ] && [ $(left) -gt 200 ]; then
  SAN_TIMEOUT=$(( ($(left) - 20) / 4 )) bash dev/sessions/seventy-first.sh racecheck
fi
[ -d $OUT/logs ] && (cd $OUT && tar -czf logs.tgz logs && rm -rf logs)
echo "done ($(dev_elapsed) s)"
