#!/bin/bash
# Twenty-seventh session, last device command (~6 min): the backward's six tensor maps as one
# BwdMaps parameter (+ v80) against v80 alone in the harness (bytes in the deterministic mode,
# default mode against the reference, the exact backward timed: its SASS is the one that
# changed), then the library built by meson and the whole gpu suite.
# Usage (device, repo root, dev/backward/bin carried with check_v80_panel_hq and check_backward
# built here): bash dev/sessions/twentyseventh_check.sh > $OUT/run.log 2>&1
OUT=${OUT:-/tmp/flamia-out}
KINDS="mxfp8 exact" TKINDS="exact mxfp8" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_v80_panel_hq check_backward > $OUT/bwd_probe.log 2>&1
grep -E "==|FAIL|bwd " $OUT/bwd_probe.log
meson setup build-device -Dcuda=enabled -Dexperiments=disabled > $OUT/suite.log 2>&1 && ninja -C build-device >> $OUT/suite.log 2>&1 \
  && meson test -C build-device --suite gpu --print-errorlogs >> $OUT/suite.log 2>&1
echo "suite rc=$?"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:" $OUT/suite.log
