#!/bin/bash
# bitcheck.sh - the CPU reference of this tree against the one of an earlier commit, bit for
# bit: every preset's forward / backward outputs and statistics (compare_ref.c, 6 layouts:
# GQA, non-causal, head_dim 64 and 128, Hadamard, large logits) and the FP64 ground truth
# (compare_ref64.c). Used for the eighteenth session's speed-ups of attention_ref.c and
# attention_f64.c, which must not move a bit. Needs a built tree (build/kernels/libflamia.so).
# Usage: dev/ref/bitcheck.sh [BASE_COMMIT]   (default 16cfa9e, before the speed-ups)
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:-16cfa9e}
t=$(mktemp -d)
git show "$base:kernels/ref/attention_ref.c" |
  sed 's/flamia_ref_forward(/old_ref_forward(/g; s/flamia_ref_backward_ex(/old_ref_backward_ex(/g; s/flamia_ref_backward(/old_ref_backward(/g' >"$t/ref_old.c"
git show "$base:kernels/ref/attention_f64.c" |
  sed 's/flamia_ref64_forward/old_ref64_forward/; s/flamia_ref64_backward/old_ref64_backward/' >"$t/f64_old.c"
inc="-Ikernels/include -Ikernels/ref -Ikernels/formats"
cc -O3 -std=gnu11 $inc dev/ref/compare_ref.c "$t/ref_old.c" -Lbuild/kernels -lflamia -lm -lpthread -o "$t/compare_ref"
cc -O3 -std=gnu11 $inc dev/ref/compare_ref64.c "$t/f64_old.c" -Lbuild/kernels -lflamia -lm -lpthread -o "$t/compare_ref64"
LD_LIBRARY_PATH=build/kernels "$t/compare_ref"
LD_LIBRARY_PATH=build/kernels "$t/compare_ref64"
