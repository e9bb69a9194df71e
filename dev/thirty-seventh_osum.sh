#!/bin/bash
# Prepared in the thirty-sixth session (~3 min; carry build/, built here with -Dcuda=enabled
# -Dexperiments=enabled): the first run of experiments/osum_ablation, with the pipeline's
# arguments (experiment osum_ablation_gpu of pipelines/config.yaml), into
# $OUT/osum_ablation_gpu.h5; copy it into data/measured/h200/ and run `snakemake -c2 osum_ablation`.
# Usage (device, repo root): FLAMIA_GIT_COMMIT=<hash> bash dev/thirty-seventh_osum.sh > $OUT/osum.log 2>&1
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
s=$SECONDS
timeout 400 build/experiments/osum_ablation --backend cuda --scale 1.0 --seed 1 --out "$O/osum_ablation_gpu.h5"
echo "osum_ablation: rc=$? $((SECONDS - s)) s"
build/experiments/h5totsv "$O/osum_ablation_gpu.h5" /tmp/osum >/dev/null && cat /tmp/osum/osum.tsv
