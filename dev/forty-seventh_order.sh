#!/bin/bash
# Forty-seventh session: the backward main kernel's longest-first launch order (bwd_order,
# backward_prep.cu; used for GQA in the default dQ mode). Builds on the device, runs the gpu
# suite (test_gpu_backward checks the order table against a host sort on every FP8 GQA case;
# test_gpu_api runs it inside a captured training call) and memcheck / racecheck on
# test_gpu_api, then times the backward and the training call with the order off (the grid's
# own order), for GQA (the default) and for every layout, alternated (dev/latency_ab.sh).
# Usage (device, repo root): bash dev/forty-seventh_order.sh
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
O=${OUT:-/tmp/flamia-out}
B=build-device
s=$SECONDS
meson setup $B -Dcuda=enabled -Dexperiments=enabled > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
ninja -C $B >> "$O/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$O/build.log" | head -40; exit 1; }
echo "build: $((SECONDS - s)) s"
s=$SECONDS
meson test -C $B --suite gpu --num-processes 1 > "$O/gpu_suite.log" 2>&1; echo "gpu suite: rc=$? ($((SECONDS - s)) s)"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:" "$O/gpu_suite.log" | cut -c1-100
grep -hE "launch order|FAIL" $B/meson-logs/testlog.txt | cut -c1-150 | sort | uniq -c | head -20
for tool in memcheck racecheck; do
  FLAMIA_TEST_SMALL=1 compute-sanitizer --tool $tool --error-exitcode 9 $B/tests/gpu/test_gpu_api > "$O/sanitize-$tool.log" 2>&1
  echo "compute-sanitizer $tool test_gpu_api: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/sanitize-$tool.log" | head -2 | tr '\n' ' ')"
done
CONFIGS="grid=FLAMIA_SM90_BWD_ORDER=0 gqa= all=FLAMIA_SM90_BWD_ORDER=2" \
  WORKLOADS="${WL:-gqa-16x1024 16x1024 16x4096 8192+224x256}" PASSES=bwd,train ROUNDS=${ROUNDS:-2} \
  DRIVER=$B/experiments/latency/latency bash dev/latency_ab.sh 2>&1 | tail -40
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
