#!/bin/bash
# Thirty-seventh session (~4 min; carry build/kernels/libflamia.so and build/experiments): after
# v43, the forward's ratio to cuDNN as a distribution (dev/sessions/thirty-first_ratio.sh, 6 rounds), with
# the SM clock and power sampled every 100 ms all along (nvidia-smi, $OUT/smi.csv), then the
# clock question Table A raised: Table A's latency run gave 1.688 ms at 16x4096 where the
# harness and osum_ablation gave 1.65 / 1.644 for the same kernel. Is a long run clocked down?
# The forward timed short (30 calls) and long (2,000 calls, ~3.4 s) back to back, twice.
# Usage (device, repo root): bash dev/sessions/thirty-seventh_ratio.sh > $OUT/ratio.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu \
  --format=csv -lms 100 > "$O/smi.csv" 2>&1 &
SMI=$!
ROUNDS=6 bash dev/sessions/thirty-first_ratio.sh
for r in 1 2; do
  for n in 30 2000; do
    echo "clock probe round $r, $n calls, starts $(date +%T.%N | cut -c1-12)"
    [ $n = 2000 ] && (sleep 2.5; nvidia-smi -q -d PERFORMANCE > "$O/perf_${r}.txt" 2>&1) &
    build/experiments/latency/latency --workloads 16x4096 --recipes mxfp8 --passes fwd --warmup 5 --iters $n \
      --pass-budget 100 --verify-rows 0 --quiet --out /tmp/clk_${r}_$n.h5 > /dev/null 2>&1
    build/experiments/h5totsv /tmp/clk_${r}_$n.h5 /tmp/clk_${r}_$n > /dev/null && \
      awk -F"\t" 'NR>1 {print "  " $1, $2, $3, "median", $9, "ms, min", $10, "ms, iters", $11}' /tmp/clk_${r}_$n/timings.tsv
  done
done
kill $SMI
# the SM clock and power over the whole command, by phase of ~10 s
awk -F", " 'NR>1 && $2+0 > 0 {n++; c+=$2; p+=$4; if ($2+0 < mn || mn == 0) mn = $2+0; if (n == 100) {print $1, "SM MHz mean", int(c/n), "min", mn, "power W", int(p/n), "temp", $6; n=0; c=0; p=0; mn=0}}' "$O/smi.csv"
