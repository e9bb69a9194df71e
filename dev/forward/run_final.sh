#!/bin/bash
# One short device call: correctness (vs flamia_ref_forward) then timing. Strict per-test timeouts.
B=dev/forward/bin/check_forward
t() { timeout ${TMO:-20} "$@" 2>&1 | tee -a ${OUT:-/tmp}/final_log.txt; }
t $B bf16  rand3000:1 4 2 1 full
t $B mxfp8 rand3000:1 4 2 1 full
t $B exact rand2000:2 4 4 0 full
t $B mxfp8 4x1024 2 2 1 full
TMO=30 t $B mxfp8 16x4096 16 16 1 sample200 20
TMO=30 t $B bf16  16x4096 16 16 1 sample100 20
TMO=30 t $B mxfp8 4x4096  16 16 1 none 20
