#!/bin/bash
# Forty-seventh session (prepared; no device was lent to run it): dev/backward/v112_lpt_order.patch,
# the backward main kernel's CTAs longest first for GQA (bwd_order in backward_prep.cu). Builds
# the tree as it is and a copy with the patch applied, runs the gpu suite on the patched build
# (test_gpu_backward checks the order table against a host sort on every FP8 GQA case;
# test_gpu_api runs it inside a captured training call) and memcheck / racecheck on its
# test_gpu_api, then times the backward and the training call alternated (dev/latency_ab.sh):
# the tree's build, the patch with the order for GQA (its default), and for every layout
# (FLAMIA_SM90_BWD_ORDER=2). Prediction (dev/tail_model.py's list scheduling, forty-seventh
# session): gqa-16x1024's main kernel -17 % (backward ~0.86 -> ~0.75 ms), MHA within 1 %.
# Usage (device, repo root): bash dev/sessions/forty-seventh_order.sh   (~8 minutes)
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
O=${OUT:-/tmp/flamia-out}
V=/tmp/v112
s=$SECONDS
rm -rf $V && mkdir -p $V
tar --exclude='./build*' --exclude=./.git --exclude=./data/runs -cf - . | tar -xf - -C $V
(cd $V && patch -p1 -s < dev/backward/v112_lpt_order.patch) || { echo "patch does not apply"; exit 1; }
build() { # the tree at $1 into $1/build-device
  (cd "$1" && meson setup build-device -Dcuda=enabled -Dexperiments=enabled && ninja -C build-device) > "$O/build-$2.log" 2>&1 ||
    { echo "build failed in $1"; tail -20 "$O/build-$2.log"; exit 1; }
}
build . tree
build $V v112
echo "builds: $((SECONDS - s)) s"
s=$SECONDS
(cd $V && meson test -C build-device --suite gpu --num-processes 1) > "$O/gpu_suite_v112.log" 2>&1
echo "gpu suite (v112): rc=$? ($((SECONDS - s)) s)"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:" "$O/gpu_suite_v112.log" | cut -c1-100
grep -hE "launch order|FAIL" $V/build-device/meson-logs/testlog.txt | cut -c1-150 | sort | uniq -c | head -20
for tool in memcheck racecheck; do
  FLAMIA_TEST_SMALL=1 compute-sanitizer --tool $tool --error-exitcode 9 $V/build-device/tests/gpu/test_gpu_api \
    > "$O/sanitize-$tool.log" 2>&1
  echo "compute-sanitizer $tool test_gpu_api (v112): rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$O/sanitize-$tool.log" | head -2 | tr '\n' ' ')"
done
CONFIGS="tree=LIB=build-device/kernels v112=LIB=$V/build-device/kernels all=LIB=$V/build-device/kernels,FLAMIA_SM90_BWD_ORDER=2" \
  WORKLOADS="${WL:-gqa-16x1024 16x1024 16x4096 8192+224x256}" PASSES=bwd,train ROUNDS=${ROUNDS:-2} \
  DRIVER=build-device/experiments/latency/latency bash dev/latency_ab.sh 2>&1 | tail -40
# GQA layouts the latency driver has no workload for (ratios.py takes gqa-<spec>): the model
# predicts gqa-4x4096 (16 query heads over 4) +1.5 % longest first, gqa-16x1024 -17 %; ours alone,
# the patched library with the order off and on, alternated by process
for r in 1 2; do
  for mode in 0 1; do
    FLAMIA_LIB=$V/build-device/kernels/libflamia.so FLAMIA_SM90_BWD_ORDER=$mode PYTHONUNBUFFERED=1 timeout 120 \
      python3 experiments/latency/ratios.py --systems "" --workloads gqa-4x4096,gqa-16x1024 --rounds 1 \
      --out "/tmp/gqa_${mode}_$r.h5" 2>&1 | grep -E "^\| gqa" | sed "s/^/order=$mode round $r: /"
  done
done
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
