#!/usr/bin/env python3
"""ratios.py - the acceptance ratios of issues 4 and 5 measured in ONE process: our kernels and
the peers on the same inputs, on one GPU, alternated round by round.

Table A (experiments/latency + peers.py) times ours in the C driver and the peers in a Python
process after it; their ratio then also carries whatever changed between the two processes
(cuDNN's forward at 16x4096 has read 1.77-1.99 ms on different machine starts while ours stayed
within 1 %). Here both sides run in this process: libflamia through ctypes (the binding of
examples/torch_attention.py), the peers through peers.py's own run functions; every round times
every system on every workload once (ours first in even rounds, last in odd ones), and each
ratio is the peer's time over ours in the same round. The rounds' median is the figure; their
spread is printed beside it.

Our passes (recipe --recipe, default mxfp8), on BF16 packed [T][H][D] inputs:
  fwd        flamia_cuda_forward on a workspace quantized before timing
  fwd+quant  flamia_cuda_quantize + flamia_cuda_forward
  bwd        flamia_cuda_backward alone (its dO pass, transposes, main kernel, dQ conversion)
  train      flamia_cuda_train_step captured once in a CUDA graph (torch.cuda.graph), replayed
--deterministic: the same with flamia_cuda_set_deterministic(1), as flamia-<recipe>-det (the split
dQ: faster than the default mode for an O(N^2) workspace, docs/cuda-api.md).
Peers (peers.py): cudnn-bf16 fwd / fwdbwd (equal-length workloads), flex-bf16 fwd / fwdbwd
(packed ones), cudnn-fp8 fwd, fwd+quant, bwd, fwdbwd (where cuDNN runs); --systems '' times ours
alone (an A/B of builds or switches across processes). Before and after the rounds our O, dQ, dK,
dV are checked against BF16 SDPA per document (cosine >= 0.99, else the workload's rows say so and
carry no time: a buffer freed under a captured graph once timed other documents than it showed).

Ratios (> 1: ours faster): fwd / fwd; fwd+quant / the BF16 peers' fwd (they need no
quantization) and cudnn-fp8's fwd+quant; train / fwdbwd; bwd / cudnn-fp8's bwd. The acceptance
lines printed last: issue 4, forward >= 1.3x cudnn-bf16 at 16x4096 and fwd+quant faster than
the fastest peer on every workload; issue 5, train >= 1.25x cudnn-bf16 at 16x4096 and faster
than the fastest peer's fwdbwd on every workload it runs, backward >= 550 TFLOP/s at 16x4096.

Workloads by name: the specs of experiments/common/workloads.c, terms AxL (A documents of L
tokens) or L joined by '+' (16x4096, 8192+32x256); gqa-16x1024: 16 query heads over 4 kv heads,
as there (any gqa-<spec>: heads / 4 kv heads; gqaN-<spec>: N kv heads, e.g. gqa2-16x1024 for
groups of 8); others (logu-*) from --layouts (the latency
driver's HDF5 file, as peers.py). FLOPs causal-discounted as Table A.
Output: HDF5 (--out) with tables `timings` (one row per round, workload, system, pass) and
`ratios` (median, min, max over rounds); rendered by `snakemake acceptance_ratios` into
paper_tables/acceptance_ratios.md from data/measured/<gpu>/ratios_gpu.h5.

Usage (GPU machine, repo root, libflamia built with CUDA):
  python3 experiments/latency/ratios.py --out ratios.h5 [--workloads 16x4096,16x1024] [--rounds 4]
"""
import argparse
import os
import statistics
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))

DEFAULT_WORKLOADS = "16x4096,4x4096,16x1024,64x1024,8192+32x256,8192+224x256,gqa-16x1024"
OUR_PASSES = ("fwd", "fwd+quant", "bwd", "train")
PEER_PASSES = {"cudnn-bf16": ("fwd", "fwdbwd"), "flash-bf16": ("fwd", "fwdbwd"), "varlen-bf16": ("fwd", "fwdbwd"),
               "flex-bf16": ("fwd", "fwdbwd"), "cudnn-fp8": ("fwd", "fwd+quant", "bwd", "fwdbwd")}
FLOP_FACTOR = {"fwd": 1.0, "fwd+quant": 1.0, "bwd": 2.5, "fwdbwd": 3.5, "train": 3.5}


def parse_workload(name, heads=16):
    """(document lengths, kv heads) of a workload given by its name, or None (take it from
    --layouts): terms "AxL" (A documents of L) or "L" joined by '+', as experiments/common/
    workloads.c's specs ("16x4096", "8192+32x256"); "gqa-" in front: heads / 4 kv heads,
    "gqaN-": N kv heads (a divisor of heads)"""
    body, hkv = name, heads
    prefix, dash, rest = name.partition("-")
    if dash and prefix.startswith("gqa"):
        n = prefix[3:]
        if not (n == "" or (n.isdigit() and int(n) >= 1 and heads % int(n) == 0)):
            return None
        body, hkv = rest, int(n) if n else heads // 4
    lens = []
    for term in body.split("+"):
        a, x, l = term.rpartition("x")
        if not l.isdigit() or (x and not a.isdigit()) or int(l) < 1 or (x and int(a) < 1):
            return None
        lens += [int(l)] * (int(a) if x else 1)
    return lens, hkv


def flops(lens, heads, head_dim, pas):
    """causal-discounted FLOPs of a pass: forward 4 D H sum L(L+1)/2, bwd 2.5x, train / fwdbwd 3.5x"""
    return 4.0 * head_dim * heads * sum(l * (l + 1) / 2 for l in lens) * FLOP_FACTOR[pas]


def peer_pass_for(our_pass, system):
    """the peer pass our pass is compared with, or None"""
    if our_pass == "fwd":
        return "fwd"
    if our_pass == "fwd+quant":
        return "fwd+quant" if system == "cudnn-fp8" else "fwd"
    if our_pass == "train":
        return "fwdbwd"
    if our_pass == "bwd":
        return "bwd" if system == "cudnn-fp8" else None
    return None


def ratio_rows(timings, ours):
    """per (workload, our pass, peer, peer pass): the ratio peer ms / our ms in every round where
    both have a time, summarized as median, min, max (rows of the `ratios` table)"""
    ms = {(r["round"], r["workload"], r["system"], r["pass"]): r["ms"] for r in timings if r["ms"] == r["ms"]}
    out = []
    workloads = list(dict.fromkeys(r["workload"] for r in timings))
    systems = [s for s in dict.fromkeys(r["system"] for r in timings) if s != ours]
    rounds = sorted({r["round"] for r in timings})
    for w in workloads:
        for op in OUR_PASSES:
            for s in systems:
                pp = peer_pass_for(op, s)
                if pp is None:
                    continue
                got = [(ms[(k, w, s, pp)], ms[(k, w, ours, op)]) for k in rounds
                       if (k, w, s, pp) in ms and (k, w, ours, op) in ms]
                if not got:
                    continue
                ratios = [p / o for p, o in got]
                out.append(dict(workload=w, our_pass=op, peer=s, peer_pass=pp, rounds=len(got),
                                ratio_median=statistics.median(ratios), ratio_min=min(ratios), ratio_max=max(ratios),
                                ours_ms=statistics.median(o for _, o in got),
                                peer_ms=statistics.median(p for p, _ in got)))
    return out


def our_times(timings, ours):
    """[(workload, pass, median ms over rounds, median TFLOP/s)] of our rows that have a time"""
    out = []
    for w in dict.fromkeys(r["workload"] for r in timings):
        for p in OUR_PASSES:
            got = [r for r in timings if r["workload"] == w and r["system"] == ours and r["pass"] == p and r["ms"] == r["ms"]]
            if got:
                out.append((w, p, statistics.median(r["ms"] for r in got), statistics.median(r["tflops"] for r in got)))
    return out


def acceptance(timings, ratios, ours, target="16x4096"):
    """the issues' acceptance lines [(text, met or None when not measured)]"""
    lines = []
    get = lambda w, op, s: [r for r in ratios if r["workload"] == w and r["our_pass"] == op and r["peer"] == s]  # noqa: E731
    for op, need, issue in (("fwd", 1.3, 4), ("train", 1.25, 5)):
        r = get(target, op, "cudnn-bf16")
        lines.append(("issue %d: %s >= %.2fx cudnn-bf16 at %s: %s" % (
            issue, op, need, target, "%.3fx (rounds %.3f-%.3f)" % (r[0]["ratio_median"], r[0]["ratio_min"],
                                                                     r[0]["ratio_max"]) if r else "not measured"),
                      r[0]["ratio_median"] >= need if r else None))
    tf = {(w, p): t for w, p, _, t in our_times(timings, ours)}.get((target, "bwd"))
    if tf is not None:
        lines.append(("issue 5: backward >= 550 TFLOP/s at %s: %.1f TFLOP/s" % (target, tf), tf >= 550))
    else:
        lines.append(("issue 5: backward >= 550 TFLOP/s at %s: not measured" % target, None))
    for op, issue in (("fwd+quant", 4), ("train", 5)):
        per = {}
        for r in ratios:
            if r["our_pass"] == op:
                per[r["workload"]] = min(per.get(r["workload"], float("inf")), r["ratio_median"])
        ahead = [w for w, v in per.items() if v > 1.0]
        lines.append(("issue %d: %s faster than the fastest peer on every workload: %d of %d (%s)" % (
            issue, op, len(ahead), len(per), ", ".join("%s %.2fx" % (w, v) for w, v in per.items())),
            len(ahead) == len(per) if per else None))
    return lines


# ---------------------------------------------------------------- GPU side (torch, ctypes)
class Ours:
    """our four passes on one workload through libflamia (ctypes), on PyTorch's current stream"""

    def __init__(self, torch, fl, recipe, lens, q, k, v, do, cu):
        import ctypes

        import torch_attention as ta

        self.torch, self.fl, self.rec, L = torch, fl, recipe, fl.lib
        # the host copy of cu_seqlens, as a framework that knows its documents passes it (the backward
        # then sizes its split dQ by the documents; docs/cuda-api.md)
        self.cu_host = ta.host_offsets(cu.cpu(), len(lens))
        self.shape = ta.shape_of(q, k, cu, max(lens), host=self.cu_host)
        nb = ctypes.c_size_t()
        fl.check(L.flamia_cuda_workspace_size(recipe, ctypes.byref(self.shape), ctypes.byref(nb)), "workspace_size")
        self.nb = nb
        self.ws = torch.empty(nb.value, dtype=torch.uint8, device=q.device)
        # every tensor whose address the shape or a call holds stays referenced here (the caching
        # allocator hands a freed cu_seqlens to the next workload's tensors)
        self.q, self.k, self.v, self.do, self.cu = q, k, v, do, cu
        self.o = torch.empty_like(q)
        self.lse = torch.empty(q.shape[0], q.shape[1], dtype=torch.float32, device=q.device)
        self.dq, self.dk, self.dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        self.p = ta.ptr
        self.s = ctypes.byref(self.shape)
        self.graph = None

    def _stream(self):
        import ctypes
        return ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream)

    def quantize(self):
        p, L = self.p, self.fl.lib
        self.fl.check(L.flamia_cuda_quantize(self.rec, self.s, p(self.q), p(self.k), p(self.v), p(self.ws), self.nb,
                                             self._stream()), "flamia_cuda_quantize")

    def forward(self):
        p, L = self.p, self.fl.lib
        self.fl.check(L.flamia_cuda_forward(self.rec, self.s, p(self.ws), self.nb, p(self.o), p(self.lse),
                                            self._stream()), "flamia_cuda_forward")

    def fwd_quant(self):
        self.quantize()
        self.forward()

    def backward(self):
        p, L = self.p, self.fl.lib
        self.fl.check(L.flamia_cuda_backward(self.rec, self.s, p(self.ws), self.nb, p(self.o), p(self.lse), p(self.do),
                                             p(self.dq), p(self.dk), p(self.dv), self._stream()),
                      "flamia_cuda_backward")

    def train_step(self):
        p, L = self.p, self.fl.lib
        self.fl.check(L.flamia_cuda_train_step(self.rec, self.s, p(self.q), p(self.k), p(self.v), p(self.do),
                                               p(self.o), p(self.lse), p(self.dq), p(self.dk), p(self.dv), p(self.ws),
                                               self.nb, self._stream()), "flamia_cuda_train_step")

    def capture(self):
        """the training call captured once (after an uncaptured call: one-time set-up stays out)"""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.train_step()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.train_step()
        return self.graph.replay

    def runs(self):
        self.quantize()
        self.forward()
        return {"fwd": self.forward, "fwd+quant": self.fwd_quant, "bwd": self.backward, "train": self.capture()}


def check_ours(torch, F, peers, ours, lens, q, k, v, do):
    """our O, dQ, dK, dV (one graph replay) against BF16 SDPA per document: the note, and whether
    every cosine is >= 0.99"""
    ours.graph.replay()
    torch.cuda.synchronize()
    return peers.check_vs_bf16(torch, F, lens, q, k, v, do, (ours.o, ours.dq, ours.dk, ours.dv))


def parse_args():
    import peers

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.environ.get("FLAMIA_LIB", os.path.join(HERE, "..", "..", "build", "kernels",
                                                                               "libflamia.so")))
    ap.add_argument("--recipe", default="mxfp8")
    ap.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    ap.add_argument("--layouts", default="", help="the latency driver's HDF5 file, for workloads not given by name")
    ap.add_argument("--systems", default="cudnn-bf16,cudnn-fp8,flex-bf16",
                    help="peers (peers.py's names); empty: ours alone (A/B of our builds or switches across processes)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--deterministic", action="store_true",
                    help="ours in the deterministic mode (flamia_cuda_set_deterministic(1) before the workspaces are "
                         "sized: the split dQ where they hold it), named flamia-<recipe>-det")
    peers.timing_args(ap)
    a = peers.checked_args(ap)
    if a.rounds < 1:
        ap.error("--rounds must be >= 1")
    return a


def main():
    a = parse_args()
    import numpy as np
    import torch
    import torch.nn.functional as F

    import peers
    import torch_attention as ta

    if not torch.cuda.is_available():
        print("ratios.py: no CUDA device: nothing to run")
        return 77
    fl = ta.Flamia(a.lib)
    if not fl.lib.flamia_cuda_available():
        print("ratios.py: %s has no CUDA backend or no sm_90 GPU is visible: nothing to run" % a.lib)
        return 77
    recipe = fl.recipe(a.recipe)
    ours_name = "flamia-" + a.recipe + ("-det" if a.deterministic else "")
    fl.check(fl.lib.flamia_cuda_set_deterministic(1 if a.deterministic else 0), "flamia_cuda_set_deterministic")
    peers.raise_dynamo_limits(torch)
    layouts, kv = peers.load_layouts(a.layouts) if a.layouts else ({}, {})
    H, D, dev = a.heads, 128, torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed)
    flex = {}
    checked = {}  # workload -> Ours, for the check after the rounds
    work = []  # (workload, lens, Hkv, {system: {pass: callable or reason}}, notes)
    for w in [x for x in a.workloads.split(",") if x]:
        got = parse_workload(w, H)
        if got is None and w in layouts:
            got = (layouts[w], kv.get(w, H))
        if got is None:
            print("ratios.py: workload %s: not a length spec (16x4096, 8192+32x256) and not in --layouts" % w)
            return 2
        lens, hkv = got
        T = sum(lens)
        q, do = (torch.randn(T, H, D, device=dev, dtype=torch.bfloat16, generator=gen) for _ in range(2))
        k, v = (torch.randn(T, hkv, D, device=dev, dtype=torch.bfloat16, generator=gen) for _ in range(2))
        cu = torch.tensor([0] + list(np.cumsum(lens)), device=dev, dtype=torch.int32)
        equal = len(set(lens)) == 1
        systems, notes = {}, {}
        try:
            o = Ours(torch, fl, recipe, lens, q, k, v, do, cu)
            runs = o.runs()
            notes[ours_name], ok = check_ours(torch, F, peers, o, lens, q, k, v, do)
            systems[ours_name] = runs if ok else {p: "refused: " + notes[ours_name] for p in OUR_PASSES}
            if ok:
                checked[w] = o
        except Exception as e:
            traceback.print_exc()
            systems[ours_name] = {p: peers.short_error(e) for p in OUR_PASSES}
        print("  %-14s %s: %s" % (w, ours_name, notes.get(ours_name, "")), flush=True)
        ctx = peers.PeerInputs(lens, q, k, v, do, cu, dict(enable_gqa=True) if hkv != H else {}, flex)
        for s in [x for x in a.systems.split(",") if x]:
            if not peers.runs_on(s, equal):
                continue
            if s == "cudnn-fp8":
                systems[s], notes[s] = peers.cudnn_fp8_runs(torch, F, lens, q, k, v, do)
                continue
            systems[s] = {}
            for p in PEER_PASSES[s]:
                try:
                    systems[s][p] = peers.peer_run(torch, F, s, p, ctx)
                except Exception as e:
                    traceback.print_exc()
                    systems[s][p] = peers.short_error(e)
        work.append((w, lens, hkv, systems, notes))

    timings = []
    nan = float("nan")
    for rnd in range(a.rounds):
        for w, lens, hkv, systems, notes in work:
            order = list(systems)
            if rnd % 2:  # ours last in odd rounds
                order = order[1:] + order[:1]
            for s in order:
                for p, run in systems[s].items():
                    ms = mn = nan
                    note = run if isinstance(run, str) else notes.get(s, "")
                    if not isinstance(run, str):
                        try:
                            ms, mn = peers.bench(torch, run, a.warmup, a.iters)
                        except Exception as e:
                            traceback.print_exc()
                            note = peers.short_error(e)
                    fl_ = flops(lens, H, D, p)
                    timings.append(dict(round=rnd, workload=w, system=s, **{"pass": p}, total_tokens=sum(lens),
                                        num_docs=len(lens), heads_q=H, heads_kv=hkv, head_dim=D, ms=ms, ms_min=mn,
                                        iters=a.iters if ms == ms else 0, flops=fl_,
                                        tflops=fl_ / (ms * 1e-3) / 1e12 if ms == ms else nan, note=note))
        print("round %d of %d done" % (rnd + 1, a.rounds), flush=True)

    # the same check after the rounds: a kernel or buffer that went wrong while timed voids its times
    for w, lens, hkv, systems, notes in work:
        o = checked.get(w)
        if o is None:
            continue
        note, ok = check_ours(torch, F, peers, o, lens, o.q, o.k, o.v, o.do)
        print("  %-14s %s after the rounds: %s" % (w, ours_name, note), flush=True)
        if not ok:
            for r in timings:
                if r["workload"] == w and r["system"] == ours_name:
                    r.update(ms=nan, ms_min=nan, tflops=nan, iters=0, note="failed after timing: " + note)
    ratios = ratio_rows(timings, ours_name)
    print("\n| workload | our pass | ms (median over rounds) | TFLOP/s |\n|---|---|---|---|")
    for w, p, ms, tf in our_times(timings, ours_name):
        print("| %s | %s | %.3f | %.1f |" % (w, p, ms, tf))
    print("\n| workload | ours | peer | rounds | peer ms | our ms | ratio (median) | min | max |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in ratios:
        print("| %s | %s | %s %s | %d | %.3f | %.3f | %.3fx | %.3f | %.3f |" % (
            r["workload"], r["our_pass"], r["peer"], r["peer_pass"], r["rounds"], r["peer_ms"], r["ours_ms"],
            r["ratio_median"], r["ratio_min"], r["ratio_max"]))
    print()
    for text, met in acceptance(timings, ratios, ours_name):
        print("%s  [%s]" % (text, "met" if met else "not met" if met is not None else "-"))
    write_h5(a, timings, ratios, torch)
    return 0


def write_h5(a, timings, ratios, torch):
    import peers

    tcols = [("round", "i", "1", "alternation round (ours first in even rounds, last in odd ones)"),
             ("workload", "s", "", "workload name"), ("system", "s", "", "flamia-<recipe> (ours) or the peer"),
             ("pass", "s", "", "ours: fwd, fwd+quant, bwd, train; peers: fwd, fwdbwd (cudnn-fp8 also fwd+quant, bwd)"),
             ("total_tokens", "i", "tokens", "packed tokens"), ("num_docs", "i", "docs", "documents"),
             ("heads_q", "i", "heads", "query heads"), ("heads_kv", "i", "heads", "key/value heads"),
             ("head_dim", "i", "1", "head dimension"),
             ("ms", "f", "ms", "median of iters CUDA-event timings, one event pair per call"),
             ("ms_min", "f", "ms", "fastest timing"), ("iters", "i", "1", "timed calls (0: no time)"),
             ("flops", "f", "FLOP", "causal-discounted: fwd F = 4 D Hq sum L(L+1)/2, bwd 2.5 F, train / fwdbwd 3.5 F"),
             ("tflops", "f", "TFLOP/s", "flops / ms"),
             ("note", "s", "", "the correctness check's cosines, or why the row has no time")]
    rcols = [("workload", "s", "", "workload name"), ("our_pass", "s", "", "our pass"), ("peer", "s", "", "peer"),
             ("peer_pass", "s", "", "the peer's pass it is compared with"),
             ("rounds", "i", "1", "rounds with both times"),
             ("ratio_median", "f", "1", "median over rounds of peer ms / our ms (> 1: ours faster)"),
             ("ratio_min", "f", "1", "smallest round's ratio"), ("ratio_max", "f", "1", "largest round's ratio"),
             ("ours_ms", "f", "ms", "median over rounds of our time"),
             ("peer_ms", "f", "ms", "median over rounds of the peer's time")]
    peers.write_result(a, torch, "ratios", [
        ("timings", "every round's median latency per workload, system and pass", timings, tcols),
        ("ratios", "peer / ours per round, summarized over rounds", ratios, rcols)],
        attrs=[("recipe", a.recipe), ("heads", a.heads), ("rounds", a.rounds),
               ("deterministic", int(a.deterministic))])


if __name__ == "__main__":
    sys.exit(main())
