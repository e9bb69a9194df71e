#!/bin/bash
# One device command for the trunc exponential (numerics.md 3.3, sm90_exp2.cuh), eighth
# session: the identity probe, the forward and backward dev harnesses of the committed
# kernels (check_fwd_head, check_base: floor split) against the working tree's
# (check_forward, check_backward: ex2(t) 2^-M), then the library's gpu suite.
# Build here first (see dev/forward/compare.sh, dev/backward/compare.sh) and carry
# dev/forward/bin and dev/backward/bin.
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 60 dev/forward/bin/ex2_identity_probe trunc | tail -2
timeout 200 bash dev/forward/compare.sh check_fwd_head check_forward > $OUT/fwd.txt 2>&1
cat $OUT/fwd.txt
TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1" WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  timeout 200 bash dev/backward/compare.sh check_base check_backward > $OUT/bwd.txt 2>&1
cat $OUT/bwd.txt
MESON="meson"; command -v meson >/dev/null || MESON="python3 -m mesonbuild.mesonmain"
$MESON setup build-device -Dcuda=enabled -Dexperiments=enabled > $OUT/build.log 2>&1 && ninja -C build-device >> $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
timeout 240 $MESON test -C build-device --suite gpu --print-errorlogs --num-processes 1 > /dev/null 2>&1
cp build-device/meson-logs/testlog.txt $OUT/testlog.txt
grep -E "^(test|result|duration): " $OUT/testlog.txt | paste - - - | awk '{print $4, $6, $8, $9, $10}'
grep -hE "^FAIL|mismatch|unexplained|evaluation" $OUT/testlog.txt | cut -c1-200 | head -30
