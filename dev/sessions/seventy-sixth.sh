#!/bin/bash
# Seventy-sixth session. Steps (default: items record; queued for the next session: both, on an H200):
#   items: dev/forward/item_sketch (carry dev/forward/bin after `sh dev/forward/item_sketch/build.sh`):
#     does giving each consumer warpgroup its own work items hide the forward's item boundary? Today's
#     arrangement (shared items, 3 stages, ping-pong), shared with 2 stages, shared free-running, own
#     items (a ring a warpgroup, 2 stages) with and without the ping-pong, today's again; items of 1..32
#     tiles (4,096-token documents' mix) and 1..8 (1,024).
#     Predicted (written before any run): today's skeleton 780-850 TFLOP/s at NT = 32 (the loop alone
#     read 921 in the seventy-first session's s256_sketch on an H100) and 600-700 at NT = 8; own items
#     with the ping-pong within +-3 % of today (the strict turns still make the partner wait through a
#     boundary); own items free-running +0..+8 % at NT = 8, -4..+4 % at NT = 32 (the real forward lost
#     3.8 % at 4,096 tokens without its ping-pong).
#     Rule: own items are worth building into forward.cu only if one of the two own variants beats
#     today's by >= 5 % at NT = 8 and >= 3 % at NT = 32 (the real kernel must then fit its O sums beside
#     two rings of 2 stages); else the arrangement is set aside.
#     Measured (H100, 43ffd45's binary, three rounds; dev/logs/seventy-sixth_item_sketch_h100.log): own items
#     -1 % at NT = 8 and within today's drift at NT = 32; the rule fails, set aside (perf-notes "Forward
#     kernel", seventy-sixth session).
#     Added after that run: a probe row, today's without the epilogue, and s256_sketch 32 16 after it (the
#     loop with one first tile alone per 32-tile item, ~the loop alone), to split the skeleton's boundary
#     (~9 % at NT = 32, ~27 % at NT = 8) into the epilogue and the rest. Predicted (before any run): without
#     the epilogue +2..+4 % at NT = 32 and +6..+12 % at NT = 8; s256's ping-pong row ~900-930 TFLOP/s.
#   record: on an H200 the default mode's acceptance ratios (the figures of record; the file becomes
#     data/measured/h200/ratios_gpu.h5 with git_commit set) and Table D's pair (dev/sessions/
#     sixty-ninth_queued.sh says where they go), then the whole gpu suite where 200 s are left (~160 s).
#     Carry build-carry and .whl; pass FLAMIA_GIT_COMMIT.
#     On an H100 the ratios only.
# Usage: [CALL_S=s] bash dev/sessions/seventy-sixth.sh [items] [record]
. dev/device_lib.sh
steps=${*:-items record}
CALL_S=${CALL_S:-570}
left() { echo $(( CALL_S - $(dev_elapsed) )); }
if [[ " $steps " == *" items "* ]]; then
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  for nt in 32 8; do
    timeout 60 dev/forward/bin/item_sketch $nt $(( nt == 32 ? 2 : 8 )) 2>&1 | tee -a $OUT/item_sketch.log
    echo "item_sketch $nt: rc=${PIPESTATUS[0]} ($(dev_elapsed) s)"
  done
  timeout 60 dev/forward/bin/s256_sketch 32 16 2>&1 | tee -a $OUT/item_sketch.log
  echo "s256_sketch 32 16: rc=${PIPESTATUS[0]} ($(dev_elapsed) s)"
fi
if [[ " $steps " == *" record "* ]]; then
  dev_carry
  export RATIO_TIMEOUT=$(( $(left) - 30 < 300 ? $(left) - 30 : 300 ))
  MODES=default bash dev/sessions/sixty-fifth_ratios.sh
  case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
    *H200*) if [ $(left) -gt 150 ]; then dev_table_d; else echo "no time left for Table D ($(left) s)"; fi
      # the whole gpu suite on the acceptance GPU (last there at d8dca16; the H100 ran it on these kernels)
      if [ $(left) -gt 200 ]; then dev_all_gpu_tests; else echo "no time left for the suite ($(left) s)"; fi ;;
  esac
fi
[ -d $OUT/logs ] && (cd $OUT && tar -czf logs.tgz logs && rm -rf logs)
echo "done ($(dev_elapsed) s)"
