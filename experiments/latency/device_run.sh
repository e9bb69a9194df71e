#!/bin/bash
# device_run.sh - one full command for the lent GPU machine (run from the repo root):
# builds with meson there, runs the gpu test suite, the latency driver and peers.py,
# joins them; logs and HDF5 files under $OUT (the device tool's result folder).
#   experiments/latency/device_run.sh [tests] [ours] [peers] [flex]   (default: all but flex)
# Env: FLAMIA_GIT_COMMIT (stamped into the HDF5 files), LAT_ARGS, PEER_ARGS (extra options).
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
STEPS=${*:-tests ours peers}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
MESON="meson"; command -v meson >/dev/null || MESON="python3 -m mesonbuild.mesonmain"
B=build-device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/gpu.txt"
if [ ! -f $B/build.ninja ]; then
  $MESON setup $B -Dcuda=enabled -Dexperiments=enabled >"$OUT/setup.log" 2>&1 || { tail -40 "$OUT/setup.log"; exit 1; }
fi
ninja -C $B >"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -60; exit 1; }
echo "build ok"
rc=0
if has tests; then
  $MESON test -C $B --suite gpu --print-errorlogs --num-processes 1 >"$OUT/tests.log" 2>&1 || rc=1
  grep -E "^ *[0-9]+/[0-9]+ " "$OUT/tests.log"
  for t in $B/meson-logs/testlog.txt; do cp "$t" "$OUT/testlog.txt"; done
  grep -hE "^FAIL|leak probe|graph capture|e4m3 hardware|relL2" "$OUT/testlog.txt" | cut -c1-230 | head -60
fi
if has ours; then
  $B/experiments/latency/latency --out "$OUT/ours.h5" ${LAT_ARGS:-} 2>&1 | grep -v "^latency: .*eta" | tee "$OUT/ours.log" | tail -40
fi
if has peers || has flex; then
  SYS="cudnn-bf16,flash-bf16,varlen-bf16"; has flex && SYS="$SYS,flex-bf16"
  PYTHONUNBUFFERED=1 python3 experiments/latency/peers.py --layouts "$OUT/ours.h5" --out "$OUT/peers.h5" \
    --systems "$SYS" ${PEER_ARGS:-} >"$OUT/peers.log" 2>&1 || rc=1
  grep -vE "^\s+File|^Traceback" "$OUT/peers.log" | tail -45 | cut -c1-200
  python3 experiments/latency/join.py "$OUT/ours.h5" "$OUT/peers.h5" --recipe mxfp8 | tee "$OUT/join.md"
fi
exit $rc
