#!/bin/bash
# Forty-sixth session, second device command: the build through generated CUDA units
# (kernels/sm90/cuda_unit.py, 25749c4) made from scratch on the device's meson, the gpu suite
# through meson there, and the header-change rebuild (an edited .cuh must rebuild every kernel
# object). Usage (device, repo root): bash dev/sessions/forty-sixth_second.sh
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/flamia-out}
meson --version
B=build-unit-check
rm -rf $B
s=$SECONDS
meson setup $B > "$O/setup.log" 2>&1 || { tail -20 "$O/setup.log"; exit 1; }
ninja -C $B > "$O/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$O/build.log" | head -40; exit 1; }
echo "setup + build: $((SECONDS - s)) s, $(grep -c 'Compiling Cuda' "$O/build.log") CUDA objects"
head -3 $B/kernels/sm90/forward.unit.cu
touch kernels/sm90/sm90_exp2.cuh
echo "after touching sm90_exp2.cuh, CUDA objects to rebuild: $(ninja -C $B -n | grep -c 'Compiling Cuda')"
s=$SECONDS
meson test -C $B --suite gpu --num-processes 1 > "$O/gpu_suite.log" 2>&1; echo "meson test --suite gpu: rc=$? ($((SECONDS - s)) s)"
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" "$O/gpu_suite.log" | cut -c1-120
