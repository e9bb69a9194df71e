#!/bin/sh
# variant_src.sh VARIANT KERNEL OUTDIR - prints the path of a dev variant's source (or
# sources, one a line). A .cu file is its own source. A .patch is a preamble (what the
# variant is, a "base: COMMIT" line) followed by unified-diff hunks, or none when the
# variant is KERNEL as of that commit.
#   KERNEL one file (e.g. kernels/sm90/quantize.cu): KERNEL at COMMIT, patched, is written
#     to OUTDIR/VARIANT.cu.
#   KERNEL several files (space-separated: a kernel split into files, e.g. the backward):
#     each file the patch touches (its "+++ b/PATH" lines; every file of KERNEL when it
#     has no hunks) is written at COMMIT, patched, to OUTDIR/VARIANT/PATH, the repository's
#     tree, so that a patched header is found first by the patched files that include it.
# variant_src.sh --base VARIANT prints a patch's base commit.
# Run from the repo root (git show needs the repository).
set -e
base_of() {
  b=$(sed -n 's/^base: *//p' "$1" | head -1)
  [ -n "$b" ] || { echo "variant_src.sh: $1 has no 'base: COMMIT' line" >&2; exit 1; }
  echo "$b"
}
if [ "$1" = --base ]; then base_of "$2"; exit 0; fi
v=$1 kernel=$2 out=$3
case "$v" in *.patch) ;; *) echo "$v"; exit 0 ;; esac
base=$(base_of "$v")
case "$kernel" in
*" "*)
  dir=$out/$(basename "$v" .patch)
  rm -rf "$dir"
  files=$(sed -n 's|^+++ b/\([^	 ]*\).*|\1|p' "$v")
  for f in ${files:-$kernel}; do
    mkdir -p "$dir/$(dirname "$f")"
    git show "$base:$f" > "$dir/$f"
  done
  if grep -q '^@@' "$v"; then patch -s -p1 -d "$dir" < "$v"; fi
  for f in ${files:-$kernel}; do echo "$dir/$f"; done ;;
*)
  src=$out/$(basename "$v" .patch).cu
  git show "$base:$kernel" > "$src"
  if grep -q '^@@' "$v"; then patch -s "$src" < "$v"; fi
  echo "$src" ;;
esac
