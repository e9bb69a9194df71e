#!/bin/bash
# dev/carry_bins.sh [DIR] - the device programs built here (CPU machine, nvcc) gathered in DIR
# (default build-carry/, ignored by git) in the build tree's layout, so that a device command can
# run them without building there (~100-150 s of device time saved a machine start): the
# latency driver, the gpu test programs and libflamia.so. Their RUNPATH ($ORIGIN/../../kernels)
# finds DIR/kernels; a variant library put first on LD_LIBRARY_PATH replaces it. Debian 12's
# programs run on the device's Ubuntu 24.04 (same libhdf5_serial.so.103, newer glibc and
# libstdc++; checked in the sixty-first session). Carry DIR (~11 MB) and, on the device, set
# LD_LIBRARY_PATH to include /usr/local/cuda/lib64 (dev/device_lib.sh does).
# Usage (repo root): bash dev/carry_bins.sh [DIR]
set -euo pipefail
D=${1:-build-carry}
tools/test.sh cpu >/dev/null || { echo "build or cpu suite failed: tools/test.sh cpu"; exit 1; }
[ -f build/kernels/libflamia.so ] && [ -f build/tests/gpu/test_gpu_api ] ||
  { echo "build/ has no CUDA kernels (nvcc missing?)"; exit 1; }
rm -rf "$D" && mkdir -p "$D/kernels" "$D/tests/gpu" "$D/experiments/latency"
cp build/kernels/libflamia.so "$D/kernels/"
cp build/experiments/latency/latency "$D/experiments/latency/"
for t in build/tests/gpu/test_gpu_*; do [ -x "$t" ] && [ -f "$t" ] && cp "$t" "$D/tests/gpu/"; done
du -sh "$D"
