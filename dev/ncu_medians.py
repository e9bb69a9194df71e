#!/usr/bin/env python3
# Medians of the per-kernel durations that dev/ncu_durations.sh prints (one line a launch).
# Usage: python3 dev/ncu_medians.py FILE
import sys, collections, statistics
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3: f = [f[0], "(unnamed: the quantizer)"] + f[1:]  # a name the awk could not cut
    if len(f) < 4: continue
    unit = {"ms": 1000.0, "msecond": 1000.0, "us": 1.0, "usecond": 1.0, "ns": 0.001, "nsecond": 0.001}
    v = float(f[2].replace(",", "")) * unit.get(f[3], float("nan"))
    d[f[1]].append(v)
for k in sorted(d): print("  %-28s %4d launches  median %9.1f us" % (k, len(d[k]), statistics.median(d[k])))
