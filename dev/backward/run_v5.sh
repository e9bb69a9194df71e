#!/bin/bash
# Device check of dev/backward/v5_onecvt.patch (compiled 2026-11-29, not run: no device time
# was left). v5 must give the SAME BYTES as the committed kernel: both run the same
# packed layouts in the deterministic dQ mode (BWD_DET=1, so dQ has a fixed order) and
# dump dQ, dK, dV (BWD_DUMP); cmp compares them. Then timing at 16x4096 and 4x4096.
# Build here first and carry dev/backward/bin:
#   FWD_HEAD=1 sh dev/backward/build.sh dev/backward/v5_onecvt.patch
# Usage (device, repo root): bash dev/backward/run_v5.sh      (about 60 s)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
B=dev/backward/bin
T=$(mktemp -d)
for layout in "rand3000:1 4 2 1" "rand2000:3 8 2 1" "3x1024 4 4 0"; do
  for b in check_backward check_v5_onecvt; do
    BWD_DET=1 BWD_DUMP=$T/$b.bin timeout 40 $B/$b mxfp8 $layout full 2>&1 | grep -v "^  ref" | sed "s/^/$b: /" | cut -c1-200
  done
  if cmp -s $T/check_backward.bin $T/check_v5_onecvt.bin; then echo "v5 == v3 bytes ($layout)"; else echo "v5 DIFFERS from v3 ($layout)"; fi
done
for w in 16x4096 4x4096; do
  for b in check_backward check_v5_onecvt; do
    timeout 30 $B/$b mxfp8 $w 16 16 1 none 10 2>&1 | grep -o "bwd .*" | sed "s/^/$b $w: /"
  done
done
