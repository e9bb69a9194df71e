#!/bin/bash
# Forty-fifth session: how the FP8 rates scale with the batch at 4096 tokens a document, cuDNN's
# (dev/sessions/forty-fifth_scaling.py: hot and cool timings, SM clock and power per phase) and ours (the
# carried build's latency driver, fwd and bwd, mxfp8, B = 2, 4, 8, 16, with nvidia-smi sampled).
# Usage (device, repo root; carry build and .whl): bash dev/sessions/forty-fifth_scaling.sh
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64
O=${OUT:-/tmp/flamia-out}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
echo "== cuDNN FP8"
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 240 python3 dev/sessions/forty-fifth_scaling.py "$O" 2>&1 | grep -v Warning
echo "== ours (mxfp8)"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader,nounits -lms 50 > "$O/smi_ours.csv" &
smi=$!
timeout 200 build/experiments/latency/latency --workloads 2x4096,4x4096,8x4096,16x4096 --recipes mxfp8 \
  --passes fwd,bwd --verify-rows 0 --iters 30 --warmup 5 --out "$O/ours_scaling.h5" > /tmp/ours.log 2>&1; echo "latency rc=$?"
kill $smi
mkdir -p /tmp/ot && build/experiments/h5totsv "$O/ours_scaling.h5" /tmp/ot >/dev/null && \
  awk -F'\t' 'NR==1{for(i=1;i<=NF;i++)c[$i]=i; next} {print $c["workload"], $c["pass"], $c["ms"], $c["tflops"]}' /tmp/ot/timings.tsv
awk -F', ' '$2>0{n++; s+=$2; p+=$3; if(min==""||$2<min)min=$2; if($3>pm)pm=$3} END{printf "ours run: %d samples, SM MHz mean %.0f min %.0f, power W mean %.0f max %.0f\n", n, s/n, min, p/n, pm}' "$O/smi_ours.csv"
