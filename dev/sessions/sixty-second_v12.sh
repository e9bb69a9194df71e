#!/bin/bash
# Sixty-second session: the sixty-first session's queued v12 probe (what holds quantize at ~74 %
# of bandwidth: the transposes' 32-byte pieces?) and, in the same command, whether the backward
# could read v12b's blocked layout by TMA (dev/quantize/tma_blocked_check.cu: byte-exact landing
# of a 4-D map with a 32-byte inner box under the 128-byte swizzle, and both maps' read rates).
# Here first: bash dev/carry_bins.sh; bash dev/variant_lib_here.sh dev/quantize/v12a_probe_tr_skip.patch
# build-v12a (the same for v12b); nvcc ... -o build-carry/tma_blocked_check (see the .cu's header).
# Device (carry build-carry, build-v12a, build-v12b): bash dev/sessions/sixty-second_v12.sh
OUT=${OUT:-/tmp/flamia-out}; mkdir -p $OUT
bash dev/sessions/sixty-first_v12_probe.sh 2>&1 | tee $OUT/v12_probe.log
echo "== TMA: blocked transposed layout (16 heads, t_vpad 65536 = 16x4096's Q^T)"
./build-carry/tma_blocked_check 65536 2>&1 | tee $OUT/tma_blocked_check.log
echo "tma_blocked_check rc=${PIPESTATUS[0]}"
