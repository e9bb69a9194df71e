#!/bin/bash
# Forty-ninth session: the launch order's threshold raised from 2048 to 3072 tokens
# (backward.cu kOrderMaxSeqlen, after dev/sessions/forty-ninth_threshold.sh). Builds, runs
# test_gpu_backward (its rule check now says 3072; the 3100 + 1 + 300 GQA case runs in the grid's
# order), then ours alone with the default rule on both sides of the threshold.
# Usage (device, repo root): bash dev/sessions/forty-ninth_threshold_check.sh   (~3 minutes)
export PATH=/usr/local/cuda/bin:$PATH OMP_NUM_THREADS=16
. dev/device_lib.sh
O=$OUT
dev_setup
s=$SECONDS
meson test -C build-device gpu_backward --num-processes 1 > "$O/test.log" 2>&1
echo "test_gpu_backward: rc=$? ($((SECONDS - s)) s)"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:" "$O/test.log" | cut -c1-100
grep -hE "launch order|FAIL|3100" build-device/meson-logs/testlog.txt | cut -c1-220 | sort | uniq -c | head -20
FLAMIA_LIB=build-device/kernels/libflamia.so PYTHONUNBUFFERED=1 timeout 150 \
  python3 experiments/latency/ratios.py --systems "" --workloads gqa-5x3072,gqa-4x3584,gqa-4x4096 --rounds 1 \
  --out "$O/default.h5" > "$O/default.log" 2>&1
echo "ratios (default rule): rc=$?"
grep -E "^\| gqa.*\| (bwd|train) " "$O/default.log"
cp build-device/meson-logs/testlog.txt "$O/testlog.txt"
cd "$O" && tar czf logs.tgz *.log *.txt *.h5 && rm -f *.log *.txt *.h5
