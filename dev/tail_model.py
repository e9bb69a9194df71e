#!/usr/bin/env python3
"""tail_model.py - the backward main kernel's launch order against a list-scheduling model.

One CTA per (key tile, kv head), one CTA per SM at a time; the hardware hands the CTAs out in
launch order to the first free SM. A CTA of key tile t in a document of n tiles sees n - t
query tiles (causal, MHA) and takes  per_cta + per_pair * (n - t)  microseconds, the two
per-SM costs of dev/cost_model.py's fit of Table A. The model prints each order's makespan
against the ideal (all work / SMs): what the order leaves idle at the end of the run.

Orders:  head-slowest  grid (slots, Hkv): every head's documents in turn (before v23);
         head-fastest  1-D grid, kv head fastest, then key tile, then document (v23);
         longest-first the CTAs meeting the most query tiles first, ties in head-fastest's
                       order (dev/backward/v112_lpt_order.patch, forty-seventh session).
GQA (gqa-16x1024: 16 query heads over 4 kv heads): one CTA per kv head walks the group's query
heads, so its tile pairs are group x (n - t) and the grid has Hkv x the slots. The forty-seventh
session's prediction for v112 came from this model with --per-cta 7 --per-pair 7.2 (the main
kernel's costs since v28 / v87): gqa-16x1024 +24.9 % over ideal in head-fastest order, +3.1 %
longest first (-17 %); the MHA workloads +0.4..+1.9 % and +0.1..+0.8 %. Measured in the
forty-eighth session: gqa-16x1024's whole backward -8.8 % (the main kernel ~-11 %), but longest
first on MHA +4..+16 % and on gqa-4x4096 +4.8 %: the model has no L2, and longest first puts
the CTAs of many documents in flight at once. Trust it for the tail, not for reorderings that
change which documents run together.
Forty-ninth session: the threshold between 2048 and 4096 tokens, predicted here (longest first
against the grid's order: gqa-6x2560 -17 %, gqa-5x3072 -17 %, gqa-4x3584 -3 %) and measured
-11.0 %, -12.2 %, -0.1 %: the model's change plus 3-6 points from 2048 to 4096 tokens (whole backward, no L2 here), so the
order now reaches 3072-token documents (backward.cu kOrderMaxSeqlen).
Fiftieth session: groups of 2 (gqa8-) and 8 (gqa2-) added for v114 (the threshold per group):
longest first against the grid's order, groups of 2 -8.2 / -1.4 / -2.6 % at 16x1024 / 8x2048 /
5x3072, groups of 8 -35.1 / -31.6 / -33.2 % at 16x1024 / 5x3072 / 4x4096 and 0 at 2x8192.
The twelfth session's prediction for v23 (dev/backward/v23_head_fastest.patch) came from
this model: -5 % at 4x4096, -1.3 % at 16x4096, -3 % at 16x1024; measured -4.8, -1.8, -3.6.

Usage: python3 dev/tail_model.py [--per-cta 26.71] [--per-pair 8.657] [--sms 132] [--heads 16]
"""
import argparse
import heapq
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments", "latency"))
from ratios import parse_workload  # noqa: E402  (standard library only)


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
    if order == "longest-first":  # stable: ties keep head-fastest's order
        return sorted(ctas(lens, heads, "head-fastest"), key=lambda c: -c[3])
    raise ValueError(order)


# the latency driver's fixed-length workloads (logu-* are random: not modelled), by their names
# as experiments/latency/ratios.py reads them (gqa-: 4 kv heads, gqaN-: N kv heads)
WORKLOADS = [
    "4x4096", "16x4096", "16x1024", "64x1024", "8192+32x256", "8192+224x256", "gqa-16x1024",
    # the launch order's threshold (forty-eighth and forty-ninth sessions)
    "gqa-8x2048", "gqa-6x2560", "gqa-5x3072", "gqa-4x3584", "gqa-4x4096",
    # other groups (fiftieth session, v114)
    "gqa8-16x1024", "gqa8-8x2048", "gqa8-5x3072", "gqa8-4x4096",
    "gqa2-16x1024", "gqa2-5x3072", "gqa2-4x4096", "gqa2-2x8192",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-cta", type=float, default=26.71, help="us per CTA (cost_model.py fit)")
    ap.add_argument("--per-pair", type=float, default=8.657, help="us per tile pair (cost_model.py fit)")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--heads", type=int, default=16)
    a = ap.parse_args()
    orders = ("head-slowest", "head-fastest", "longest-first")
    print("| workload | ideal ms | " + " | ".join("%s ms | over ideal" % o for o in orders) + " |")
    print("|---|---|" + "---|---|" * len(orders))
    for name in WORKLOADS:
        lens, hkv = parse_workload(name, a.heads)
        group = a.heads // hkv
        res = {}
        for order in orders:
            dur = [a.per_cta + a.per_pair * q * group for (_, _, _, q) in ctas(lens, hkv, order)]
            res[order] = makespan(dur, a.sms) / 1000
            ideal = sum(dur) / a.sms / 1000
        print(f"| {name} | {ideal:.3f} | " + " | ".join(f"{res[o]:.3f} | {100 * (res[o] / ideal - 1):+.1f} %"
                                                     for o in orders) + " |")


if __name__ == "__main__":
    main()
