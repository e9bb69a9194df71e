#!/usr/bin/env python3
"""Forty-fifth session: an opcode histogram of one kernel's SASS from ncu's source page
(`ncu --section SourceCounters --page source --csv --print-source sass ...`): per opcode (its
first token, predicate dropped, modifiers kept to the first dot), the instructions executed and
the warp-stall samples, largest first. Used on cuDNN's FP8 backward main kernel, whose source we
do not have, and on ours for comparison.
Usage: python3 dev/sessions/forty-fifth_ncu_sass.py NCU_SOURCE.csv [TOP]"""
import sys
from collections import defaultdict

from ncu_phases import load, num  # the page reader (dev/ncu_phases.py)

path, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40
rows = load(path)
cols = rows[0].keys() if rows else []
ex_col = next((c for c in cols if c.startswith("Instructions Executed")), None)
st_col = next((c for c in cols if c.startswith("Warp Stall Sampling (All")), None)
ex, st, n = defaultdict(float), defaultdict(float), defaultdict(int)
for r in rows:
    src = (r.get("Source") or "").strip()
    if not src:
        continue
    tok = src.split()
    if tok[0].startswith("@"):
        tok = tok[1:]
    if not tok:
        continue
    op = tok[0].split(".")[0] + ("." + tok[0].split(".")[1] if tok[0].count(".") and tok[0].split(".")[0] in
                                 ("LDS", "STS", "LDG", "STG", "BAR", "SYNCS", "RED", "ATOM", "MUFU", "F2FP", "HGMMA", "QGMMA", "UBLKRED", "UTMALDG", "UTMASTG", "FENCE") else "")
    ex[op] += num(r, ex_col)
    st[op] += num(r, st_col)
    n[op] += 1
tot_ex, tot_st = sum(ex.values()) or 1, sum(st.values()) or 1
print("%-18s %6s %14s %7s %12s %7s" % ("opcode", "static", "executed", "%", "stall smpl", "%"))
for op in sorted(ex, key=lambda o: -ex[o])[:top]:
    print("%-18s %6d %14.0f %6.1f%% %12.0f %6.1f%%" % (op, n[op], ex[op], 100 * ex[op] / tot_ex, st[op], 100 * st[op] / tot_st))
print("total: %d instructions, %.0f executed, %.0f stall samples (columns: %s / %s)" % (len(rows), tot_ex, tot_st, ex_col, st_col))
