#!/bin/bash
# A backward experiment of the twenty-second session (~4 min with dev/backward/bin carried):
# dev/backward/v48_amax_block.patch, mxfp8's dS block maximum reduced per (warp, query block)
# with two independent shuffle chains, instead of a butterfly per query, a barrier, and a
# second chain (exact: the bytes must be the same; prediction in the patch's header).
# Order, each part's log written under $OUT as it finishes (a cut run keeps what ran):
# (1) dev/backward/compare.sh: bytes in the deterministic mode (mxfp8 and exact, two
#     layouts), the default mode against the reference, the mxfp8 backward alone timed,
#     alternated, twice ($OUT/bwd2.log);
# (2) v48 applied to the working tree, the library built by meson, and the gpu tests that run
#     the backward: test_gpu_backward, test_gpu_consistency, test_gpu_scale_shift
#     ($OUT/suite.log).
# check_head is the working tree's backward; both harness binaries are built here by the
# lines below and carried, or built on the device (git apply: no history needed there).
# Usage (device, repo root): bash dev/twentysecond_bwd2.sh > $OUT/run.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
B=dev/backward/bin
P=dev/backward/v48_amax_block.patch
if [ ! -x $B/check_head ] || [ ! -x $B/check_v48_amax_block ]; then
  sh dev/backward/build.sh > /tmp/bwd_build.log 2>&1 || { tail -20 /tmp/bwd_build.log; exit 1; }
  mv $B/check_backward $B/check_head
  git apply $P || { echo "v48 does not apply"; exit 1; }
  sh dev/backward/build.sh >> /tmp/bwd_build.log 2>&1 || { git apply -R $P; tail -20 /tmp/bwd_build.log; exit 1; }
  mv $B/check_backward $B/check_v48_amax_block
  git apply -R $P
fi
KINDS="mxfp8 exact" TKINDS="mxfp8" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_head check_v48_amax_block > $OUT/bwd2.log 2>&1
grep -E "==|FAIL|bwd " $OUT/bwd2.log
git apply $P || { echo "v48 does not apply"; exit 1; }
touch kernels/sm90/backward_fp8.cu
{
  meson setup build-device -Dcuda=enabled -Dexperiments=disabled >/tmp/meson.log 2>&1 && ninja -C build-device >>/tmp/meson.log 2>&1 \
    || { tail -30 /tmp/meson.log; exit 1; }
  for t in test_gpu_backward test_gpu_consistency test_gpu_scale_shift; do
    build-device/tests/gpu/$t > /tmp/$t.log 2>&1; echo "$t: rc=$?"; grep -hE "FAIL|failures|bit-exact|relL2 \(max\)" /tmp/$t.log | cut -c1-200 | tail -8
  done
} > $OUT/suite.log 2>&1
git apply -R $P
cat $OUT/suite.log
