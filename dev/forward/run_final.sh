#!/bin/bash
# One device call: correctness (vs flamia_ref_forward) then timing. Strict per-test timeouts.
B=dev/forward/bin/check_forward
t() { timeout ${TMO:-25} "$@" 2>&1 | tee -a ${OUT:-/tmp}/final_log.txt; }
t $B bf16  rand3000:1 4 2 1 full
t $B mxfp8 rand3000:1 4 2 1 full
t $B exact rand2500:5 6 2 1 full
t $B bf16  rand2000:2 2 1 0 full
t $B mxfp8 4x1024 2 2 1 full
SPREAD=0 t $B mxfp8 8x1024 4 2 1 full
TMO=40 t $B mxfp8 16x4096 16 16 1 sample300 30
USE_TMA=0 TMO=40 t $B mxfp8 16x4096 16 16 1 none 30
TMO=40 t $B mxfp8 4x4096  16 16 1 none 30
TMO=40 t $B exact 16x4096 16 16 1 none 30
TMO=40 t $B bf16  16x4096 16 16 1 sample200 30
