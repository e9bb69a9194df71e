#!/bin/bash
# device_all.sh - the GPU agenda in as few device commands as fit (a session has 30 minutes
# of device time, each command at most 10). Run from the repo root on the H200, e.g.
#   bash tools/device_all.sh bwd fwd tests        (first command, about 6 minutes)
#   bash tools/device_all.sh latency sanitize     (second command)
# With no argument it runs every step in order (longer than one command may run).
# Steps (each under its own timeout, logs under $OUT, a summary table last):
#   bwd       backward v3 correctness + timing   (dev/backward/run_device.sh all; bins carried or built)
#   fwd       forward v4/v5/v6 correctness + timing (dev/forward/run_next.sh; bins carried or built)
#   quant     quantize v4/v5 bit-exactness + timing (dev/quantize/run_next.sh; bins carried or built)
#   tests     meson gpu suite (builds build-device/ with meson there)
#   latency   ours + peers (incl. FlexAttention and the log-uniform layouts) -> HDF5
#   sanitize  compute-sanitizer memcheck + racecheck on small cases
#   sass      per kernel of libflamia: QGMMA / HGMMA counts (cuobjdump), into $OUT/sass_counts.txt
# Carry dev/forward/bin, dev/backward/bin and dev/quantize/bin (built here with dev/*/build.sh) to save minutes.
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
STEPS=${*:-bwd fwd tests latency sanitize}
export KEEP_LOGS=1 # device_run.sh leaves its logs in $OUT (this script appends to them)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
summary=()
step() { # name timeout_s command...
    local name=$1 tmo=$2; shift 2
    local t0=$SECONDS
    echo "=== $name" | tee -a "$OUT/device_all.log"
    timeout "$tmo" "$@" >>"$OUT/device_all.log" 2>&1
    local rc=$?
    summary+=("$(printf '%-9s rc=%-3d %4ds' "$name" "$rc" $((SECONDS - t0)))")
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$OUT/device_all.log"
for s in $STEPS; do
    case $s in
    bwd)
        [ -x dev/backward/bin/check_backward ] || step bwd-build 240 env FWD_HEAD=1 sh dev/backward/build.sh
        step bwd 120 bash dev/backward/run_device.sh all ;;
    fwd)
        [ -x dev/forward/bin/check_forward ] ||
            step fwd-build 300 sh dev/forward/build.sh dev/forward/v5_regs.patch dev/forward/v6_exact.patch
        step fwd 180 bash dev/forward/run_next.sh ;;
    quant) step quant 150 bash dev/quantize/run_next.sh ;;
    tests) step tests 420 bash experiments/latency/device_run.sh tests ;;
    latency) step latency 420 bash experiments/latency/device_run.sh ours peers flex ;;
    sanitize) step sanitize 300 bash experiments/latency/device_run.sh sanitize ;;
    sass) step sass 120 bash tools/sass_counts.sh build-device/kernels/libflamia.so "$OUT/sass_counts.txt" ;;
    *) echo "unknown step $s (bwd fwd quant tests latency sanitize sass)"; exit 2 ;;
    esac
done
echo "--- summary"; printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
# the device tool returns at most 8 files from $OUT: logs and text reports go back as one
# archive so that the HDF5 files and join.md are never the ones left out
( cd "$OUT" && logs=$(ls *.log *.txt 2>/dev/null) && [ -n "$logs" ] && tar czf logs.tgz $logs && rm -f $logs )
