#!/bin/bash
# Prepared in the twenty-fifth session for the next one (~4 min with dev/forward/bin carried,
# built here by `git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v25_tma_k.patch`):
# dev/forward/v25_tma_k.patch, the FP8 forward's K tiles by one TMA box through the
# permuted-stride 5-D map (prediction in the patch's header). Exact by design: the harness's
# reference checks (PASS) and the O / lse / frame bytes against the head's (dev/forward/
# compare.sh: "same bytes" expected on every layout, the SPLIT launch's included), then the
# forward alone timed, builds alternated, two rounds.
# Usage (device, repo root): bash dev/sessions/twentysixth_fwd.sh > $OUT/fwd.log 2>&1
# VARIANT (default v25_tma_k) and WORKLOADS pick another patch and timing set (twentysixth_fwd2.sh).
set -u
B=dev/forward/bin
V=${VARIANT:-v25_tma_k}
if [ ! -x $B/check_$V ] || [ ! -x $B/check_fwd_head ]; then
  mkdir -p $B/obj && git show HEAD:kernels/sm90/forward.cu > $B/obj/fwd_head.cu 2>/dev/null || cp kernels/sm90/forward.cu $B/obj/fwd_head.cu
  sh dev/forward/build.sh $B/obj/fwd_head.cu dev/forward/$V.patch > /tmp/fwd_build.log 2>&1 || { tail -20 /tmp/fwd_build.log; exit 1; }
fi
WORKLOADS="${WORKLOADS:-16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|rand65536:5 16 16 1}" bash dev/forward/compare.sh \
  check_fwd_head check_$V
