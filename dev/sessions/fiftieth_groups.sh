#!/bin/bash
# Fiftieth session (prepared, not run: no device was lent): GQA's longest-first launch order at
# groups of 2 and 8, then v114 (dev/backward/v114_group_thresholds.patch: the threshold per group)
# checked on the GPU. Part 1 is dev/sessions/forty-ninth_groups.sh with two more layouts (gqa8-8x2048,
# gqa2-2x8192): ours alone, order off (0) against on (2), alternated by process, 2 rounds, kernels
# as committed. dev/tail_model.py predicts, longest first against the grid's order (measured
# changes for groups of 4 came out 3-6 points smaller):
#   groups of 2 (gqa8-): -8.2 % at 16x1024, -1.4 % at 8x2048, -2.6 % at 5x3072
#   groups of 8 (gqa2-): -35.1 % at 16x1024, -31.6 % at 5x3072, -33.2 % at 4x4096, 0 at 2x8192
# Part 2 applies v114, rebuilds, runs test_gpu_backward (the rule against bwd_order_rule.h on every
# case; 3100 + 1 + 300 at GQA 8/1 longest first, 1500 + 1 + 300 at GQA 2/1 in the grid's order) and
# test_bwd_order_rule, and times the same layouts once with the default rule.
# Usage (device, repo root): bash dev/sessions/fiftieth_groups.sh   (~6 minutes)
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh
O=$OUT
WL=gqa8-16x1024,gqa8-8x2048,gqa8-5x3072,gqa2-16x1024,gqa2-5x3072,gqa2-4x4096,gqa2-2x8192
dev_setup
echo "== part 1: order off / on, kernels as committed ($(dev_elapsed) s)"
dev_order_ab "$WL" 90
echo "== part 2: v114 ($(dev_elapsed) s)"
git apply dev/backward/v114_group_thresholds.patch || { echo "v114 does not apply"; exit 1; }
dev_build || exit 1
s=$SECONDS
# ~15 s normally; the gpu tests' own 600-s limit cut to 120 s so a hang leaves time for the rest
meson test -C $B gpu_backward bwd_order_rule --num-processes 1 --timeout-multiplier 0.2 > "$O/v114_test.log" 2>&1
echo "test_gpu_backward, test_bwd_order_rule (v114): rc=$? ($((SECONDS - s)) s)"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:" "$O/v114_test.log" | cut -c1-100
grep -hE "launch order|FAIL|3100|1500|test_bwd_order_rule:" $B/meson-logs/testlog.txt | cut -c1-220 | sort | uniq -c | head -24
FLAMIA_LIB=$B/kernels/libflamia.so PYTHONUNBUFFERED=1 timeout 90 \
  python3 experiments/latency/ratios.py --systems "" --workloads "$WL" --rounds 1 \
  --out "$O/v114_default.h5" > "$O/v114_default.log" 2>&1
echo "ratios (v114's default rule): rc=$?"
grep -E "^\| gqa.*\| (bwd|train) " "$O/v114_default.log"
git apply -R dev/backward/v114_group_thresholds.patch
cp $B/meson-logs/testlog.txt "$O/v114_testlog.txt"
echo "done ($(dev_elapsed) s)"
cd "$O" && tar czf logs.tgz $(ls *.log *.txt *.h5 2>/dev/null); rm -f *.log *.txt *.h5
