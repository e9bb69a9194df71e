#!/bin/bash
# Fifty-eighth session: what synccheck reported on v115's writer + n64 build (1,376 / 1,664 errors in
# fifty-eighth.sh, whose filter kept only the summary), and whether the shipped kernel (the dev
# harness at fe63a67, check_backward) is synccheck-clean on the same case. Carry
# dev/backward/bin/check_backward and check_v115_writer_n64_{wn64,n64,w}.
# Usage (device, repo root): bash dev/sessions/fifty-eighth_synccheck.sh > $OUT/synccheck.log 2>&1
export OMP_NUM_THREADS=16
B=dev/backward/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
compute-sanitizer --version | tail -1
for b in check_backward check_v115_writer_n64_n64 check_v115_writer_n64_w check_v115_writer_n64_wn64; do
  for k in mxfp8 exact; do
    echo "== synccheck $k $b"
    timeout 150 compute-sanitizer --tool synccheck --print-limit 3 $B/$b $k rand700:3 4 2 1 full 2>&1 |
      grep -vE "^mxfp8|^exact" | grep -E "ERROR|Barrier|barrier|at |by thread|Invalid|Divergent|SUMMARY" | cut -c1-220 | head -14
  done
done
