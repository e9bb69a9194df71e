#!/usr/bin/env python3
"""join.py - ratios of the latency driver (ours) against peers.py (peers), per workload.

  join.py ours.h5 peers.h5 [--recipe mxfp8] [--pass fwd] [--tsv out.tsv]

Two Markdown tables (paste them into docs/perf-notes.md):
 1. forward: our quantize, forward and fwd+quant medians for the recipe, every peer's
    forward median (--pass), the fastest peer, and speedups = peer_ms / our_ms (> 1: we
    are faster) for the forward alone and for forward + quantization;
 2. training call: our `train` median (quantize + forward + backward, one CUDA graph
    replay) against every peer's `fwdbwd` (forward + backward; BF16 needs no
    quantization), the fastest peer, speedup = peer_ms / our_ms, and our kernel-only
    backward (`bwd`) in ms and TFLOP/s (FLOPs = 2.5 x the causal forward's).
Files without the training-call passes (older runs) print table 2 with n/a cells.
--tsv writes table 1 to the given path and table 2 beside it (out.train.tsv).
"""
import argparse
import math

import h5py


def table(path, name="timings"):
    with h5py.File(path, "r") as f:
        g = f[name]
        cols = {k: g[k][...] for k in g.keys()}
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    n = len(next(iter(cols.values())))
    rows = []
    for i in range(n):
        r = {}
        for k, v in cols.items():
            x = v[i]
            r[k] = x.decode() if isinstance(x, bytes) else (x.item() if hasattr(x, "item") else x)
        rows.append(r)
    return rows, attrs


def fmt(x):
    if isinstance(x, float):
        return "n/a" if math.isnan(x) else f"{x:.3f}"
    return str(x)


def emit(hdr, out, tsv):
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in out:
        print("| " + " | ".join(fmt(x) for x in r) + " |")
    if tsv:
        with open(tsv, "w") as f:
            f.write("\t".join(hdr) + "\n")
            for r in out:
                f.write("\t".join(fmt(x) for x in r) + "\n")


def fastest(pm):
    """(name, ms) of the fastest measured peer, ("", NaN) when none"""
    valid = {s: m for s, m in pm.items() if not math.isnan(m)}
    best = min(valid, key=valid.get) if valid else ""
    return best, valid.get(best, float("nan"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ours")
    ap.add_argument("peers")
    ap.add_argument("--recipe", default="mxfp8")
    ap.add_argument("--pass", dest="peer_pass", default="fwd", help="peers' pass of the forward table")
    ap.add_argument("--tsv")
    a = ap.parse_args()
    ours, oattr = table(a.ours)
    peers, pattr = table(a.peers)
    sysname = f"flamia-{a.recipe}"
    wls = []
    for r in ours:
        if r["workload"] not in wls:
            wls.append(r["workload"])
    psys = sorted({r["system"] for r in peers})

    def get(rows, w, s, p, col="ms"):
        for r in rows:
            if r["workload"] == w and r["system"] == s and r["pass"] == p:
                return r[col]
        return float("nan")

    print(f"ours: {a.ours} ({sysname}, commit {oattr.get('git_commit', '?')}, {oattr.get('gpu_name', '?')}, "
          f"{oattr.get('utc_time', '?')}); peers: {a.peers} (torch {pattr.get('torch_version', '?')}, "
          f"cuDNN {pattr.get('cudnn_version', '?')}); speedup = peer ms / our ms")

    # ---- 1. forward
    hdr = ["workload", "quant ms", "fwd ms", "fwd+quant ms"] + [f"{s} ms" for s in psys] + [
        "best peer", "speedup fwd", "speedup fwd+quant"]
    out = []
    for w in wls:
        q, f_, fq = (get(ours, w, sysname, p) for p in ("quant", "fwd", "fwd+quant"))
        pm = {s: get(peers, w, s, a.peer_pass) for s in psys}
        best, bm = fastest(pm)
        out.append([w, q, f_, fq] + [pm[s] for s in psys] + [best, bm / f_, bm / fq])
    print()
    print(f"Forward (peer pass {a.peer_pass}):")
    emit(hdr, out, a.tsv)

    # ---- 2. training call: our captured train_step vs the peers' forward + backward
    tsys = sorted({r["system"] for r in peers if r["pass"] == "fwdbwd"}) or psys
    hdr = ["workload", "train ms", "train TFLOP/s"] + [f"{s} fwdbwd ms" for s in tsys] + [
        "best peer", "speedup train", "bwd ms", "bwd TFLOP/s"]
    out = []
    for w in wls:
        t = get(ours, w, sysname, "train")
        pm = {s: get(peers, w, s, "fwdbwd") for s in tsys}
        best, bm = fastest(pm)
        out.append([w, t, get(ours, w, sysname, "train", "tflops")] + [pm[s] for s in tsys] +
                   [best, bm / t, get(ours, w, sysname, "bwd"), get(ours, w, sysname, "bwd", "tflops")])
    print()
    print("Training call (ours: train_step replayed from a CUDA graph = quantize + forward + backward; "
          "peers: fwdbwd; bwd = our backward alone, FLOPs 2.5 x forward):")
    emit(hdr, out, a.tsv[:-4] + ".train.tsv" if a.tsv and a.tsv.endswith(".tsv") else
         (a.tsv + ".train" if a.tsv else None))


if __name__ == "__main__":
    main()
