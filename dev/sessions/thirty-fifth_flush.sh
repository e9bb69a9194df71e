#!/bin/bash
# Thirty-fifth session, third device command (~2.5 min; carry build and dev/forward/bin, both
# built here): v37 promoted (O's FP32 sum in shared memory, the whole accumulator added every
# flamia_fwd_o_flush key tiles, default 4; check_forward = the working tree, O_FLUSH sets the
# interval, 0 = the kernel before). 1. accuracy by interval: V = 1 (signed error of O by
# document position); V + 1 on one document of 3000 against the reference under the harness's
# bound (O rel. L2 <= 0.5 x ref-vs-FP64, gpu suite's kFwdRatio): without the sum it must fail;
# 2. the forward alone by interval against the head (median of 30, two rounds); 3. the new gpu
# case and compute-sanitizer racecheck of test_gpu_forward (osum shares the V staging and the
# epilogue tiles).
# Usage (device, repo root): bash dev/sessions/thirty-fifth_flush.sh > $OUT/flush.log 2>&1
export OMP_NUM_THREADS=16
B=dev/forward/bin
OUT=${OUT:-/tmp/flamia-out}
for f in 0 8 4 2 1; do
  O_FLUSH=$f VPAT=ones timeout 60 $B/check_forward mxfp8 2x8192 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/O_FLUSH=$f: /"
done
for f in 0 4; do
  for r in mxfp8 exact; do
    O_FLUSH=$f VMEAN=1 timeout 60 $B/check_forward $r 1x3000 2 1 1 full 2>&1 | tail -1 | cut -c1-200 | sed "s/^/VMEAN=1 O_FLUSH=$f: /"
  done
done
for w in "16x4096 16 16 1" "16x1024 16 16 1"; do
  for rep in 1 2; do
    timeout 40 $B/check_fwd_head mxfp8 $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/mxfp8 ${w%% *} head /"
    for f in 0 8 4; do
      O_FLUSH=$f timeout 40 $B/check_forward mxfp8 $w none 30 2>&1 | tail -1 | grep -o "| [0-9.]* ms.*" | sed "s/^/mxfp8 ${w%% *} O_FLUSH=$f /"
    done
  done
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
timeout 100 build/tests/gpu/test_gpu_forward > "$OUT/test_forward.log" 2>&1; echo "test_gpu_forward rc=$?"
grep -h "V mean\|FAIL" "$OUT"/test_forward.log | cut -c1-250
s=$(date +%s); FLAMIA_TEST_SMALL=1 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 \
  build/tests/gpu/test_gpu_forward > "$OUT/sanitize-racecheck.log" 2>&1
echo "compute-sanitizer racecheck test_gpu_forward: rc=$? ($(( $(date +%s) - s )) s)"; grep -h "SUMMARY" "$OUT/sanitize-racecheck.log" | tail -1
