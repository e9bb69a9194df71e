#!/bin/bash
# Thirtieth session, second device command (~7 min with dev/forward/bin carried, built here by
# `git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v27_imax3.patch`):
# dev/forward/v27_imax3.patch (mxfp8's unmasked-tile maxima by VIMNMX3 on the bit patterns;
# prediction in the patch's header), which the working tree's kernels/sm90/forward.cu carries.
# 1. dev/forward/compare.sh: reference checks, O / lse / frame bytes against the head's (same
#    bytes expected everywhere, the NEGQ=1 layouts whose even rows have only negative scores
#    included: they run the FMNMX fallback), the forward alone timed, builds alternated, twice.
# 2. The library built with it: the gpu suite (test_gpu_forward's "negative rows" case included).
# Usage (device, repo root): bash dev/sessions/thirtieth_fwd.sh > $OUT/fwd.log 2>&1   (carry build, dev/forward/bin)
# VARIANT (default v27_imax3) and WORKLOADS pick another patch and timing set; RACECHECK=1 adds
# compute-sanitizer racecheck and memcheck of test_gpu_forward at FLAMIA_TEST_SMALL (thirty-second
# session: v31_item_ahead).
set -u
V=${VARIANT:-v27_imax3}
export OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}
t0=$(date +%s)
WORKLOADS="${WORKLOADS:-16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1}" \
  bash dev/forward/compare.sh check_fwd_head check_$V
echo "== compare done at $(( $(date +%s) - t0 )) s"
# the build made here and carried (build/: carry ["build", "dev/forward/bin"]; its gpu tests
# find libflamia.so by RUNPATH), else built here
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
if [ -x build/tests/gpu/test_gpu_forward ]; then
  for t in quantize forward leak api backward consistency scale_shift e4m3_cvt; do
    s=$(date +%s); timeout 120 build/tests/gpu/test_gpu_$t > "$OUT/test_$t.log" 2>&1; rc=$?
    echo "test_gpu_$t rc=$rc ($(( $(date +%s) - s )) s)"
  done
  grep -h "negative rows\|FAIL\|failures" "$OUT"/test_forward.log | cut -c1-220
  if [ "${RACECHECK:-0}" = 1 ]; then
    for tool in racecheck memcheck; do
      s=$(date +%s); FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
        build/tests/gpu/test_gpu_forward > "$OUT/sanitize-$tool.log" 2>&1
      echo "compute-sanitizer $tool test_gpu_forward: rc=$? ($(( $(date +%s) - s )) s)"
      grep -h "SUMMARY" "$OUT/sanitize-$tool.log" | tail -1
    done
  fi
else
  KEEP_LOGS=1 bash experiments/latency/device_run.sh tests
fi
echo "== gpu suite done at $(( $(date +%s) - t0 )) s"
echo "== done at $(( $(date +%s) - t0 )) s"
cd "$OUT" && f=$(ls *.log *.txt 2>/dev/null | grep -v '^fwd.log$'); [ -n "$f" ] && tar czf logs.tgz $f && rm -f $f
