#!/usr/bin/env python3
"""Forty-fifth session: cuDNN's FP8 attention (experiments/latency/cudnn_fp8.py) at B x 4096 tokens,
16 heads, d = 128, causal, B = 2, 4, 8, 16: forward and backward, each timed (hot) as Table A
does, 30 calls back to back after 5 warm-up calls (median), and (cool) 10 single calls each after
200 ms idle (median), with the SM clock and board power sampled every 50 ms by nvidia-smi and
averaged over each phase. Asks: does cuDNN's FP8 backward rate (498 TFLOP/s at 4x4096, 331 at
16x4096 in Table A at 4aa72f8) fall with the batch, or with sustained load (clocks, power)?
Usage (device, repo root, the wheel installed on PYTHONPATH): python3 dev/sessions/forty-fifth_scaling.py OUTDIR"""
import datetime
import math
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "experiments", "latency"))
import cudnn_fp8  # noqa: E402

out = sys.argv[1]
smi_path = os.path.join(out, "smi.csv")
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu",
                        "--format=csv,noheader,nounits", "-lms", "50"], stdout=open(smi_path, "w"))
time.sleep(1.0)
phases = []


def timed(fn, n):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) for s, e in ev)[n // 2]


gen = torch.Generator(device="cuda")
gen.manual_seed(1)
rows = []
for B in (2, 4, 8, 16):
    L, H, D = 4096, 16, 128
    T = B * L
    q, k, v, do = (torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(4))
    att = cudnn_fp8.CudnnFp8Attention(torch, [L] * B, q, k, v, do, 1.0 / math.sqrt(D))
    F = 4.0 * D * H * B * L * (L + 1) / 2
    for name, fn, mult in (("fwd", att.fwd, 1.0), ("bwd", att.bwd, 2.5)):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        t0 = time.time()
        hot = timed(fn, 30)
        t1 = time.time()
        cools = []
        for _ in range(10):
            time.sleep(0.2)
            cools.append(timed(fn, 1))
        t2 = time.time()
        cool = sorted(cools)[5]
        phases += [(B, name, "hot", t0, t1), (B, name, "cool", t1, t2)]
        rows.append((B, name, hot, mult * F / hot / 1e9, cool, mult * F / cool / 1e9))
        print("B=%2d %s hot %.3f ms %.1f TFLOP/s | cool %.3f ms %.1f TFLOP/s" % rows[-1], flush=True)
    del att, q, k, v, do
    torch.cuda.empty_cache()
time.sleep(0.3)
smi.terminate()
smi.wait()
samples = []
for line in open(smi_path):
    p = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        samples.append((ts, float(p[1]), float(p[2]), float(p[3])))
    except (ValueError, IndexError):
        pass
print("phase                  samples  SM MHz (mean, min)  power W (mean, max)  temp C")
for B, name, kind, a, b in phases:
    s = [x for x in samples if a <= x[0] <= b]
    if s:
        print("B=%2d %s %-4s          %4d     %6.0f %6.0f        %6.0f %6.0f        %3.0f" % (
            B, name, kind, len(s), sum(x[1] for x in s) / len(s), min(x[1] for x in s),
            sum(x[2] for x in s) / len(s), max(x[2] for x in s), max(x[3] for x in s)))
    else:
        print("B=%2d %s %-4s          no samples (phase %.3f s)" % (B, name, kind, b - a))
