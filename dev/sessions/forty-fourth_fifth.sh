#!/bin/bash
# Forty-fourth session, last device command (~3 min, carried build/): (1) packed_memory's
# out-of-memory path: a layout whose padded form cannot fit on the GPU (2001 documents padded to
# 32,768 tokens, ~2 TB) must come back as padded_out_of_memory = 1 with the packed side measured;
# (2) ours and cuDNN alternated at 1976308's kernels (dev/sessions/forty-first_ratio.sh, 3 rounds).
# Usage (device, repo root): bash dev/sessions/forty-fourth_fifth.sh
set -u
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
mkdir -p "$O"
echo "== (1) padded out of memory"
build/experiments/packed_memory --backend cuda --workloads 32768+2000x32 --recipes mxfp8 --iters 2 --warmup 1 \
  --out /tmp/oom.h5 --quiet; echo "rc=$?"
rm -rf /tmp/oomt && build/experiments/h5totsv /tmp/oom.h5 /tmp/oomt >/dev/null && cut -f1-2,5-16 /tmp/oomt/packed_memory.tsv
echo "== (2) ratio"
ROUNDS=3 WL=16x4096,16x1024,gqa-16x1024 PASSES=fwd,fwd+quant,train bash dev/sessions/forty-first_ratio.sh 2>&1 | tail -30
