#!/bin/bash
# A forward experiment for a coming session (~3 min with the binaries carried, ~5 without):
# dev/forward/v23_softmax_parts.patch, timing-only probes of the forward's softmax stream
# (the stream is the forward's bound, ninth session; fewer instructions bought nothing, so it
# is latency-bound: which of its parts are on the path?). Builds against the working tree's
# kernel as the base (check_fwd_head) unless dev/forward/bin already holds them (carry
# dev/forward/bin, built here by the same lines). Outputs differ by design: the "bytes"
# lines of compare.sh say DIFFERS for every probe; the timing table at the end is the result.
# Predictions: in the patch's header.
# Usage (device, repo root): bash dev/sessions/twentyfirst_fwd.sh > $OUT/fwd.log 2>&1
set -u
B=dev/forward/bin
P=dev/forward/v23_softmax_parts.patch
probes="nomufu=FWD_PROBE=1 nomax=FWD_PROBE=2 nol=FWD_PROBE=3 nocvt=FWD_PROBE=4"
if [ ! -x $B/check_v23_softmax_parts_nocvt ] || [ ! -x $B/check_fwd_head ]; then
  mkdir -p $B/obj && cp kernels/sm90/forward.cu $B/obj/fwd_head.cu
  args=""; for v in $probes; do args="$args $P@$v"; done
  sh dev/forward/build.sh $B/obj/fwd_head.cu $args || exit 1
fi
CHECK=0 WORKLOADS="16x4096 16 16 1|4x4096 16 16 1|16x1024 16 16 1" bash dev/forward/compare.sh check_fwd_head \
  $(for v in $probes; do echo check_v23_softmax_parts_${v%%=*}; done)
