#!/bin/bash
# Fifty-ninth session: dQ converted to BF16 inside the FP8 main kernel (the last CTA to add into
# a query tile converts it, backward_fp8.cu dq_out_last) instead of the bwd_dq_out pass.
# Parts (arguments, in order; the machine keeps build-device between calls):
#   suite  configure and build build-device (the working tree), the whole gpu suite
#          (test_gpu_backward compares the in-kernel dQ with the pass's on every deterministic
#          case, Hadamard and a 20,000-token document included), then memcheck of
#          test_gpu_api on its small cases (the new global loads and stores)
#   ab     dev/latency_ab.sh, 3 alternated rounds: base = HEAD before this change (libflamia.so
#          built here from bedcb06 and carried in build-base/), pass = this tree with
#          FLAMIA_SM90_DQ_OUT=pass (the old pass, the main loop as rebuilt), fused = this tree
# Counted before the run (H100, fifty-seventh session's ncu: bwd_dq_out 271 us at 16x4096 and
# at 64x1024, 0.81 GB at 2.97 TB/s): the pass goes; the conversions cost the CTAs that do
# them ~1-2 us each (128 rows x 128 FP32, mostly from L2), 8,192 tiles x ~1.5 us / 132 SMs
# ~ 90 us, plus the longest CTAs' tail. Predicted: backward -1.5..-2.5 % at 16x4096 and
# -4..-7 % at 64x1024; training call -1..-2 % and -3..-5 %. pass against base: 0 +- 1 % (the
# main loop's SASS differs by 10 integer instructions). Keep if fused is faster than base on
# every workload and no test fails.
# Run 1 (v117, dev/backward/v117_dq_out_last.patch: wait, fences, counts and the document
# search at the CTA's very end): suite 10/10, the A/B fused / base +1.5 % (16x4096 bwd),
# +3.9 % (64x1024), +8.8 % (gqa-16x1024), +1.2 % (logu-16k): refuted. Run 2 (v117b, this
# tree): the adds waited and the first 256 counts issued before dK / dV's stores (their
# latency under the stores), the CTA constants stored in the prologue instead of the search;
# run 1's loss read as cost per CTA: (fused - pass + the pass's ~271 us) x 132 SMs / 8,192
# CTAs ~ 6.7 us at 16x4096 and 64x1024, ~1 conversion a CTA; gqa-16x1024 ~40 us a CTA for
# ~4 conversions. A conversion is one round of 16 loads a thread then the stores, latency-
# bound at one CTA an SM (~3-5 us); v117b cuts only the fixed part (the wait, the search, the
# atomic's round trip: ~1-2 us). Predicted: 0..+1 % at 16x4096 and 64x1024, GQA still
# +5..+8 % (its key tile 0 CTAs convert 32 tiles each at their end). Written before run 2.
# Results: docs/perf-notes.md "Backward kernel", fifty-ninth session (both refuted). The
# variants are patches now (the tree went back to bedcb06's kernels): this script applies
# PATCH (default dev/backward/v117b_dq_out_early_counts.patch; v117's for run 1) unless the
# tree already has dq_out_last. build-base/libflamia.so: bedcb06's, built on the CPU machine
# (git worktree at bedcb06, meson setup, meson compile flamia:shared_library) and carried.
# Usage (device, repo root): [PATCH=...] bash dev/sessions/fifty-ninth.sh suite | tests | ab
export OMP_NUM_THREADS=16
. dev/device_lib.sh
grep -q dq_out_last kernels/sm90/backward_fp8.cu ||
  git apply "${PATCH:-dev/backward/v117b_dq_out_early_counts.patch}" || { echo "the patch does not apply"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for part in "$@"; do
  case $part in
  suite)
    dev_setup
    dev_gpu_suite
    echo "suite rc=$? ($(dev_elapsed) s)"
    grep -E "dQ default, in the main|deterministic dQ" $B/meson-logs/testlog.txt | cut -c1-170 | head -24
    FLAMIA_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck $B/tests/gpu/test_gpu_api 2>&1 |
      grep -E "ERROR SUMMARY|Invalid|test_gpu_api" | head -8
    echo "memcheck done ($(dev_elapsed) s)"
    ;;
  tests) # run 2's short form (device time): the two gpu tests that run the backward
    dev_setup
    for t in backward api; do
      timeout 200 $B/tests/gpu/test_gpu_$t > $OUT/test_gpu_$t.log 2>&1
      echo "test_gpu_$t rc=$? ($(dev_elapsed) s)"
    done
    grep -hE "^FAIL|failures" $OUT/test_gpu_*.log | head -10
    grep -E "dQ default, in the main" $OUT/test_gpu_backward.log | sort -t'(' -k3 | tail -2
    ;;
  ab)
    dev_setup
    LD_LIBRARY_PATH=build-base:$LD_LIBRARY_PATH ldd $B/experiments/latency/latency | grep flamia
    CONFIGS="base=LIB=build-base pass=FLAMIA_SM90_DQ_OUT=pass fused=" \
      WORKLOADS="16x4096 64x1024 logu-16k gqa-16x1024" PASSES=bwd,train ROUNDS=3 BUDGET=2 \
      DRIVER=$B/experiments/latency/latency OUTDIR=/tmp/ab59 bash dev/latency_ab.sh
    tar czf $OUT/ab59_h5.tgz -C /tmp ab59
    echo "ab done ($(dev_elapsed) s)"
    ;;
  esac
done
