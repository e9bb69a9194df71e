#!/bin/bash
# Runs gpu test binaries of a carried build directly (the device's meson cannot read this
# machine's build dir): each one's output goes to $OUT/NAME.log; printed are its exit status
# and time, the lines matching PATTERN (at most LINES) and its last line.
# Usage (device, repo root): bash dev/gpu_test_bins.sh TIMEOUT_S PATTERN LINES test_gpu_a test_gpu_b ...
O=${OUT:-/tmp}
limit=$1 pattern=$2 lines=$3
shift 3
for t in "$@"; do
  s=$SECONDS
  timeout "$limit" build/tests/gpu/$t > $O/$t.log 2>&1
  echo "$t: rc=$? ($((SECONDS - s)) s)"; grep -E "$pattern" $O/$t.log | cut -c1-300 | head -"$lines"; tail -n 1 $O/$t.log
done
