#!/bin/bash
# Fifty-eighth session: v115 (dev/backward/v115_writer_n64.patch), the fortieth session's
# dQ-writer warpgroup (v99) rebased onto fe63a67, with dK's query-block partials as n64 halves
# so that the consumers fit 240 registers (mxfp8 12 B spill stores / 64 B loads against v99's
# 120 / 144). Builds made here and carried (dev/backward/bin/check_backward and
# check_v115_writer_n64_{n64,w,wn64}; FWD_HEAD=1 sh dev/backward/build.sh
# "dev/backward/v115_writer_n64.patch@n64=FLAMIA_BWD_DK_N64=1"
# "dev/backward/v115_writer_n64.patch@w=FLAMIA_BWD_DQ_WRITER=1"
# "dev/backward/v115_writer_n64.patch@wn64=FLAMIA_BWD_DQ_WRITER=1,FLAMIA_BWD_DK_N64=1").
# (1) synccheck and racecheck of the writer + n64 build on a small pack, both recipes;
# (2) dev/backward/compare.sh: deterministic bytes (the writer leaves that mode as it is, n64
#     changes it: must be equal), the default kernels against the reference, the backward
#     alone timed, builds alternated, twice.
# Predicted (16x4096, mxfp8, against the base): n64 0..+2 % (two more wgmma waits a sub-step),
# w +5 % (v99 as measured, its spills), wn64 -1..-4 % (v99's spill-free estimate, -3 %, less
# n64's cost). Promote wn64 if <= -2 % at 16x4096 and not slower on the other shapes.
# (3) with the argument `suite` instead: v115 applied to the working tree with both switches
#     on, the library built by meson and the whole gpu suite run (~5 min on a fresh machine).
# Usage (device, repo root): bash dev/sessions/fifty-eighth.sh [suite] > $OUT/fifty-eighth.log 2>&1
export OMP_NUM_THREADS=16
if [ "${1:-}" = suite ]; then
  . dev/device_lib.sh
  git apply dev/backward/v115_writer_n64.patch || { echo "v115 does not apply"; exit 1; }
  sed -i 's/^#define FLAMIA_BWD_DQ_WRITER 0$/#define FLAMIA_BWD_DQ_WRITER 1/; s/^#define FLAMIA_BWD_DK_N64 0$/#define FLAMIA_BWD_DK_N64 1/' \
    kernels/sm90/backward_fp8.cu
  grep -E "^#define FLAMIA_BWD_(DQ_WRITER|DK_N64) " kernels/sm90/backward_fp8.cu
  dev_setup
  dev_gpu_suite
  rc=$?
  git checkout kernels/sm90/backward_fp8.cu
  echo "suite: rc=$rc ($(dev_elapsed) s)"
  exit $rc
fi
B=dev/backward/bin
V=check_v115_writer_n64
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for t in synccheck racecheck; do
  for k in mxfp8 exact; do
    echo "== $t $k ${V}_wn64"
    timeout 150 compute-sanitizer --tool $t $B/${V}_wn64 $k rand700:3 4 2 1 full 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|PASS|FAIL" | head -5
  done
done
KINDS="mxfp8 exact" TKINDS="mxfp8 exact" LAYOUTS="rand3000:1 4 2 1|3x1024 4 4 0" \
  WORKLOADS="16x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/backward/compare.sh check_backward ${V}_n64 ${V}_w ${V}_wn64
