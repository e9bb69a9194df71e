#!/bin/bash
# Thirty-first session, the GPU tables brought to the current kernels (~5 min with build/
# carried, built here by `ninja -C build` with -Dcuda=enabled -Dexperiments=enabled): the GPU
# runs of pipelines/config.yaml, their arguments read from it (accuracy_gpu, accuracy_paper_gpu,
# accuracy_full_gpu, leak_probe_gpu, leak_probe_outliers_gpu; the shipped files were measured at
# 16cfa9e / efaf36b, before the backward's v62..v86 and the forward's v25..v27), and Table D's
# deterministic dQ cost (measured at d23f72a, before them too): the backward alone, mxfp8 and
# mxfp8-exact, default and --deterministic, in one command. Each into $OUT/<name>.h5; copy them
# into data/measured/h200/. (The run logged in dev/logs/thirty-first_refresh.log spelled the same
# arguments out by hand; the deterministic pair then lacked the pipeline's `--backend cuda --scale
# 1.0 --seed 1`, which are the latency driver's defaults apart from the backend it takes anyway.)
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/thirty-first_refresh.sh > $OUT/refresh.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
B=build
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
# cfg KEY NAME: the experiment NAME's KEY (driver, binary, scale, args) from pipelines/config.yaml,
# so each run is the pipeline's (run.smk composes --backend cuda --scale S --seed 1 ARGS the same way)
cfg() {
  awk -v name="$2" -v key="$1" '
    /^experiments:/ { inexp = 1; next }
    inexp && /^[^ #]/ { inexp = 0 }
    inexp && /^  [A-Za-z_0-9]+:/ { cur = $1; sub(":", "", cur); next }
    inexp && cur == name && $1 == key ":" { v = $0; sub("^ *" key ": *", "", v); gsub("^\"|\"$", "", v); print v; exit }
  ' pipelines/config.yaml
}
run() {  # run NAME TIMEOUT_S
  local name=$1 lim=$2 t=$(date +%s) bin
  bin=$(cfg binary $name); bin=${bin:-experiments/$(cfg driver $name)}
  # shellcheck disable=SC2046 # the configured arguments split into words, as in run.smk
  timeout "$lim" $B/$bin --backend cuda --scale $(cfg scale $name) --seed 1 $(cfg args $name) --out "$OUT/$name.h5" 2>"/tmp/$name.log"
  echo "$name: rc=$? $(( $(date +%s) - t )) s"; tr '\r' '\n' < /tmp/$name.log | tail -2
}
run accuracy_gpu 100
run accuracy_paper_gpu 40
run leak_probe_gpu 90
run leak_probe_outliers_gpu 90
run accuracy_full_gpu 240
run deterministic_default 120
run deterministic_on 120
for f in accuracy_gpu accuracy_paper_gpu accuracy_full_gpu; do
  [ -f "$OUT/$f.h5" ] && $B/experiments/h5totsv "$OUT/$f.h5" /tmp/tsv-$f >/dev/null && echo "== $f" && cut -f1-3,5,7-14 /tmp/tsv-$f/accuracy.tsv | head -40
done
for f in leak_probe_gpu leak_probe_outliers_gpu deterministic_default deterministic_on; do
  [ -f "$OUT/$f.h5" ] && $B/experiments/h5totsv "$OUT/$f.h5" /tmp/tsv-$f >/dev/null && echo "== $f" && cat /tmp/tsv-$f/*.tsv | head -30
done
echo "total $(( $(date +%s) - t0 )) s"
