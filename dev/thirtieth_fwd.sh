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
# 3. The latency driver's forward pass (mxfp8) on four workloads.
# Usage (device, repo root): bash dev/thirtieth_fwd.sh > $OUT/fwd.log 2>&1
set -u
export OMP_NUM_THREADS=16
OUT=${OUT:-/tmp/flamia-out}
t0=$(date +%s)
WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/forward/compare.sh check_fwd_head check_v27_imax3
echo "== compare done at $(( $(date +%s) - t0 )) s"
KEEP_LOGS=1 bash experiments/latency/device_run.sh tests
echo "== gpu suite done at $(( $(date +%s) - t0 )) s"
for w in 16x4096 4x4096 16x1024 logu-16k; do
  build-device/experiments/latency/latency --workloads $w --recipes mxfp8 --passes fwd --out /tmp/lat_$w.h5 2>&1 | grep -E "^  $w" | cut -c1-120
done
echo "== done at $(( $(date +%s) - t0 )) s"
cd "$OUT" && f=$(ls *.log *.txt 2>/dev/null | grep -v '^fwd.log$'); [ -n "$f" ] && tar czf logs.tgz $f && rm -f $f
