#!/bin/bash
# The accuracy driver's --backend cuda run with accuracy_gpu's arguments (5 s) against the
# shipped data/measured/h200/accuracy_gpu.h5: O, dK, dV numbers identical or not (dQ is
# reduce-added in no fixed order by default, so it may move in its last digits). A check that
# a change meant to keep the kernels' bytes did. Usage (device, repo root, build/ carried):
# bash dev/accuracy_gpu_check.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
timeout 100 build/experiments/accuracy --backend cuda --scale 0.0625 --seed 1 --heads 8 --out "$O/accuracy_gpu_check.h5" --quiet
echo "accuracy_gpu (check): rc=$?"
build/experiments/h5totsv "$O/accuracy_gpu_check.h5" /tmp/acc_new >/dev/null && \
  build/experiments/h5totsv data/measured/h200/accuracy_gpu.h5 /tmp/acc_old >/dev/null && \
  if cmp -s <(cut -f1-2,7,9,10,11,13,14 /tmp/acc_new/accuracy.tsv) <(cut -f1-2,7,9,10,11,13,14 /tmp/acc_old/accuracy.tsv); then
    echo "accuracy_gpu (check): O, dK, dV cosines and errors identical to the shipped file"
  else echo "accuracy_gpu (check): DIFFERS from the shipped file"; fi
