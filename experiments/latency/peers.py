#!/usr/bin/env python3
"""peers.py - Table A, the peers' side: attention latency of PyTorch's kernels on the
same GPU, in the same device command as experiments/latency (our kernels).

Peers (BF16, causal, 16 heads, d=128 unless the layouts say otherwise; a GQA workload's K and V
get the key/value heads of our timings and the peers share them by enable_gqa, varlen_attn natively):
  cudnn-bf16   torch SDPA, cuDNN backend, batched [B, H, L, D] (equal-length workloads)
  flash-bf16   torch SDPA, FlashAttention-2 backend, batched (equal-length workloads)
  varlen-bf16  torch.nn.attention.varlen.varlen_attn, packed, window (-1, 0) (all workloads)
  flex-bf16    FlexAttention (torch.compile) with a document + causal mask, packed
               (skewed and variable workloads; block-mask build not timed)
  cudnn-fp8    cuDNN's FP8 attention (cudnn-frontend graphs sdpa_fp8 / sdpa_fp8_backward,
               cudnn_fp8.py): E4M3 Q, K, V, dO with per-tensor scales; O and gradients 16-bit
               where cuDNN allows it, E4M3 on the H200 (cuDNN 9.19);
               batched on equal-length workloads, ragged (THD) otherwise where cuDNN runs it.
               Its passes: fwd (the forward graph on codes made before timing), fwd+quant
               (per-tensor quantization of Q, K, V, fused by torch.compile, + the forward), bwd
               (the backward graph alone), fwdbwd (quantize Q, K, V, forward, quantize dO,
               backward: what a framework pays per call, the counterpart of our train pass).
               Checked before timing against a BF16 SDPA per document: cosine of O, dQ, dK, dV
               >= 0.99 or the row is refused (the cosines go into `note`). Needs the PyPI wheel
               nvidia-cudnn-frontend; without it the rows carry the ImportError.
Passes: fwd, and fwdbwd (forward + backward: dQ, dK, dV of the tensors the attention call
takes, through torch autograd; the view/transpose of the packed inputs is outside the
timed gradient) with --passes; device_run.sh asks for both (cudnn-fp8 adds fwd+quant to fwd
and bwd to fwdbwd). A pass a peer cannot run
(e.g. no backward in this torch) is a row with NaN and the exception in `note`.

Document layouts come from the latency driver's HDF5 file (table `layouts`), so both
sides time exactly the same packs. Method: warm-up, then the median of --iters
CUDA-event timings, one event pair per call. FLOPs are causal-discounted:
fwd = 4 * D * Hq * sum L(L+1)/2 (fwd+quant the same); bwd = 2.5 x fwd; fwdbwd = 3.5 x fwd (backward = 2.5 x forward, the
FlashAttention convention), which the latency driver's `train` pass (quantize + forward +
backward, no FLOPs in quantize) also uses. Output: one HDF5 file in the experiments'
schema (root provenance attributes; table `timings` with the same columns as the C
driver's).

Usage: peers.py --layouts ours.h5 --out peers.h5 [--passes fwd,fwdbwd] [--systems ...]
"""
import argparse
import datetime
import math
import os
import platform
import socket
import sys
import traceback

import numpy as np

EQUAL = ("4x4096", "16x4096", "16x1024", "64x1024")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layouts", required=True, help="HDF5 file of the latency driver (table layouts)")
    ap.add_argument("--workloads", default="", help="comma list (default: every workload in --layouts)")
    ap.add_argument("--systems", default="cudnn-bf16,flash-bf16,varlen-bf16,flex-bf16,cudnn-fp8")
    ap.add_argument("--passes", default="fwd", help="comma list of fwd, fwdbwd")
    ap.add_argument("--head-dim", type=int, default=128)
    timing_args(ap)
    return checked_args(ap)


def timing_args(ap):
    """the options of a timing script (peers.py, ratios.py): result file, heads, warm-up, calls, seed"""
    ap.add_argument("--out", required=True, help="result file (.h5)")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)


def checked_args(ap):
    a = ap.parse_args()
    if not a.out.endswith(".h5"):
        ap.error("--out must end in .h5")
    if a.iters < 1 or a.warmup < 0:
        ap.error("--iters must be >= 1, --warmup >= 0")
    return a


def raise_dynamo_limits(torch):
    """one FlexAttention compile per (shape, grad mode): 4 packed workloads x 2 passes already
    reach dynamo's default limit of 8, past which it silently runs the slow eager fallback"""
    try:
        import torch._dynamo

        for knob in ("recompile_limit", "cache_size_limit"):
            if hasattr(torch._dynamo.config, knob):
                setattr(torch._dynamo.config, knob, max(64, getattr(torch._dynamo.config, knob)))
    except ImportError:
        pass


def load_layouts(path):
    import h5py
    with h5py.File(path, "r") as f:
        g = f["layouts"]
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in g["workload"][...]]
        lens = g["length"][...].astype(np.int64)
        # key/value heads per workload (GQA) from our timings; the query heads' count otherwise
        kv = {}
        if "timings" in f and "heads_kv" in f["timings"]:
            t = f["timings"]
            for n, h in zip(t["workload"][...], t["heads_kv"][...]):
                kv[n.decode() if isinstance(n, bytes) else str(n)] = int(h)
    out = {}
    for n, l in zip(names, lens):
        out.setdefault(n, []).append(int(l))
    return out, kv


def bench(torch, fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in ev)
    med = t[len(t) // 2] if len(t) % 2 else 0.5 * (t[len(t) // 2 - 1] + t[len(t) // 2])
    return med, t[0]


def main():
    a = parse_args()
    import h5py  # noqa: F401  (missing h5py stops the run before anything is timed)
    import torch
    import torch.nn.functional as F

    layouts, kv_heads = load_layouts(a.layouts)
    wls = [w for w in (a.workloads.split(",") if a.workloads else layouts.keys()) if w]
    systems = [s for s in a.systems.split(",") if s]
    passes = [p for p in a.passes.split(",") if p]
    H, D = a.heads, a.head_dim
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed)
    rows = []
    flex = {}  # the compiled FlexAttention, shared by every workload
    raise_dynamo_limits(torch)

    def add(w, lens, system, pas, ms, mn, iters, note="", Hkv=H):
        pairs = sum(l * (l + 1) / 2 for l in lens)
        fl = 4.0 * D * H * pairs * {"fwdbwd": 3.5, "bwd": 2.5}.get(pas, 1.0)
        rows.append(dict(workload=w, system=system, **{"pass": pas}, total_tokens=sum(lens), num_docs=len(lens),
                         heads_q=H, heads_kv=Hkv, head_dim=D, ms=ms, ms_min=mn, iters=iters, flops=fl,
                         tflops=fl / (ms * 1e-3) / 1e12 if ms == ms else float("nan"), note=note))
        print(f"  {w:14s} {system:12s} {pas:7s} {ms:9.3f} ms {rows[-1]['tflops']:7.1f} TFLOP/s {note}",
              flush=True)

    for w in wls:
        lens = layouts[w]
        T = sum(lens)
        equal = len(set(lens)) == 1
        Hkv = kv_heads.get(w, H)
        gqa = dict(enable_gqa=True) if Hkv != H else {}  # K, V with fewer heads, shared by query groups
        q = torch.randn(T, H, D, device=dev, dtype=torch.bfloat16, generator=gen)
        k = torch.randn(T, Hkv, D, device=dev, dtype=torch.bfloat16, generator=gen)
        v = torch.randn(T, Hkv, D, device=dev, dtype=torch.bfloat16, generator=gen)
        do = torch.randn(T, H, D, device=dev, dtype=torch.bfloat16, generator=gen)
        cu = torch.tensor([0] + list(np.cumsum(lens)), device=dev, dtype=torch.int32)
        ctx = PeerInputs(lens, q, k, v, do, cu, gqa, flex)
        for system in systems:
            if not runs_on(system, equal):
                continue
            if system == "cudnn-fp8":
                rows_fp8 = cudnn_fp8_rows(torch, F, lens, q, k, v, do, passes, a)
                for pas, ms, mn, iters, note in rows_fp8:
                    add(w, lens, system, pas, ms, mn, iters, note, Hkv=Hkv)
                torch.cuda.empty_cache()
                continue
            for pas in passes:
                try:
                    run = peer_run(torch, F, system, pas, ctx)
                    ms, mn = bench(torch, run, a.warmup, a.iters)
                    add(w, lens, system, pas, ms, mn, a.iters, Hkv=Hkv)
                except Exception as e:  # a peer that cannot run is a row with a note, not a crash
                    traceback.print_exc()
                    add(w, lens, system, pas, float("nan"), float("nan"), 0, short_error(e), Hkv=Hkv)
                    torch.cuda.empty_cache()  # an out-of-memory failure must not starve the next peer
        del q, k, v, do, ctx
        torch.cuda.empty_cache()

    write_h5(a, rows, torch)


class PeerInputs:
    """one workload's inputs for peer_run: document lengths, the packed BF16 tensors
    [T, H, D] (do: the upstream gradient), int32 cu_seqlens, SDPA's GQA keyword, the shared
    FlexAttention state (flex: the compiled function) and this workload's block mask (built
    once, not timed)"""

    def __init__(self, lens, q, k, v, do, cu, gqa, flex):
        self.lens, self.q, self.k, self.v, self.do, self.cu, self.gqa, self.flex = lens, q, k, v, do, cu, gqa, flex
        self.block_mask = None


def peer_run(torch, F, system, pas, x):
    """a callable that runs one call of a BF16 peer (cudnn-bf16, flash-bf16, varlen-bf16,
    flex-bf16) for pass fwd or fwdbwd on x (PeerInputs); raises what the peer raises"""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    lens, do, cu, gqa = x.lens, x.do, x.cu, x.gqa
    D, H = x.q.shape[2], x.q.shape[1]
    bwd = pas == "fwdbwd"
    qq, kk, vv = (t.detach().requires_grad_(bwd) for t in (x.q, x.k, x.v))
    if system in ("cudnn-bf16", "flash-bf16"):
        B, L = len(lens), lens[0]
        backend = SDPBackend.CUDNN_ATTENTION if system == "cudnn-bf16" else SDPBackend.FLASH_ATTENTION
        # packed [T, H, D] viewed as [B, L, H, D] -> [B, H, L, D] (strided, no copy)
        qb, kb, vb = (t.view(B, L, t.shape[1], D).transpose(1, 2) for t in (qq, kk, vv))
        dob = do.view(B, L, H, D).transpose(1, 2)

        # gradients of qb, kb, vb: the attention backward alone, without the copy that the
        # view/transpose back to [T, H, D] could add
        def run():
            with sdpa_kernel([backend]):
                o = F.scaled_dot_product_attention(qb, kb, vb, is_causal=True, **gqa)
            if bwd:
                torch.autograd.grad(o, (qb, kb, vb), dob)
        return run
    if system == "varlen-bf16":
        from torch.nn.attention.varlen import varlen_attn

        maxlen = max(lens)
        try:
            varlen_attn(qq[:8], kk[:8], vv[:8], cu[:1].new_tensor([0, 8]), cu[:1].new_tensor([0, 8]),
                        8, 8, window_size=(-1, 0))
            kw = dict(window_size=(-1, 0))
        except TypeError:
            kw = dict(is_causal=True)

        def run():
            o = varlen_attn(qq, kk, vv, cu, cu, maxlen, maxlen, **kw)
            if bwd:
                torch.autograd.grad(o, (qq, kk, vv), do)
        return run
    if system == "flex-bf16":
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        if "fn" not in x.flex:
            x.flex["fn"] = torch.compile(flex_attention, dynamic=False)
        flex_fn = x.flex["fn"]
        if x.block_mask is None:
            T, dev = sum(lens), x.q.device
            doc = torch.repeat_interleave(torch.arange(len(lens), device=dev), torch.tensor(lens, device=dev))

            def mask_mod(b, h, qi, ki, doc=doc):
                return (doc[qi] == doc[ki]) & (qi >= ki)

            x.block_mask = create_block_mask(mask_mod, None, None, T, T, device=dev)
        bm = x.block_mask
        qf, kf, vf = (t.transpose(0, 1).unsqueeze(0) for t in (qq, kk, vv))  # [1, H, T, D]
        dof = do.transpose(0, 1).unsqueeze(0)

        # backward through autograd of the compiled call (the block mask carries the
        # backward's block lists too)
        def run():
            o = flex_fn(qf, kf, vf, block_mask=bm, **gqa)
            if bwd:
                torch.autograd.grad(o, (qf, kf, vf), dof)
        return run
    raise ValueError(f"unknown system {system}")


def reference_bf16(torch, F, lens, q, k, v, do):
    """O, dQ, dK, dV of BF16 SDPA (PyTorch's default backend), one causal call per document"""
    outs = [[], [], [], []]
    gqa = dict(enable_gqa=True) if k.shape[1] != q.shape[1] else {}
    s = 0
    for l in lens:
        x = [t[s:s + l].transpose(0, 1).unsqueeze(0).detach().requires_grad_(True) for t in (q, k, v)]
        o = F.scaled_dot_product_attention(*x, is_causal=True, **gqa)
        g = torch.autograd.grad(o, x, do[s:s + l].transpose(0, 1).unsqueeze(0))
        for i, t in enumerate((o,) + g):
            outs[i].append(t.detach()[0].transpose(0, 1))
        s += l
    return [torch.cat(o) for o in outs]


def check_vs_bf16(torch, F, lens, q, k, v, do, outputs):
    """O, dQ, dK, dV of a system (outputs, as many as it has) against BF16 SDPA per document: the
    cosines as a note, and whether every one is >= 0.99 (a system below is refused, not timed)"""
    ref = reference_bf16(torch, F, lens, q, k, v, do)
    cos = [float(F.cosine_similarity(g.float().flatten(), r.float().flatten(), dim=0)) for g, r in zip(outputs, ref)]
    return "cos %s vs BF16 SDPA" % " ".join("%s %.4f" % nc for nc in zip(("O", "dQ", "dK", "dV"), cos)), \
        all(c >= 0.99 for c in cos)


def runs_on(system, equal):
    """whether a BF16 peer runs on a layout: batched SDPA needs equal lengths, FlexAttention's
    document mask is timed on packed ones only"""
    return not ((system in ("cudnn-bf16", "flash-bf16") and not equal) or (system == "flex-bf16" and equal))


def short_error(e):
    """an exception as a table cell: its type and message, without cudnn-frontend's prefix, at
    most 200 characters"""
    return f"{type(e).__name__}: {e}".replace("[cudnn_frontend] Error: ", "")[:200]


FP8_PASSES = ("fwd", "fwd+quant", "bwd", "fwdbwd")


def cudnn_fp8_runs(torch, F, lens, q, k, v, do):
    """cudnn-fp8 built on these inputs and checked against BF16 SDPA: ({pass: a callable, or
    the reason it has none}, the check's note) for the passes of FP8_PASSES"""
    try:
        import cudnn_fp8

        att = cudnn_fp8.CudnnFp8Attention(torch, lens, q, k, v, do, 1.0 / math.sqrt(q.shape[2]))
        att.quantize(("q", "k", "v", "do"))
        att.fwd()
        if att.gb is not None:
            att.bwd()
        cos_note, ok = check_vs_bf16(torch, F, lens, q, k, v, do, att.outputs())
        note = "%s; out %s" % (cos_note, str(att.out_dtype).replace("torch.", ""))
        print("  cudnn-fp8 check: " + note, flush=True)
        if not ok:
            return {p: "refused: " + note for p in FP8_PASSES}, note
    except Exception as e:  # no engine (an old cuDNN, another GPU), or no cudnn-frontend
        traceback.print_exc()
        return {p: short_error(e) for p in FP8_PASSES}, ""

    def fwd_quant():
        att.quantize(("q", "k", "v"))
        att.fwd()

    def fwdbwd():
        fwd_quant()
        att.quantize(("do",))
        att.bwd()

    runs = {"fwd": att.fwd, "fwd+quant": fwd_quant, "bwd": att.bwd, "fwdbwd": fwdbwd}
    if att.gb is None:  # cuDNN built the forward only
        for p in ("bwd", "fwdbwd"):
            runs[p] = "no backward: " + short_error(att.bwd_error)
    return runs, note


def cudnn_fp8_rows(torch, F, lens, q, k, v, do, passes, a):
    """cudnn-fp8's rows [(pass, ms, ms_min, iters, note)]: build, check against BF16, time"""
    want = []
    if "fwd" in passes:
        want += ["fwd", "fwd+quant"]
    if "fwdbwd" in passes:
        want += ["bwd", "fwdbwd"]
    nan = float("nan")
    runs, note = cudnn_fp8_runs(torch, F, lens, q, k, v, do)
    out = []
    for p in want:
        if isinstance(runs[p], str):
            out.append((p, nan, nan, 0, runs[p]))
            continue
        try:
            ms, mn = bench(torch, runs[p], a.warmup, a.iters)
            out.append((p, ms, mn, a.iters, note))
        except Exception as e:
            traceback.print_exc()
            out.append((p, nan, nan, 0, short_error(e)))
    return out


TIMING_COLS = [("workload", "s", "", "workload name"), ("system", "s", "", "peer"),
               ("pass", "s", "", "fwd, fwdbwd (forward + backward of Q, K, V); cudnn-fp8 also fwd+quant and bwd"),
               ("total_tokens", "i", "tokens", "packed tokens"),
               ("num_docs", "i", "docs", "documents"), ("heads_q", "i", "heads", "query heads"),
               ("heads_kv", "i", "heads", "key/value heads"), ("head_dim", "i", "1", "head dimension"),
               ("ms", "f", "ms", "median over iters CUDA-event timings"), ("ms_min", "f", "ms", "fastest timing"),
               ("iters", "i", "1", "timed calls"),
               ("flops", "f", "FLOP", "causal-discounted FLOPs of the pass: fwd F = 4 D Hq sum L(L+1)/2, "
                "fwdbwd 3.5 F (backward 2.5 F)"),
               ("tflops", "f", "TFLOP/s", "flops / ms"),
               ("note", "s", "", "empty, why the row has no time, or (cudnn-fp8) its check against BF16")]


def write_h5(a, rows, torch):
    write_result(a, torch, "latency_peers", [("timings", "median latency per workload, peer and pass (schema of "
                                              "experiments/latency)", rows, TIMING_COLS)])


def write_result(a, torch, experiment, tables, attrs=()):
    """an HDF5 result in the experiments' schema, written atomically: the root provenance
    attributes (+ attrs: name, value pairs) and per table (group, description, rows, columns)
    one dataset per column (columns: name, type s / i / f, units, description)"""
    import h5py
    tmp = a.out + f".tmp.{os.getpid()}"
    with h5py.File(tmp, "w") as f:
        at = f.attrs
        at["experiment"] = experiment
        at["schema_version"] = np.int64(1)
        at["git_commit"] = os.environ.get("FLAMIA_GIT_COMMIT", "unknown")
        at["argv"] = " ".join(sys.argv)
        at["seed"] = np.int64(a.seed)
        at["backend"] = "cuda"
        at["device_name"] = str(torch.cuda.get_device_name())
        at["gpu_name"] = str(torch.cuda.get_device_name())
        at["cuda_runtime"] = str(torch.version.cuda)
        at["torch_version"] = str(torch.__version__)
        at["cudnn_version"] = str(torch.backends.cudnn.version())
        at["utc_time"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        at["hostname"] = socket.gethostname()
        at["cpu_model"] = platform.processor() or "unknown"
        at["warmup"] = np.int64(a.warmup)
        at["iters"] = np.int64(a.iters)
        for k, v in attrs:
            at[k] = v
        for group, desc, rows, cols in tables:
            g = f.create_group(group)
            g.attrs["description"] = desc
            g.attrs["rows"] = np.int64(len(rows))
            for name, t, units, cdesc in cols:
                vals = [r[name] for r in rows]
                if t == "s":
                    width = max([len(str(x).encode()) for x in vals] + [1])
                    data = np.array([str(x).encode() for x in vals], dtype=f"S{width}")
                elif t == "i":
                    data = np.array(vals, dtype=np.int64)
                else:
                    data = np.array(vals, dtype=np.float64)
                d = g.create_dataset(name, data=data)
                d.attrs["units"] = units
                d.attrs["description"] = cdesc
    os.replace(tmp, a.out)
    print(f"{os.path.basename(sys.argv[0])}: wrote {a.out} ({', '.join('%d %s' % (len(t[2]), t[0]) for t in tables)})")


if __name__ == "__main__":
    main()
