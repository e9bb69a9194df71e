#!/bin/bash
# One backward probe on the device (~4 min for one variant with dev/backward/bin carried):
# exact variants (dev/backward/vN_NAME.patch against the working tree's backward), each
# compared with the working tree's own backward (check_head):
# (1) dev/backward/compare.sh: bytes in the deterministic mode (mxfp8 and exact; LAYOUTS,
#     default a random pack with GQA and 3 non-causal 1,024-token documents), the default
#     mode against the reference, the mxfp8 backward alone timed, alternated, twice
#     ($OUT/bwd_probe.log);
# (2) with SUITE_WITH=vN_NAME: that variant applied to the working tree, the library built by
#     meson, and the gpu tests that run the backward: test_gpu_backward,
#     test_gpu_consistency, test_gpu_scale_shift ($OUT/suite.log).
# Each part's log is written under $OUT as it finishes (a cut run keeps what ran). Binaries
# are built by the lines below, here (then carry dev/backward/bin) or on the device (git
# apply: no history needed there).
# Env: LAYOUTS (the checked packs), TKINDS (the timed recipes, default mxfp8), WORKLOADS (the timed shapes).
# Usage (device, repo root): [SUITE_WITH=v49_ckq_table] bash dev/backward/probe.sh v49_ckq_table [...] > $OUT/run.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
B=dev/backward/bin
need=0
for v in head "$@"; do [ -x $B/check_$v ] || need=1; done
if [ $need = 1 ]; then
  sh dev/backward/build.sh > /tmp/bwd_build.log 2>&1 || { tail -20 /tmp/bwd_build.log; exit 1; }
  mv $B/check_backward $B/check_head
  for v in "$@"; do
    git apply dev/backward/$v.patch || { echo "$v does not apply"; exit 1; }
    sh dev/backward/build.sh >> /tmp/bwd_build.log 2>&1 || { git apply -R dev/backward/$v.patch; tail -20 /tmp/bwd_build.log; exit 1; }
    mv $B/check_backward $B/check_$v
    git apply -R dev/backward/$v.patch
  done
fi
KINDS="mxfp8 exact" TKINDS="${TKINDS:-mxfp8}" LAYOUTS="${LAYOUTS:-rand3000:1 4 2 1|3x1024 4 4 0}" \
  WORKLOADS="${WORKLOADS:-16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1}" \
  bash dev/backward/compare.sh check_head $(for v in "$@"; do printf 'check_%s ' $v; done) > $OUT/bwd_probe.log 2>&1
grep -E "==|FAIL|bwd " $OUT/bwd_probe.log
[ -n "${SUITE_WITH:-}" ] || exit 0
P=dev/backward/$SUITE_WITH.patch
git apply $P || { echo "$SUITE_WITH does not apply"; exit 1; }
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
