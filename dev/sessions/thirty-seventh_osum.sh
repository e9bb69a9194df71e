#!/bin/bash
# Prepared in the thirty-sixth session (~3 min; carry build/, built here with -Dcuda=enabled
# -Dexperiments=enabled): the first run of experiments/osum_ablation, with the pipeline's
# arguments (experiment osum_ablation_gpu of pipelines/config.yaml), into
# $OUT/osum_ablation_gpu.h5; copy it into data/measured/h200/ and run `snakemake -c2 osum_ablation`.
# First, the accuracy driver's --backend cuda path, refactored in the same session (run_cuda now
# shares its device setup with xp_cuda_fwd_*), not yet run on a GPU: accuracy_gpu's run (5 s)
# must give the shipped file's O, dK, dV numbers (data/measured/h200/accuracy_gpu.h5, 469dffe) exactly
# (dQ is reduce-added in no fixed order by default, so it may move in its last digits); then a
# smoke run of the latency driver, whose option parsing was refactored in the same session.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/sessions/thirty-seventh_osum.sh > $OUT/osum.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
bash dev/accuracy_gpu_check.sh
# the latency driver's options now go through xp_parse_options (same session): a smoke run
timeout 120 build/experiments/latency/latency --workloads 16x1024 --recipes mxfp8 --passes fwd,bwd --pass-budget 1 \
  --warmup 3 --iters 10 --o-sum-interval 8 --out "$O/latency_smoke.h5" --quiet
echo "latency (smoke): rc=$?"
build/experiments/h5totsv "$O/latency_smoke.h5" /tmp/lat_smoke >/dev/null && cat /tmp/lat_smoke/timings.tsv /tmp/lat_smoke/verify.tsv | cut -c1-200
# the Python example's o-sum setter (added in the thirty-fifth session, --o-sum-interval in the thirty-sixth)
timeout 120 python3 examples/torch_attention.py --lib build/kernels/libflamia.so --recipe mxfp8 --o-sum-interval 8
echo "torch_attention.py --o-sum-interval 8: rc=$?"
s=$SECONDS
timeout 400 build/experiments/osum_ablation --backend cuda --scale 1.0 --seed 1 --out "$O/osum_ablation_gpu.h5"
echo "osum_ablation: rc=$? $((SECONDS - s)) s"
build/experiments/h5totsv "$O/osum_ablation_gpu.h5" /tmp/osum >/dev/null && cat /tmp/osum/osum.tsv
