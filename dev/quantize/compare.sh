#!/bin/bash
# Device comparison of quantize harness builds (dev/quantize/bin/check_*), the first the base:
# every workspace byte of each against the host quantization (`check`, the full battery),
# then the recipes timed on WORKLOADS (median of 30), the builds alternated, twice.
# HIDE: a grep -E pattern of timing lines to leave out (e.g. bf16).
# Build here first (sh dev/quantize/build.sh dev/quantize/vN_*.patch), carry dev/quantize/bin.
# Usage (device, repo root): [WORKLOADS=16x4096,...] [HIDE=bf16] bash dev/quantize/compare.sh BASE NEW [...]
Q=dev/quantize/bin
WORKLOADS=${WORKLOADS:-16x4096,4x4096,logu-16k,logu-64k}
for b in "$@"; do
  timeout 200 $Q/$b check 2>&1 | tail -2 | sed "s/^/$b: /"
done
for rep in 1 2; do
  for b in "$@"; do
    timeout 90 $Q/$b time "$WORKLOADS" 30 2>&1 | grep "^time" | grep -vE "${HIDE:-^$}" | sed "s/^/$b: /"
  done
done
