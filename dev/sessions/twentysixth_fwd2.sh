#!/bin/bash
# Twenty-sixth session (~2 min with dev/forward/bin carried,
# built here by `git show HEAD:kernels/sm90/forward.cu > dev/forward/bin/obj/fwd_head.cu;
# sh dev/forward/build.sh dev/forward/bin/obj/fwd_head.cu dev/forward/v26_tma_q.patch`):
# dev/forward/v26_tma_q.patch, the FP8 forward's Q tile by one 2-D TMA box (prediction in the
# patch's header). Exact by design: the harness's
# reference checks (PASS) and the O / lse / frame bytes against the head's (dev/forward/
# compare.sh: "same bytes" expected on every layout, the SPLIT launch's included), then the
# forward alone timed, builds alternated, two rounds.
# Usage (device, repo root): bash dev/sessions/twentysixth_fwd2.sh > $OUT/fwd2.log 2>&1
exec env VARIANT=v26_tma_q WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1|64x1024 16 16 1|rand65536:5 16 16 1" \
  bash dev/sessions/twentysixth_fwd.sh
