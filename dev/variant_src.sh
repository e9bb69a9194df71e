#!/bin/sh
# variant_src.sh VARIANT KERNEL OUTDIR - prints the path of a dev variant's source. A .cu
# file is its own source. A .patch is a preamble (what the variant is, a "base: COMMIT"
# line) followed by unified-diff hunks, or none when the variant is KERNEL as of that
# commit: KERNEL (e.g. kernels/sm90/backward.cu) at COMMIT, patched, is written to OUTDIR.
# Run from the repo root (git show needs the repository).
set -e
v=$1 kernel=$2 out=$3
case "$v" in *.patch) ;; *) echo "$v"; exit 0 ;; esac
base=$(sed -n 's/^base: *//p' "$v" | head -1)
[ -n "$base" ] || { echo "variant_src.sh: $v has no 'base: COMMIT' line" >&2; exit 1; }
src=$out/$(basename "$v" .patch).cu
git show "$base:$kernel" > "$src"
if grep -q '^@@' "$v"; then patch -s "$src" < "$v"; fi
echo "$src"
