#!/usr/bin/env python3
"""cost_model.py - fits the latency driver's equal-length timings to a per-SM cost model.

For a workload of D documents of L tokens (names "DxL"), H query heads and n = L / 128
tiles per document, a kernel that works on (128-token tile, head) items sees per SM
    items = D H n / SMs,   tile pairs = D H n (n + 1) / 2 / SMs   (causal).
The fit  ms = c + a items + b pairs  (least squares, or exact with 3 workloads) splits a
pass into a per-call constant, a per-item cost (prologue, first and last tile, epilogue)
and the tile loop. Used in docs/perf-notes.md (eighth session) on Table A's HDF5 file.

Usage: python3 dev/cost_model.py data/measured/h200/latency_ours.h5 [--recipe mxfp8] [--sms 132]
Needs h5py (pip install h5py, or Debian's python3-h5py). MHA workloads (the items of the
backward are key tiles per kv head: the same count when heads_kv = heads_q).
"""
import argparse
import re

import h5py


def solve(rows, cols):
    """least squares of y on the given columns of rows [(features..., y)] (normal equations)"""
    n = len(cols)
    m = [[sum(r[i] * r[j] for r in rows) for j in cols] for i in cols]
    v = [sum(r[i] * r[-1] for r in rows) for i in cols]
    for i in range(n):  # Gaussian elimination, no pivoting needed (positive definite)
        for j in range(i + 1, n):
            f = m[j][i] / m[i][i]
            m[j] = [a - f * b for a, b in zip(m[j], m[i])]
            v[j] -= f * v[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (v[i] - sum(m[i][k] * x[k] for k in range(i + 1, n))) / m[i][i]
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("h5")
    ap.add_argument("--recipe", default="mxfp8")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--passes", default="fwd,bwd")
    a = ap.parse_args()
    t = h5py.File(a.h5, "r")["timings"]
    s = lambda k: [x.decode() for x in t[k][...]]
    wl, sysn, pas, ms, hq = s("workload"), s("system"), s("pass"), t["ms"][...], t["heads_q"][...]
    for p in a.passes.split(","):
        rows, names = [], []
        for i in range(len(wl)):
            m = re.fullmatch(r"(\d+)x(\d+)", wl[i])
            if not m or sysn[i] != "flamia-" + a.recipe or pas[i] != p:
                continue
            d, n = int(m.group(1)), int(m.group(2)) // 128
            items = d * hq[i] * n / a.sms
            pairs = d * hq[i] * n * (n + 1) / 2 / a.sms
            rows.append((1.0, items, pairs, 1000.0 * ms[i]))
            names.append(wl[i])
        if len(rows) < 3:
            print("%s: %d equal-length workloads, need 3" % (p, len(rows)))
            continue
        b2 = solve(rows, [1, 2])
        b3 = solve(rows, [0, 1, 2])
        print("%s (%s, %d SMs): items + pairs: %.2f us/item, %.3f us/pair; with a constant: %.1f us + %.2f us/item + %.3f us/pair"
              % (p, a.recipe, a.sms, b2[0], b2[1], b3[0], b3[1], b3[2]))
        for nm, r in zip(names, rows):
            fit = b3[0] + b3[1] * r[1] + b3[2] * r[2]
            print("  %-8s measured %8.1f us  fit %8.1f  per-item share %4.1f %%  constant %4.1f %%"
                  % (nm, r[3], fit, 100 * b3[1] * r[1] / fit, 100 * b3[0] / fit))


if __name__ == "__main__":
    main()
