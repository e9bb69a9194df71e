#!/bin/bash
# The GPU time of every launch of the kernels matching KERNEL_REGEX in one run of COMMAND
# (ncu gpu__time_duration, clocks as they are), a line each: LABEL kernel value unit.
# Environment (e.g. GPU_FWD=1 for the dev harnesses) passes through to COMMAND.
# Usage (device, repo root): bash dev/ncu_durations.sh LABEL KERNEL_REGEX COMMAND [ARGS...]
label=$1 regex=$2; shift 2
ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"$regex" "$@" 2>/dev/null |
  awk -v t="$label" '/Context [0-9]+, Stream/ { k = $0; sub(/^ +(void )?/, "", k); gsub(/(\(anonymous namespace\)|<unnamed>)::/, "", k); sub(/[<(].*/, "", k); sub(/.*::/, "", k) }
    /gpu__time_duration.sum/ { printf "%s %s %s %s\n", t, k, $(NF), $(NF-1) }'
