#!/bin/bash
# Seventy-first session. Ran: `s256 tests memcheck` at a5e2e19 (H100; dev/logs/seventy-first_first_h100.log) and
# `memcheck racecheck pp` with SAN_TESTS=test_gpu_backward at ae49162 (H200; dev/logs/seventy-first_second_h200.log):
# suite 10/10; memcheck clean; racecheck 36 reports in dq_split (fixed in 55bd12a, not re-run); s256 +1.8 %
# (closed); ping-pong off +3.8 % at 16x4096 (stays on). Steps h200 and synccheck did not run. Carry build-carry (bash dev/carry_bins.sh at the commit measured) and .whl
# (the cudnn-fp8 peer). Pass FLAMIA_GIT_COMMIT=<hash>. Any sm_90 GPU for steps 1-2; step 3 only on an H200.
# 1. Every gpu test program (full size; test_gpu_backward takes every dQ path).
# 2. compute-sanitizer memcheck, racecheck and synccheck on the small cases (FLAMIA_TEST_SMALL=1) of
#    test_gpu_quantize, test_gpu_api, test_gpu_scale_shift and, new this session, test_gpu_backward:
#    the first sanitizer run of the split dQ (kernels/sm90/backward_dq.cu, the main kernel's kDqSplit
#    mode, region dq_room; sixty-fourth to sixty-eighth sessions). The last sanitizer run was at d8dca16
#    (sixty-first session), before any of them. Predicted: 0 errors, 0 hazards everywhere.
# 3. s256: the forward's loop at 256 keys a tile against today's 128 (dev/forward/s256_sketch; carry
#    dev/forward/bin after `sh dev/forward/s256_sketch/build.sh`), on 4,096- and 1,024-key items.
#    Predicted: the skeleton's today's shape above the real forward's rate (707 TFLOP/s on the H100 at
#    16x4096, sixty-ninth session), as it leaves out masks, item boundaries and the O sum; 256 keys
#    with the ping-pong only within -5..+10 % of today's shape. Rule: 256 keys at least 10 % faster
#    than today's shape at 4,096 keys makes the 64x256 forward worth building; less closes it.
# 4. pp: the real forward with its ping-pong off and on (dev/forward/bin/check_forward, PINGPONG=0|1, built
#    by `sh dev/forward/build.sh`), alternated, 2 rounds, on five workloads. The skeleton (step 3) had
#    the turns cost 4.6 % of the loop at 4,096 keys and gain 5.6 % at 1,024; on the real kernel
#    they were last measured in the tenth session (+0.1..+2.8 % without them, a kernel 16 % slower).
#    Predicted: off -2..-5 % at 16x4096, +2..+6 % at 16x1024 and 64x1024. Rule: off at least 2 % faster
#    in both rounds on a workload class (long or short documents) makes it that class's default.
# 5. On an H200 only (the acceptance GPU; its figures of record are the sixty-first session's): Table D's
#    pair and the default-mode acceptance ratios, as dev/sessions/seventieth_h200_only.sh.
# Usage: bash dev/sessions/seventy-first.sh [tests] [memcheck] [racecheck] [synccheck] [s256] [pp] [h200]
# (default: all of them; split them over calls where one would pass 10 minutes). SAN_TESTS narrows the
# sanitizers' test programs, SAN_TIMEOUT bounds each run (default 150 s).
# At most 8 files come back from $OUT: the test and sanitizer logs go into logs.tgz; on an H200 Table D's
# two files, the ratios' HDF5 and log, and the caller's run.log.
. dev/device_lib.sh
steps=${*:-tests memcheck racecheck synccheck s256 pp h200}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
dev_carry
has tests && dev_all_gpu_tests
SAN=$OUT/logs/sanitize
mkdir -p $SAN
for tool in memcheck racecheck synccheck; do
  has $tool || continue
  for t in ${SAN_TESTS:-test_gpu_quantize test_gpu_api test_gpu_scale_shift test_gpu_backward}; do
    s=$(date +%s)
    FLAMIA_TEST_SMALL=1 timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 \
      $C/tests/gpu/$t > $SAN/${tool}_$t.log 2>&1
    rc=$?
    echo "compute-sanitizer $tool $t: rc=$rc ($(( $(date +%s) - s )) s): $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $SAN/${tool}_$t.log | sort | uniq -c | tr -s ' ' | tr '\n' ';') $(grep -E ": ok$|failures" $SAN/${tool}_$t.log | tail -n 1)"
  done
done
if has s256; then
  for keys in 32 8; do timeout 120 dev/forward/bin/s256_sketch $keys 16; echo "s256_sketch $keys: rc=$?"; done
  # the real forward on the same GPU, for the skeleton's calibration (causal-discounted TFLOP/s)
  timeout 90 $C/experiments/latency/latency --backend cuda --workloads 16x4096,64x1024 --recipes mxfp8 --passes fwd \
    --warmup 3 --iters 20 --verify-rows 0 --quiet --out $OUT/logs/fwd_cal.h5 > $OUT/logs/fwd_cal.log 2>&1
  echo "latency (forward, calibration): rc=$?"
  python3 - $OUT/logs/fwd_cal.h5 <<'PY'
import sys, h5py
t = h5py.File(sys.argv[1], "r")["timings"]
for i in range(len(t["ms"])):
    print("forward %s %s %s: %.4f ms" % tuple([t[k][i].decode() for k in ("workload", "system", "pass")] + [t["ms"][i]]))
PY
fi
if has pp; then
  for w in "16x4096 16 16 1" "4x4096 16 16 1" "16x1024 16 16 1" "64x1024 16 16 1" "rand65536:5 16 16 1"; do
    for rep in 1 2; do
      for pp in 0 1; do
        PINGPONG=$pp timeout 40 dev/forward/bin/check_forward mxfp8 $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" |
          sed "s/^/pp=$pp ${w%% *} r$rep /"
      done
    done
  done
fi
if has h200; then
  case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
    *H200*)
      dev_table_d
      MODES=default bash dev/sessions/sixty-fifth_ratios.sh
      mv $OUT/ratios_mxfp8_default.log $OUT/logs/ 2>/dev/null ;;
    *) echo "not an H200: no ratios or Table D" ;;
  esac
fi
(cd $OUT && tar -czf logs.tgz logs && rm -rf logs)
echo "done ($(dev_elapsed) s)"
