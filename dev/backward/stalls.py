#!/usr/bin/env python3
"""Sums an ncu source-page CSV (--page source --csv --print-source sass) of one kernel:
warp-stall samples by opcode and, where the CSV has per-reason columns, by reason; then
the 40 instructions with the most samples; with --bins N, the kernel's SASS in bins of N
instructions (program order): executed instructions per warp, share of the samples and the
two largest stall reasons of each bin, which shows how prologue, loop and epilogue split the
time (thirteenth session: the backward's epilogue was 31 % of a one-pair CTA).
With --regions ROW:LABEL,ROW:LABEL,... (rows of the CSV's body in program order, each the
first row of its region; sixteenth session's cut of bwd_main_fp8 in perf-notes): per region
the share of the samples, the instructions a warp executes per execution of the region (its
instructions' most common execution count: per sub-step in the tile loop), and its three
largest reasons.
Usage: stalls.py ncu_sass.csv [--bins N] [--regions ROW:LABEL,...]"""
import csv, sys
from collections import Counter

rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head_i = next(i for i, r in enumerate(rows) if any("Source" in c for c in r))
head, body = rows[head_i], [r for r in rows[head_i + 1:] if len(r) == len(rows[head_i])]
print("columns:", " | ".join(head))
src = next(i for i, c in enumerate(head) if c.strip() == "Source" or "Source" in c)
addr = next((i for i, c in enumerate(head) if "Address" in c), None)
samp = next((i for i, c in enumerate(head) if "Sampling" in c and "All" in c),
            next((i for i, c in enumerate(head) if "Sampl" in c), None))
num = lambda s: float(s.replace(",", "") or 0) if s.replace(",", "").replace(".", "").isdigit() else 0.0
if samp is None:
    sys.exit("no sampling column")
total = sum(num(r[samp]) for r in body)
by_op = Counter()
for r in body:
    ins = r[src].strip()
    op = ins.split()[1] if ins.startswith("@") and len(ins.split()) > 1 else (ins.split() or ["?"])[0]
    by_op[op.split(".")[0]] += num(r[samp])
print(f"\nsamples {total:.0f}; by opcode:")
for op, v in by_op.most_common(25):
    print(f"  {op:12s} {v:8.0f} {100 * v / total:5.1f} %")
reasons = [i for i, c in enumerate(head) if c.lower().startswith("stall") or "stall_" in c.lower()]
if reasons:
    print("\nby reason:")
    for i in sorted(reasons, key=lambda i: -sum(num(r[i]) for r in body))[:15]:
        v = sum(num(r[i]) for r in body)
        print(f"  {head[i][:40]:40s} {v:8.0f} {100 * v / max(total, 1):5.1f} %")
print("\ntop instructions:")
for r in sorted(body, key=lambda r: -num(r[samp]))[:40]:
    print(f"  {r[addr] if addr is not None else '':>8s} {num(r[samp]):7.0f}  {r[src].strip()[:90]}")

ex = next((i for i, c in enumerate(head) if c.strip() == "Instructions Executed"), None)


def top_reasons(chunk, k, unit):
    """the chunk's k largest issued-stall reasons, as 'name share' in % of all samples"""
    why = sorted(((sum(num(r[i]) for r in chunk), head[i]) for i in reasons if "Not Issued" not in head[i]),
                 reverse=True)[:k]
    return ", ".join(f"{w[6:] if w.startswith('stall_') else w} {100 * v / max(total, 1):.1f}{unit}" for v, w in why if v)


if "--bins" in sys.argv:
    n = int(sys.argv[sys.argv.index("--bins") + 1])
    # warps per launch: the most executed instruction count of the kernel's first line
    warps = num(body[0][ex]) if ex is not None else 0
    print(f"\nby bins of {n} SASS instructions (instructions per launched warp: {warps:.0f} warps ran the first line, idle CTAs included):")
    for a in range(0, len(body), n):
        chunk = body[a:a + n]
        smp = sum(num(r[samp]) for r in chunk)
        ipw = sum(num(r[ex]) for r in chunk) / warps if ex is not None and warps else 0
        print(f"  {a:6d} {ipw:8.1f} {100 * smp / max(total, 1):5.1f} %  " + top_reasons(chunk, 2, " %"))

if "--regions" in sys.argv:
    cuts = []
    for item in sys.argv[sys.argv.index("--regions") + 1].split(","):
        row, label = item.split(":", 1)
        cuts.append((int(row), label))
    cuts.sort()
    print("\nby region (samples, instructions a warp per execution of the region, largest reasons):")
    for k, (a, label) in enumerate(cuts):
        b = cuts[k + 1][0] if k + 1 < len(cuts) else len(body)
        chunk = body[a:b]
        smp = sum(num(r[samp]) for r in chunk)
        counts = Counter(num(r[ex]) for r in chunk if num(r[ex]) > 0) if ex is not None else Counter()
        per = counts.most_common(1)[0][0] if counts else 0
        ipe = sum(num(r[ex]) for r in chunk) / per if per else 0
        print(f"  {a:6d}-{b:<6d} {label[:36]:36s} {100 * smp / max(total, 1):5.1f} %  {ipe:7.1f}  " + top_reasons(chunk, 3, ""))
