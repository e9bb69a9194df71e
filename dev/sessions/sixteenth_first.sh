#!/bin/bash
# Sixteenth session, first device command (~7 min): (1) the gpu suite of this tree (the
# training calls' head_dim refusal in test_gpu_api runs for the first time); (2) backward
# variants against the committed kernel in the dev harness: v32_key_fold (mxfp8's key
# factors folded into the query factors) and v33_turns (ping-pong turns inside a query tile):
# deterministic-mode bytes (v33 leaves those kernels alone), the default mode against the
# reference (v33's new synchronization and dQ staging), the backward's time; (3) racecheck on
# v33's default kernel, small layout.
# Build here first, then carry build and dev/backward/bin:
#   meson setup build -Dcuda=enabled -Dexperiments=enabled --buildtype=release && ninja -C build
#   sh dev/backward/build.sh dev/backward/v32_key_fold.patch dev/backward/v33_turns.patch
# Usage (device, repo root): bash dev/sessions/sixteenth_first.sh > $OUT/first.log 2>&1
export OMP_NUM_THREADS=16
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
timeout 240 meson test -C build --suite gpu --no-rebuild --print-errorlogs > /tmp/gpu_suite.log 2>&1
echo "gpu suite rc=$?"; grep -E "^ *[0-9]+/[0-9]+ |Ok:|Fail:" /tmp/gpu_suite.log
grep -E "head_dim|head dim" build/meson-logs/testlog.txt | head -4
KINDS="mxfp8 exact" TKINDS=mxfp8 LAYOUTS="rand3000:1 4 2 1|rand2000:3 8 2 1|3x1024 4 4 0" DEFAULT_CHECK=1 \
  WORKLOADS="512x128 16 16 1|64x1024 16 16 1|16x4096 16 16 1|4x4096 16 16 1|rand65536:5 16 16 1" \
  timeout 400 bash dev/backward/compare.sh check_backward check_v32_key_fold check_v33_turns
# a race moves dK / dV (per-CTA sums: the same bytes every run in the default mode too);
# layout with Hq = 2 Hkv: dQ is the dump's first half, dK and dV its second
for r in 1 2 3; do
  BWD_DUMP=/tmp/v33_$r.bin timeout 60 dev/backward/bin/check_v33_turns mxfp8 rand3000:1 4 2 1 full > /dev/null 2>&1
  s=$(stat -c%s /tmp/v33_$r.bin); echo "v33 default run $r: dK dV md5 $(tail -c $((s / 2)) /tmp/v33_$r.bin | md5sum | cut -c1-12)"
done
for k in mxfp8 exact; do
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 dev/backward/bin/check_v33_turns $k rand2000:3 8 2 1 full > /tmp/race_$k.log 2>&1
  echo "racecheck v33 $k: rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASS|FAIL" /tmp/race_$k.log | head -3
done
cp /tmp/gpu_suite.log /tmp/race_*.log build/meson-logs/testlog.txt ${OUT:-/tmp}/ 2>/dev/null
