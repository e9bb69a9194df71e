#!/bin/bash
# Forty-third session, first device command (~6 min; carry build; build/base_lib holds the library of
# deabf7f built here: meson setup + ninja kernels/libflamia.so in a worktree, copied there).
# (1) the gpu suite of the carried build (flamia_cuda_check_finite and the per-tensor record
#     bits: test_gpu_api, test_gpu_quantize) and racecheck of test_gpu_forward;
# (2) the PyTorch example in the three recipes (its new check_finite=True case included);
# (3) the quantize pass before (build/base_lib) and after the record bits, alternated ROUNDS times:
#     the kernels' only change is one select and shift a 32-token block, so expect 0 %.
# Usage (device, repo root): bash dev/sessions/forty-third_first.sh > $OUT/first.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
t0=$(date +%s)
bash dev/sessions/forty-third_suite.sh
echo "== (1) done at $(( $(date +%s) - t0 )) s"
echo "== (2) PyTorch example"
for r in mxfp8 mxfp8-exact bf16; do
  timeout 120 python3 examples/torch_attention.py --lib build/kernels/libflamia.so --recipe $r 2>&1 | tail -9
  echo "example $r: rc=$?"
done
echo "== (2) done at $(( $(date +%s) - t0 )) s"
echo "== (3) quantize, base (deabf7f) against HEAD"
bash dev/quantize_ab.sh
echo "== total $(( $(date +%s) - t0 )) s"
