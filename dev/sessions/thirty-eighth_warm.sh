#!/bin/bash
# Thirty-eighth session (~3 min; carry build/kernels/libflamia.so and build/experiments): why
# Table A's forward (one latency process per workload, after the gpu suite and sanitizers, quantize
# timed and 256 rows verified first) reads 3-4 % slower than the same kernel in the alternated
# ratio rounds (fresh machine, --verify-rows 0). The 16x4096 mxfp8 forward timed in both
# configurations on the cold GPU, after ~30 s of sustained forward calls (the GPU hot), and after
# 20 s idle, with the SM clock, power and temperature sampled every 100 ms ($OUT/smi.csv).
# Usage (device, repo root): bash dev/sessions/thirty-eighth_warm.sh > $OUT/warm.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
L=build/experiments/latency/latency
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > "$O/smi.csv" 2>&1 &
SMI=$!
run() { # run TAG ARGS...: one latency process, its forward median and the GPU during it
  local tag=$1; shift
  local t0 t1; t0=$(date +%H:%M:%S.%N | cut -c1-12)
  $L --workloads 16x4096 --out /tmp/w.h5 --quiet "$@" > /tmp/w.log 2>&1 || tail -3 /tmp/w.log
  t1=$(date +%H:%M:%S.%N | cut -c1-12)
  build/experiments/h5totsv /tmp/w.h5 /tmp/w > /dev/null
  local ms; ms=$(awk -F"\t" 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
    $c["pass"] == "fwd" && $c["system"] == "flamia-mxfp8" {printf "%.3f ms (min %.3f, n %d)", $c["ms"], $c["ms_min"], $c["iters"]}' /tmp/w/timings.tsv)
  awk -F", " -v a="$t0" -v b="$t1" -v tag="$tag" -v ms="$ms" '{split($1, d, " "); t = d[2]}
    t >= a && t <= b && $2+0 > 0 {n++; c += $2; p += $3; tp = $4; if (mn == 0 || $2+0 < mn) mn = $2+0}
    END {printf "%-34s fwd %s | SM MHz mean %d min %d, W %d, temp %s C\n", tag, ms, n ? c/n : 0, mn, n ? p/n : 0, tp}' "$O/smi.csv"
}
short="--recipes mxfp8 --passes fwd --warmup 5 --iters 30 --verify-rows 0"  # the ratio rounds' call
tablea="--recipes mxfp8 --passes quant,fwd --warmup 10 --iters 50"           # Table A's order (verify 256 rows)
full="--pass-budget 3"                                   # Table A's call itself (3 recipes, every pass)
for phase in cold hot idle20; do
  if [ $phase = hot ]; then
    echo "heating: 20,000 forward calls"; run "  (heating)" --recipes mxfp8 --passes fwd --warmup 0 --iters 20000 --pass-budget 0 --verify-rows 0
  fi
  [ $phase = idle20 ] && sleep 20
  for r in 1 2; do
    run "$phase ratio-style r$r" $short
    run "$phase TableA-style r$r" $tablea
  done
  [ $phase = idle20 ] || run "$phase TableA-call" $full
done
kill $SMI
