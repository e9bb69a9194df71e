#!/bin/bash
# Forty-eighth session: v112 promoted (the backward main kernel's CTAs longest first, bwd_order)
# with the ORDER kernels as their own template instantiations (the grid-order kernels' SASS is
# then identical to 4aa72f8's, checked on the CPU) and the default decided per call: GQA with
# documents of at most 2048 tokens (backward.cu use_order). Builds the tree, runs the gpu suite
# (test_gpu_backward checks the order table where the library says it used one) and memcheck /
# racecheck on test_gpu_api, then places the threshold: ours alone (ratios.py), the order off
# (FLAMIA_SM90_BWD_ORDER=0) and on (=2) alternated by process on GQA layouts from 256- to
# 8192-token documents and two packed ones. The forty-seventh session measured gqa-16x1024
# -8.5 % and gqa-4x4096 +4 % with the order on.
# Usage (device, repo root): bash dev/sessions/forty-eighth_order.sh   (~8 minutes)
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh # OUT, dev_setup (build-device; folded in after the run, which built the same with its own lines)
O=$OUT
dev_setup
s=$SECONDS
meson test -C build-device --suite gpu --num-processes 1 > "$O/gpu_suite.log" 2>&1
echo "gpu suite: rc=$? ($((SECONDS - s)) s)"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:" "$O/gpu_suite.log" | cut -c1-100
grep -hE "launch order|FAIL" build-device/meson-logs/testlog.txt | cut -c1-150 | sort | uniq -c | head -20
for tool in memcheck racecheck; do
  FLAMIA_TEST_SMALL=1 compute-sanitizer --tool $tool --error-exitcode 9 build-device/tests/gpu/test_gpu_api \
    > "$O/sanitize-$tool.log" 2>&1
  echo "compute-sanitizer $tool test_gpu_api: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/sanitize-$tool.log" | head -2 | tr '\n' ' ')"
done
WL=${WL:-gqa-64x256,gqa-32x512,gqa-16x1024,gqa-8x2048,gqa-4x4096,gqa-2x8192,gqa-8192+32x256,gqa-8192+224x256}
dev_order_ab "$WL"
cd "$O" && tar czf logs.tgz *.log *.h5 && rm -f *.log *.h5
