#!/bin/bash
# Forty-fifth session: (1) v107 (P's exponentials replaced by t, timing only) against the
# working tree's backward in the harness, mxfp8, 16x4096 / 2x4096, alternated twice; (2) ncu's
# SASS source page of cuDNN's FP8 backward main kernel (2x4096) and of ours (check_backward,
# 2x4096), each as an opcode histogram (dev/sessions/forty-fifth_ncu_sass.py).
# Usage (device, repo root; carry .whl and dev/backward/bin/check_backward, check_v107_probe_exp_on)
export OMP_NUM_THREADS=16
O=${OUT:-/tmp/flamia-out}
CHECK=0 TKINDS=mxfp8 WORKLOADS="16x4096 16 16 1|2x4096 16 16 1" \
  timeout 200 bash dev/backward/compare.sh check_backward check_v107_probe_exp_on
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
S="--clock-control none -c 1 --section SourceCounters --page source --csv --print-source sass"
PYTHONPATH=/tmp/site timeout 150 ncu $S -k regex:flash_bprop -s 3 python3 dev/sessions/forty-fifth_kernels.py 2 > "$O/ncu_sass_cudnn.csv" 2>/dev/null
echo "== cuDNN FP8 bprop main kernel, 2x4096"; python3 dev/sessions/forty-fifth_ncu_sass.py "$O/ncu_sass_cudnn.csv" 45
GPU_FWD=1 timeout 150 ncu $S -k regex:bwd_main_fp8 -s 2 dev/backward/bin/check_backward mxfp8 2x4096 16 16 1 none 3 > "$O/ncu_sass_ours.csv" 2>/dev/null
echo "== ours (bwd_main_fp8, mxfp8), 2x4096"; python3 dev/sessions/forty-fifth_ncu_sass.py "$O/ncu_sass_ours.csv" 45
cd "$O" && gzip -f ncu_sass_cudnn.csv ncu_sass_ours.csv
