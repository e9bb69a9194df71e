#!/usr/bin/env python3
"""test_ratios.py - the bookkeeping of experiments/latency/ratios.py (the one-process acceptance
ratios) without a GPU: workload specs, FLOPs, which peer pass each of ours is compared with, the
per-round ratios and their summary (NaN rounds left out), and the acceptance lines.
    test_ratios.py RATIOS_PY"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from py_checks import check, finish, load  # noqa: E402

ratios = load("ratios", sys.argv[1])

pw = ratios.parse_workload
check(pw("16x4096") == ([4096] * 16, 16), "16x4096: 16 documents of 4096, MHA")
check(pw("8192+32x256") == ([8192] + [256] * 32, 16), "8192+32x256: one long document, then 32 short")
check(pw("gqa-16x1024") == ([1024] * 16, 4), "gqa-16x1024: 4 kv heads for 16 query heads")
check(pw("gqa2-4x4096") == ([4096] * 4, 2) and pw("gqa8-16x1024") == ([1024] * 16, 8),
      "gqaN-: N kv heads (groups of 8 and of 2)")
check(all(pw(x) is None for x in ("gqa3-16x1024", "gqa0-16x1024", "gqax-16x1024")),
      "gqaN- with N not dividing the 16 query heads: None")
check(pw("160+96+45") == ([160, 96, 45], 16), "single lengths joined by +")
check(all(pw(x) is None for x in ("logu-16k", "x5", "3x", "0x5", "4x0", "", "16x4096+")),
      "not a length spec: None (taken from --layouts)")

F = 4.0 * 128 * 16 * 16 * 4096 * 4097 / 2
check(ratios.flops([4096] * 16, 16, 128, "fwd") == F, "forward FLOPs causal-discounted (4 D H sum L(L+1)/2)")
check(ratios.flops([4096] * 16, 16, 128, "train") == 3.5 * F and ratios.flops([4096] * 16, 16, 128, "bwd") == 2.5 * F,
      "train 3.5x, bwd 2.5x the forward")

pp = ratios.peer_pass_for
check(pp("fwd+quant", "cudnn-bf16") == "fwd" and pp("fwd+quant", "cudnn-fp8") == "fwd+quant",
      "fwd+quant: a BF16 peer's forward (no quantization), cudnn-fp8's own fwd+quant")
check(pp("train", "flex-bf16") == "fwdbwd" and pp("bwd", "cudnn-bf16") is None and pp("bwd", "cudnn-fp8") == "bwd",
      "train against fwdbwd; bwd only against cudnn-fp8's bwd")

nan = float("nan")
ours = "flamia-mxfp8"


def row(rnd, w, system, pas, ms, tflops=nan):
    return {"round": rnd, "workload": w, "system": system, "pass": pas, "ms": ms, "tflops": tflops}


t = [row(0, "16x4096", ours, "fwd", 1.0), row(0, "16x4096", "cudnn-bf16", "fwd", 2.0),
     row(1, "16x4096", ours, "fwd", 1.25), row(1, "16x4096", "cudnn-bf16", "fwd", 1.5),
     row(2, "16x4096", ours, "fwd", nan), row(2, "16x4096", "cudnn-bf16", "fwd", 9.0),
     row(0, "16x4096", ours, "fwd+quant", 2.0), row(1, "16x4096", ours, "fwd+quant", 2.0),
     row(0, "16x4096", ours, "train", 10.0), row(0, "16x4096", "cudnn-bf16", "fwdbwd", 8.0),
     row(0, "16x4096", ours, "bwd", 8.0, 340.0), row(1, "16x4096", ours, "bwd", 8.0, 330.0),
     row(0, "16x4096", "cudnn-fp8", "bwd", 8.4)]
r = ratios.ratio_rows(t, ours)
key = {(x["our_pass"], x["peer"], x["peer_pass"]): x for x in r}
f = key.get(("fwd", "cudnn-bf16", "fwd"))
check(f is not None and f["rounds"] == 2 and math.isclose(f["ratio_median"], (2.0 + 1.2) / 2) and
      f["ratio_min"] == 1.2 and f["ratio_max"] == 2.0, "fwd: rounds with both times only (the NaN round left out)")
fq = key.get(("fwd+quant", "cudnn-bf16", "fwd"))
check(fq is not None and fq["rounds"] == 2 and math.isclose(fq["ratio_median"], (1.0 + 0.75) / 2),
      "fwd+quant against the BF16 peer's forward, round by round")
check(("bwd", "cudnn-bf16", "fwd") not in key and ("bwd", "cudnn-bf16", None) not in key and
      math.isclose(key[("bwd", "cudnn-fp8", "bwd")]["ratio_median"], 8.4 / 8.0), "bwd only against cudnn-fp8")
check(math.isclose(key[("train", "cudnn-bf16", "fwdbwd")]["ratio_median"], 0.8), "train against fwdbwd")

ot = {(w, p): (ms, tf) for w, p, ms, tf in ratios.our_times(t, ours)}
check(ot.get(("16x4096", "fwd"), (0,))[0] == 1.125 and ot.get(("16x4096", "bwd")) == (8.0, 335.0) and
      ("16x4096", "train") in ot and len(ot) == 4, "our times: median over the rounds with a time, per pass")
lines = ratios.acceptance(t, r, ours)
check(any("fwd >= 1.30x" in x and m is True for x, m in lines), "forward 1.6x: the 1.3x line met")
check(any("train >= 1.25x" in x and m is False for x, m in lines), "train 0.8x: the 1.25x line not met")
check(any("550 TFLOP/s" in x and "335.0" in x and m is False for x, m in lines), "backward: the rounds' median TFLOP/s")
check(any("fwd+quant faster" in x and "0 of 1" in x and m is False for x, m in lines),
      "fwd+quant against the fastest peer: counted per workload")
lines0 = ratios.acceptance([], [], ours)
check(all(m is None for x, m in lines0 if "every workload" not in x) and "not measured" in lines0[0][0],
      "nothing measured: the lines say so")
finish()
