#!/usr/bin/env python3
"""tail_model.py - the backward main kernel's launch order against a list-scheduling model.

One CTA per (key tile, kv head), one CTA per SM at a time; the hardware hands the CTAs out in
launch order to the first free SM. A CTA of key tile t in a document of n tiles sees n - t
query tiles (causal, MHA) and takes  per_cta + per_pair * (n - t)  microseconds, the two
per-SM costs of dev/cost_model.py's fit of Table A. The model prints each order's makespan
against the ideal (all work / SMs): what the order leaves idle at the end of the run.

Orders:  head-slowest  grid (slots, Hkv): every head's documents in turn (before v23);
         head-fastest  1-D grid, kv head fastest, then key tile, then document (v23).
The twelfth session's prediction for v23 (dev/backward/v23_head_fastest.patch) came from
this model: -5 % at 4x4096, -1.3 % at 16x4096, -3 % at 16x1024; measured -4.8, -1.8, -3.6.

Usage: python3 dev/tail_model.py [--per-cta 26.71] [--per-pair 8.657] [--sms 132] [--heads 16]
"""
import argparse
import heapq


def makespan(durations, sms):
    free = [0.0] * sms
    end = 0.0
    for d in durations:
        t = heapq.heappop(free) + d
        end = max(end, t)
        heapq.heappush(free, t)
    return end


def ctas(lens, heads, order):
    """(head, document, key tile, query tiles seen) in launch order"""
    tiles = [(d, t, (L + 127) // 128 - t) for d, L in enumerate(lens) for t in range((L + 127) // 128)]
    if order == "head-slowest":
        return [(h, d, t, q) for h in range(heads) for (d, t, q) in tiles]
    if order == "head-fastest":
        return [(h, d, t, q) for (d, t, q) in tiles for h in range(heads)]
    raise ValueError(order)


WORKLOADS = {  # the latency driver's fixed-length workloads (logu-* are random: not modelled)
    "4x4096": [4096] * 4, "16x4096": [4096] * 16, "16x1024": [1024] * 16, "64x1024": [1024] * 64,
    "8192+32x256": [8192] + [256] * 32, "8192+224x256": [8192] + [256] * 224,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-cta", type=float, default=26.71, help="us per CTA (cost_model.py fit)")
    ap.add_argument("--per-pair", type=float, default=8.657, help="us per tile pair (cost_model.py fit)")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--heads", type=int, default=16)
    a = ap.parse_args()
    print("| workload | ideal ms | head-slowest ms | over ideal | head-fastest ms | over ideal | change |")
    print("|---|---|---|---|---|---|---|")
    for name, lens in WORKLOADS.items():
        res = {}
        for order in ("head-slowest", "head-fastest"):
            dur = [a.per_cta + a.per_pair * q for (_, _, _, q) in ctas(lens, a.heads, order)]
            res[order] = makespan(dur, a.sms) / 1000
            ideal = sum(dur) / a.sms / 1000
        s, f = res["head-slowest"], res["head-fastest"]
        print(f"| {name} | {ideal:.3f} | {s:.3f} | {100 * (s / ideal - 1):+.1f} % | {f:.3f} | "
              f"{100 * (f / ideal - 1):+.1f} % | {100 * (f / s - 1):+.1f} % |")


if __name__ == "__main__":
    main()
