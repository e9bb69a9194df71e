#!/usr/bin/env python3
"""Forty-fifth session: which kernels cuDNN's FP8 backward (experiments/latency/cudnn_fp8.py) runs
at B x 4096 tokens (16 heads, d = 128, causal), B = 2, 4, 8, 16, and their times, by the torch
profiler (CUPTI) over 5 calls after warm-up: its rate falls from 592 TFLOP/s at B = 2 to 328 at
B = 8 at the same 1980 MHz (dev/sessions/forty-fifth_scaling.py).
Usage (device, repo root, the wheel on PYTHONPATH): python3 dev/sessions/forty-fifth_kernels.py [B ...]
(default 2 4 8 16; under ncu, one B and its backward's first launch)"""
import math
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "experiments", "latency"))
import cudnn_fp8  # noqa: E402

gen = torch.Generator(device="cuda")
gen.manual_seed(1)
for B in [int(x) for x in sys.argv[1:]] or (2, 4, 8, 16):
    L, H, D = 4096, 16, 128
    q, k, v, do = (torch.randn(B * L, H, D, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(4))
    att = cudnn_fp8.CudnnFp8Attention(torch, [L] * B, q, k, v, do, 1.0 / math.sqrt(D))
    for name, fn in (("fwd", att.fwd), ("bwd", att.bwd)):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
        ev = [e for e in prof.key_averages() if e.device_time_total > 0]
        print("B=%2d %s: workspace %d MB" % (B, name, (att.ws_f if name == "fwd" else att.ws_b).numel() >> 20))
        for e in sorted(ev, key=lambda e: -e.device_time_total)[:6]:
            print("    %8.1f us x%d  %s" % (e.device_time_total / e.count, e.count, e.key[:150]))
    del att, q, k, v, do
    torch.cuda.empty_cache()
