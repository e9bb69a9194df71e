#!/bin/bash
# The O sum's bias by document position (check_forward VPAT=ones: V = 1, every row's exact O is
# 1) for each harness build named, on one 2x8192 pack and one random pack of 20,000 tokens.
# Usage (device, repo root): bash dev/forward/bias_by_position.sh check_forward [check_vN_... ...]
B=dev/forward/bin
for b in "$@"; do
  VPAT=ones timeout 60 $B/$b mxfp8 2x8192 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/$b: /"
  VPAT=ones timeout 60 $B/$b mxfp8 rand20000:3 4 4 1 none 2>&1 | grep "VPAT=ones" | sed "s/^/$b rand20000:3: /"
done
