#!/usr/bin/env python3
"""join.py - ratios of the latency driver (ours) against peers.py (peers), per workload.

  join.py ours.h5 peers.h5 [--recipe mxfp8] [--tsv out.tsv]

For each workload: our quantize, forward and fwd+quant medians for the recipe, every
peer's forward median, the fastest peer, and speedups = peer_ms / our_ms (> 1: we are
faster) for the forward alone and for forward + quantization. Prints a Markdown table
(paste it into docs/perf-notes.md) and optionally writes the same rows as TSV.
"""
import argparse
import math

import h5py
import numpy as np


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ours")
    ap.add_argument("peers")
    ap.add_argument("--recipe", default="mxfp8")
    ap.add_argument("--pass", dest="peer_pass", default="fwd")
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

    def get(rows, w, s, p):
        for r in rows:
            if r["workload"] == w and r["system"] == s and r["pass"] == p:
                return r["ms"]
        return float("nan")

    hdr = ["workload", "quant ms", "fwd ms", "fwd+quant ms"] + [f"{s} ms" for s in psys] + [
        "best peer", "speedup fwd", "speedup fwd+quant"]
    out = []
    for w in wls:
        q, f_, fq = (get(ours, w, sysname, p) for p in ("quant", "fwd", "fwd+quant"))
        pm = {s: get(peers, w, s, a.peer_pass) for s in psys}
        valid = {s: m for s, m in pm.items() if not math.isnan(m)}
        best = min(valid, key=valid.get) if valid else ""
        bm = valid.get(best, float("nan"))
        out.append([w, q, f_, fq] + [pm[s] for s in psys] + [best, bm / f_, bm / fq])

    def fmt(x):
        if isinstance(x, float):
            return "n/a" if math.isnan(x) else f"{x:.3f}"
        return str(x)

    print(f"ours: {a.ours} ({sysname}, commit {oattr.get('git_commit', '?')}, {oattr.get('gpu_name', '?')}, "
          f"{oattr.get('utc_time', '?')}); peers: {a.peers} (torch {pattr.get('torch_version', '?')}, "
          f"cuDNN {pattr.get('cudnn_version', '?')}); peer pass {a.peer_pass}; speedup = peer ms / our ms")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in out:
        print("| " + " | ".join(fmt(x) for x in r) + " |")
    if a.tsv:
        with open(a.tsv, "w") as f:
            f.write("\t".join(hdr) + "\n")
            for r in out:
                f.write("\t".join(fmt(x) for x in r) + "\n")


if __name__ == "__main__":
    main()
