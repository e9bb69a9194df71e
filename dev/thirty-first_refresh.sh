#!/bin/bash
# Thirty-first session, the GPU tables brought to the current kernels (~5 min with build/
# carried, built here by `ninja -C build` with -Dcuda=enabled -Dexperiments=enabled): the GPU
# runs of pipelines/config.yaml with its arguments (accuracy_gpu, accuracy_paper_gpu,
# accuracy_full_gpu, leak_probe_gpu, leak_probe_outliers_gpu; the shipped files were measured at
# 16cfa9e / efaf36b, before the backward's v62..v86 and the forward's v25..v27), and Table D's
# deterministic dQ cost (measured at d23f72a, before them too): the backward alone, mxfp8 and
# mxfp8-exact, default and --deterministic, in one command. Each into $OUT/<name>.h5; copy them
# into data/measured/h200/.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/thirty-first_refresh.sh > $OUT/refresh.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
B=build
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
run() {  # name timeout driver args...
  local name=$1 lim=$2 drv=$3; shift 3
  local t=$(date +%s)
  timeout "$lim" $B/experiments/$drv --backend cuda --seed 1 --out "$OUT/$name.h5" "$@" 2>"/tmp/$name.log"
  echo "$name: rc=$? $(( $(date +%s) - t )) s"; tr '\r' '\n' < /tmp/$name.log | tail -2
}
run accuracy_gpu 100 accuracy --scale 0.0625 --heads 8
run accuracy_paper_gpu 40 accuracy --scale 1 --heads 16 --outliers 0 --workloads 1x512
run leak_probe_gpu 90 leak_probe --scale 1 --heads 8 --trials 6 --outliers 0
run leak_probe_outliers_gpu 90 leak_probe --scale 1 --heads 8 --trials 6 --outliers 4 --outlier-scale 20 --no-cross
run accuracy_full_gpu 240 accuracy --scale 1 --heads 16 --outliers 0 --oracle gpu
for det in "" --deterministic; do
  timeout 120 $B/experiments/latency/latency --workloads 4x4096,16x4096,8192+224x256,gqa-16x1024 --recipes mxfp8,mxfp8-exact \
    --passes bwd --warmup 3 --iters 20 --verify-rows 0 --quiet $det \
    --out "$OUT/deterministic_$([ -n "$det" ] && echo on || echo default).h5" 2>&1 | tail -1
done
for f in accuracy_gpu accuracy_paper_gpu accuracy_full_gpu; do
  [ -f "$OUT/$f.h5" ] && $B/experiments/h5totsv "$OUT/$f.h5" /tmp/tsv-$f >/dev/null && echo "== $f" && cut -f1-3,5,7-14 /tmp/tsv-$f/accuracy.tsv | head -40
done
for f in leak_probe_gpu leak_probe_outliers_gpu deterministic_default deterministic_on; do
  [ -f "$OUT/$f.h5" ] && $B/experiments/h5totsv "$OUT/$f.h5" /tmp/tsv-$f >/dev/null && echo "== $f" && cat /tmp/tsv-$f/*.tsv | head -30
done
echo "total $(( $(date +%s) - t0 )) s"
