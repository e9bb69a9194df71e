#!/bin/bash
# Forty-third session, fourth device command (~3 min; carry build, with build/wb{16,24,48}_lib:
# the library of this commit built with FLAMIA_QUANT_WB_SLOTS = 16, 24, 48 instead of 8).
# The mxfp8 quantize kernel (one warp per (block, head slot)) runs 8 head slots a CTA, so each
# warp converts one pair per CTA and the CTA's cu_seqlens search is paid per 8 pairs. More slots
# a CTA amortize it (the sixth session measured 16: +3 points at 16x4096, -1..-5 on the
# log-uniform packs, before V^T became document-aligned). Predicted: 0..-5 % at 16x4096.
# (1) the quantize pass, this build against the three, 4 alternated rounds;
# (2) test_gpu_quantize with each variant library (every byte against the reference).
# Usage (device, repo root): bash dev/sessions/forty-third_fourth.sh > $OUT/fourth.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
ROUNDS=4 VARIANTS=wb8=,wb16=build/wb16_lib,wb24=build/wb24_lib,wb48=build/wb48_lib bash dev/quantize_ab.sh
echo "== (1) done at $(( $(date +%s) - t0 )) s"
for v in 16 24 48; do
  LD_LIBRARY_PATH=$PWD/build/wb${v}_lib:$LD_LIBRARY_PATH timeout 120 build/tests/gpu/test_gpu_quantize > /tmp/tq$v.log 2>&1
  echo "test_gpu_quantize wb$v: rc=$? $(tail -1 /tmp/tq$v.log)"
done
echo "== total $(( $(date +%s) - t0 )) s"
