#!/bin/bash
# Forty-fourth session, fourth device command (~3 min, carried build/ with build/old_lib and
# build/sel_lib): the masked-pair fix as one FMNMX on t (build/, kept) against the select on
# the exponential (build/sel_lib, 53c48d5) and no fix (build/old_lib, 02a6d15).
#  (1) test_gpu_forward, test_gpu_backward, test_gpu_consistency with the kept library;
#  (2) the forward's time, the three libraries alternated (dev/quantize_ab.sh, PASS=fwd).
# Usage (device, repo root): bash dev/sessions/forty-fourth_fourth.sh
set -u
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "== (1) tests with the kept library"
for t in test_gpu_forward test_gpu_backward test_gpu_consistency; do
  build/tests/gpu/$t >"$O/$t.log" 2>&1; echo "$t: rc=$?"
  grep -E "zero Q K V|^FAIL|mismatch" "$O/$t.log" | cut -c1-220 | head -6
done
echo "== (2) forward time"
PASS=fwd ROUNDS=3 VARIANTS=old=build/old_lib,select=build/sel_lib,fmnmx= WL=16x1024,64x1024,16x4096,8192+224x256 \
  bash dev/quantize_ab.sh
cd "$O" && tar czf logs.tgz *.log && rm -f *.log
