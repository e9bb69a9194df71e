#!/bin/bash
# Eighteenth session: the experiment drivers' --backend cuda path on the H200 (its first
# run on a GPU). Builds the drivers with CUDA, then runs
#   accuracy            the pipeline's CPU arguments (scale 1/16, 8 heads, K outliers):
#                       the sm90 kernels on the same inputs as the shipped CPU table
#   accuracy_full       paper sizes (scale 1, 16 heads, plain randn) on the workloads whose
#                       FP64 reference fits a few minutes on 16 cores
#   accuracy_paper      the paper's setting: one 512-token document, plain randn, 16 heads
#   leak_probe          Table B's arguments (8 heads, 6 trials, plain randn)
#   leak_probe_outliers Table B's outlier-K column
# with the arguments of pipelines/config.yaml, each into $OUT/<name>.h5 (logs beside it).
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/eighteenth_drivers.sh > $OUT/drivers.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
meson setup $B -Dcuda=enabled -Dexperiments=enabled --buildtype=release >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
ninja -C $B experiments/accuracy experiments/leak_probe experiments/h5totsv >>"$OUT/build.log" 2>&1 \
  || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok ($(( $(date +%s) - t0 )) s)"
run() {  # name timeout driver args...
  local name=$1 lim=$2 drv=$3; shift 3
  local t=$(date +%s)
  timeout "$lim" $B/experiments/$drv --backend cuda --seed 1 --out "$OUT/$name.h5" "$@" 2>"$OUT/$name.log"
  echo "$name: rc=$? $(( $(date +%s) - t )) s"; tail -3 "$OUT/$name.log"
}
run accuracy 100 accuracy --scale 0.0625 --heads 8
run accuracy_paper 40 accuracy --scale 1 --heads 16 --outliers 0 --workloads 1x512
run leak_probe 90 leak_probe --scale 1 --heads 8 --trials 6 --outliers 0
run leak_probe_outliers 90 leak_probe --scale 1 --heads 8 --trials 6 --outliers 4 --outlier-scale 20 --no-cross
left=$(( 560 - ($(date +%s) - t0) )); [ $left -gt 30 ] || left=30  # stay inside the 600 s command
run accuracy_full $left accuracy --scale 1 --heads 16 --outliers 0 --workloads 16x1024,gqa-16x1024,logu-16k,4x4096,8192+32x256
for f in accuracy accuracy_paper accuracy_full; do
  [ -f "$OUT/$f.h5" ] || continue
  $B/experiments/h5totsv "$OUT/$f.h5" /tmp/tsv-$f >/dev/null && echo "== $f" && cut -f1,2,3,5,7-14 /tmp/tsv-$f/accuracy.tsv
done
for f in leak_probe leak_probe_outliers; do
  [ -f "$OUT/$f.h5" ] || continue
  $B/experiments/h5totsv "$OUT/$f.h5" /tmp/tsv-$f >/dev/null && echo "== $f" && cat /tmp/tsv-$f/summary.tsv
  [ -f /tmp/tsv-$f/cross_doc.tsv ] && cat /tmp/tsv-$f/cross_doc.tsv
done
echo "total $(( $(date +%s) - t0 )) s"
