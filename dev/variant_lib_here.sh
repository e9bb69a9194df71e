#!/bin/bash
# dev/variant_lib_here.sh PATCH DIR [TARGET...] - libflamia.so of HEAD with PATCH applied, built on
# this machine (nvcc, no GPU) in a git worktree (/tmp/flamia-variant-wt, its build folder kept
# between calls, so a second variant rebuilds only what its patch touches), copied to
# DIR/libflamia.so (DIR ignored by git: build-*), and each further ninja TARGET (a patched test
# program, e.g. tests/gpu/test_gpu_quantize) to DIR/ by its file name. Carry DIR with
# dev/carry_bins.sh's build-carry/ and put it first on LD_LIBRARY_PATH on the device (the programs
# too: their RUNPATH does not reach DIR); dev_variant_lib (dev/device_lib.sh) takes a carried DIR as is.
# Usage (repo root): bash dev/variant_lib_here.sh dev/quantize/v12a_probe_tr_skip.patch build-v12a
set -euo pipefail
patch=$(realpath "$1") patch_arg=$1 dir=$2 wt=/tmp/flamia-variant-wt
shift 2
export PATH=/usr/local/cuda/bin:$PATH
[ -d $wt ] || git worktree add --detach $wt HEAD >/dev/null
(cd $wt && git checkout -q -f --detach "$(git -C "$OLDPWD" rev-parse HEAD)" && git apply "$patch")
# configure the worktree's own sources (meson's source dir is the cwd when only a build dir is
# given: before 2026-12-06 this built /work/main's unpatched sources, and v12a/b/c were the base)
grep -qs "$wt/kernels" $wt/build/build.ninja || { rm -rf $wt/build
  meson setup $wt/build $wt -Dcuda=enabled --buildtype=release >/tmp/variant_lib_here.log 2>&1; }
ninja -C $wt/build kernels/libflamia.so "$@" >>/tmp/variant_lib_here.log 2>&1 ||
  { grep -E "error|FAILED" -A3 /tmp/variant_lib_here.log | head -20; exit 1; }
mkdir -p "$dir" && cp $wt/build/kernels/libflamia.so "$dir/"
for t in "$@"; do cp "$wt/build/$t" "$dir/"; done
(cd $wt && git checkout -q -f)
echo "$dir: libflamia.so${*:+ $*}, HEAD $(git rev-parse --short HEAD) + $patch_arg"
