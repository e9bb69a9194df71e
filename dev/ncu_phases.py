#!/usr/bin/env python3
"""A kernel's time by program phase from ncu's SASS source page (`ncu --section SourceCounters
--page source --csv --print-source sass ...`, plain or .gz): the warp-stall samples (where the
warps spend their time), instructions executed and the top stall reasons of each phase.

Phases are address ranges given as offsets from the kernel's first instruction, each with a
name (PHASES: "0x0:kernel start,0x3ea0:tile start,..."); without PHASES the listing is split at
its landmarks (wgmma, barriers, waits, fences, TMA, MUFU runs) and every segment above 0.3 % of
the samples is printed with its offset, after the loops (each branch back to a lower address, with
its target), so that the phases can be chosen from it. TOP=N prints instead the N instructions with
the most samples, each with its two largest stall reasons (eighty-third session).
Forty-sixth session (docs/perf-notes.md, "Backward kernel": the sub-step by phase).
Usage: [PHASES=... | TOP=N] python3 dev/ncu_phases.py NCU_SOURCE.csv[.gz]"""
import csv
import gzip
import os
import re
import sys

LANDMARKS = ("QGMMA", "HGMMA", "BAR.SYNC", "BAR.ARV", "BAR.RED", "DEPBAR", "B2R", "UTMAREDG", "UTMALDG",
             "SYNCS", "FENCE", "REDUX", "MUFU.EX2", "LDGSTS", "EXIT")


def load(path):
    """the source table's rows (dicts by column name) of an ncu SASS page, plain or .gz
    (dev/sessions/forty-fifth_ncu_sass.py reads its pages through this too)"""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"Address"') or l.startswith('"#"')), None)
    if start is None:
        sys.exit("no source table in " + path)
    return list(csv.DictReader(lines[start:]))


def num(row, col):
    """a counter column's value (ncu may print thousands separators); 0 when absent"""
    return float((row.get(col) or "0").replace(",", "") or 0) if col else 0.0


def main():
    rows = load(sys.argv[1])
    samples = lambda r: num(r, "Warp Stall Sampling (All Samples)")
    executed = lambda r: num(r, "Instructions Executed")
    reasons = [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c]
    base = int(rows[0]["Address"], 16)
    total = sum(samples(r) for r in rows) or 1
    top_n = int(os.environ.get("TOP", "0"))
    if top_n:
        # the single instructions that wait longest (the eighty-third session's reading): offset,
        # executions, samples, share, the two largest stall reasons
        print("| offset | executed | samples | share | instruction | top stall reasons |\n|---|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: -samples(r))[:top_n]:
            top = sorted(((num(r, c), c) for c in reasons), reverse=True)[:2]
            print("| 0x%05x | %d | %d | %.1f %% | `%s` | %s |" % (
                int(r["Address"], 16) - base, executed(r), samples(r), 100.0 * samples(r) / total,
                (r.get("Source") or "").strip()[:60], ", ".join("%s %d" % (c[6:], v) for v, c in top if v)))
        return
    spec = os.environ.get("PHASES")
    if spec:
        phases = [(int(o, 16), name) for o, name in (p.split(":", 1) for p in spec.split(","))]
        acc = [[0, 0, {}] for _ in phases]
        for r in rows:
            off = int(r["Address"], 16) - base
            k = max((i for i, (o, _) in enumerate(phases) if off >= o), default=0)
            acc[k][0] += samples(r)
            acc[k][1] += executed(r)
            for c in reasons:
                acc[k][2][c] = acc[k][2].get(c, 0) + num(r, c)
        print("| phase | stall samples | instructions | top stall reasons |\n|---|---|---|---|")
        for (off, name), (s, e, d) in zip(phases, acc):
            t = sum(d.values()) or 1
            top = sorted(d.items(), key=lambda kv: -kv[1])[:3]
            print("| %s (0x%x) | %.1f %% | %.1f M | %s |" % (name, off, 100.0 * s / total, e / 1e6,
                  ", ".join("%s %.0f %%" % (c[6:], 100.0 * v / t) for c, v in top)))
        return
    segs, cur = [], None
    for r in rows:
        src = r.get("Source") or ""
        if cur is None or any(k in src for k in LANDMARKS):
            if cur and not ("MUFU" in src and "MUFU" in cur["src"]):
                segs.append(cur)
                cur = None
            if cur is None:
                cur = {"off": int(r["Address"], 16) - base, "src": src.strip()[:60], "s": 0, "n": 0, "e": 0}
        cur["s"] += samples(r)
        cur["n"] += 1
        cur["e"] += executed(r)
    segs.append(cur)
    # the loops: every branch back to a lower address (the phases' natural edges)
    for r in rows:
        src = r.get("Source") or ""
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)\s*$", src)
        if m and int(m.group(1), 16) < int(r["Address"], 16):
            print("loop 0x%05x..0x%05x  %8.2f M executed  %s" % (int(m.group(1), 16) - base,
                  int(r["Address"], 16) - base, executed(r) / 1e6, src.strip()[:40]))
    for s in segs:
        if s["s"] > 0.003 * total:
            print("0x%05x  %4d instructions  %5.1f %% of samples  %8.2f M executed  %s"
                  % (s["off"], s["n"], 100.0 * s["s"] / total, s["e"] / 1e6, s["src"]))


if __name__ == "__main__":
    main()
