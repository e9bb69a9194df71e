#!/bin/bash
# Fifty-seventh session, second command: the first command on an H100 (the card every earlier
# device session had was an H200).
#  suite:            the gpu suite on the H100 (never run there before);
#  sanitize:         compute-sanitizer memcheck and racecheck on test_gpu_quantize, test_gpu_api (the
#                    forward, backward and training call) and test_gpu_scale_shift, small cases (FLAMIA_TEST_SMALL=1; the kernels changed since
#                    the last clean run at 98452ed, forty-ninth session);
#  ratios RECIPE...: the acceptance ratios (ratios.py, ours and the peers in one process, rounds
#                    alternated) once per recipe, in the order given, on one machine, so that the
#                    default rule (mxfp8) and the rule recommended for training (mxfp8-lsum) are
#                    compared on the same card and machine start.
# Usage (device, repo root; carry .whl for the cudnn-fp8 peer):
#   bash dev/sessions/fifty-seventh.sh suite ratios mxfp8 mxfp8-lsum
# RATIO_ARGS: more ratios.py arguments (e.g. --deterministic; sixty-fifth session), TAG: a suffix for
# the output files.
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16 PYTHONUNBUFFERED=1
. dev/device_lib.sh
dev_setup
rc=0
recipes=()
for a in "$@"; do case $a in suite | ratios | sanitize) ;; *) recipes+=("$a") ;; esac; done
if [[ " $* " == *" suite "* ]]; then
  dev_gpu_suite || rc=1
  echo "suite: rc=$rc ($(dev_elapsed) s)"
fi
if [[ " $* " == *" sanitize "* ]]; then
  for tool in memcheck racecheck; do
    for t in quantize api scale_shift; do
      FLAMIA_TEST_SMALL=1 timeout ${SAN_TIMEOUT:-80} compute-sanitizer --tool $tool --error-exitcode 9 \
        $B/tests/gpu/test_gpu_$t > "$OUT/sanitize-$tool-$t.log" 2>&1
      echo "compute-sanitizer $tool test_gpu_$t: rc=$? ($(dev_elapsed) s) $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' \
        "$OUT/sanitize-$tool-$t.log" | sort | uniq -c | tr '\n' ' ')"
    done
  done
fi
if [[ " $* " == *" ratios "* ]]; then
  dev_cudnn_frontend
  export FLAMIA_LIB=$PWD/$B/kernels/libflamia.so
  # the logu-* layouts come from the C driver's file
  $B/experiments/latency/latency --workloads logu-16k,logu-64k --recipes mxfp8 --passes fwd \
    --verify-rows 0 --out "$OUT/c_layouts.h5" > "$OUT/c_layouts.log" 2>&1 || echo "latency (layouts) failed"
  for r in "${recipes[@]}"; do
    timeout ${RATIO_TIMEOUT:-170} python3 experiments/latency/ratios.py --recipe $r --layouts "$OUT/c_layouts.h5" \
      --out "$OUT/ratios_$r$TAG.h5" --rounds ${ROUNDS:-3} $RATIO_ARGS \
      --workloads ${WL:-16x4096,4x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024} \
      > "$OUT/ratios_$r$TAG.log" 2>&1 || rc=1
    echo "ratios $r$TAG: ($(dev_elapsed) s)"
    grep -E "^issue|^\| 16x4096 \| " "$OUT/ratios_$r$TAG.log" | cut -c1-230
  done
fi
echo "all: rc=$rc ($(dev_elapsed) s)"
exit $rc
