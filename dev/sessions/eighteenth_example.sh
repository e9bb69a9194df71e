#!/bin/bash
# Eighteenth session: examples/torch_attention.py on the H200 (libflamia through ctypes,
# PyTorch's stream and allocator): builds libflamia with CUDA, then runs the example for
# each GPU recipe on its default pack (odd lengths, a 1-token document, GQA 16/4) and on a
# 64x1024-token pack of 8 equal documents.
# Second run (after the first showed the backward refused from autograd's thread): the
# library binds the primary context in a thread that has none; test_gpu_api checks it.
# Usage (device, repo root): bash dev/sessions/eighteenth_example.sh > $OUT/example.log 2>&1
set -u
OUT=${OUT:-/tmp/flamia-out}
mkdir -p "$OUT"
B=build-device
t0=$(date +%s)
[ -f $B/build.ninja ] || meson setup $B -Dcuda=enabled -Dexperiments=disabled --buildtype=release >"$OUT/build.log" 2>&1 \
  || { tail -30 "$OUT/build.log"; exit 1; }
ninja -C $B kernels/libflamia.so tests/gpu/test_gpu_api >>"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build ok ($(( $(date +%s) - t0 )) s)"
rc=0
$B/tests/gpu/test_gpu_api > "$OUT/test_gpu_api.log" 2>&1 || rc=1
grep -E "new thread|graph capture|train_step |FAIL|ok$" "$OUT/test_gpu_api.log" | head -20
for r in mxfp8 mxfp8-exact bf16; do
  python3 examples/torch_attention.py --lib $B/kernels/libflamia.so --recipe $r || rc=1
done
python3 examples/torch_attention.py --lib $B/kernels/libflamia.so --recipe mxfp8 --lengths 1024,1024,1024,1024,1024,1024,1024,1024 --heads 16,16 || rc=1
echo "example rc=$rc, total $(( $(date +%s) - t0 )) s"
