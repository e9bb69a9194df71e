#!/usr/bin/env python3
"""plotdata.py - turns an experiment's TSV export into the plot-ready TSV a figure reads.

    plotdata.py FIGURE EXPORT_DIR OUT.tsv --config JSON

FIGURE: leak_probe, accuracy, ds_underflow, mismatch, sched_ablation (figures/<FIGURE>.gp).
Also writes OUT.tsv.caption (one line: hardware, date, commit) for the figure's footer.
Standard library only."""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fxtsv import Result, uniq  # noqa: E402

FLOOR = 1e-9  # where exact zeros are drawn on log axes


def leak(res, cfg):
    s = res.table("summary")
    kinds = uniq(x["kind"] for x in s)
    recipes = [r for r in cfg["recipes"] if any(x["recipe"] == r for x in s)]
    head = ["recipe"] + kinds + kinds
    rows = []
    for r in recipes:
        row = [r]
        for col in ("o_rel_max", "dq_rel_max"):
            for k in kinds:
                v = [x[col] for x in s if x["recipe"] == r and x["kind"] == k][0]
                row.append(FLOOR if (isinstance(v, float) and (v == 0 or math.isnan(v))) else v)
        rows.append(row)
    return head, rows


def accuracy(res, cfg):
    t = res.table("accuracy")
    wls = uniq(x["workload"] for x in t)
    recipes = [r for r in cfg["recipes"] if any(x["recipe"] == r for x in t)]
    head = ["workload"] + recipes + recipes
    rows = []
    for w in wls:
        row = [w]
        for col in ("cos_o", "cos_dq"):
            for r in recipes:
                v = [x[col] for x in t if x["workload"] == w and x["recipe"] == r][0]
                row.append(max(1.0 - v, FLOOR))
        rows.append(row)
    return head, rows


def ds(res, cfg):
    t = res.table("ds_rules")
    rules = uniq(x["rule"] for x in t)
    wls = uniq(x["workload"] for x in t)
    head = ["rule"] + wls + wls
    rows = []
    for r in rules:
        row = [r]
        for col, mul in (("zero_rate", 100.0), ("ds_norm_err", 1.0)):
            for w in wls:
                row.append(mul * [x[col] for x in t if x["workload"] == w and x["rule"] == r][0])
        rows.append(row)
    return head, rows


def mismatch(res, cfg):
    """per case: the dQ / dK change from the matched step, per workload (log axis: the matched
    case itself and cases that move nothing are drawn at FLOOR)"""
    t = res.table("mismatch")
    cases = [c for c in uniq(x["case"] for x in t) if c != "matched"]
    wls = uniq(x["workload"] for x in t)
    head = ["case"] + wls + wls
    rows = []
    for c in cases:
        row = [c]
        for col in ("vs_matched_dq", "vs_matched_dk"):
            for w in wls:
                v = [x[col] for x in t if x["workload"] == w and x["case"] == c][0]
                row.append(max(v, FLOOR))
        rows.append(row)
    return head, rows


def sched(res, cfg):
    t = res.table("makespan")
    wls = uniq(x["workload"] for x in t)
    combos = [("natural", "static"), ("natural", "dynamic"), ("longest_first", "static"),
              ("longest_first", "dynamic")]
    head = ["workload"] + 2 * ["%s order, %s claiming" % (o.replace("_", "-"), p) for o, p in combos]
    rows = []
    for w in wls:
        row = [w]
        for p in ("fwd", "bwd"):
            for o, pol in combos:
                row.append([x["efficiency"] for x in t if x["workload"] == w and x["pass"] == p
                            and x["order"] == o and x["policy"] == pol][0])
        rows.append(row)
    return head, rows


def training(res, cfg):
    """per step: each case's training loss and gradient norm, each a moving mean over 20 steps
    (a row is one packed sample: the raw curve is mostly the rows' own difficulty)"""
    t = res.table("curve")
    cases = uniq(x["case"] for x in t)
    series = {c: [(x["loss"], x["grad_norm"]) for x in t if x["case"] == c] for c in cases}  # in step order
    steps = max(len(v) for v in series.values())
    head = ["step"] + cases + cases
    rows = []
    for s in range(steps):
        row = [s]
        for k in (0, 1):
            for c in cases:
                win = [p[k] for p in series[c][max(0, s - 19):s + 1]]
                row.append(sum(win) / len(win) if s < len(series[c]) else float("nan"))
        rows.append(row)
    return head, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("figure", choices=["leak_probe", "accuracy", "ds_underflow", "mismatch", "sched_ablation",
                                       "training", "training_mismatch"])
    ap.add_argument("export_dir")
    ap.add_argument("out")
    ap.add_argument("--config", required=True)
    a = ap.parse_args()
    cfg = json.loads(a.config)
    res = Result(a.export_dir)
    head, rows = {"leak_probe": leak, "accuracy": accuracy, "ds_underflow": ds, "mismatch": mismatch,
                  "sched_ablation": sched, "training": training, "training_mismatch": training}[a.figure](res, cfg)
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\t".join(head) + "\n")
        for r in rows:
            f.write("\t".join(x if isinstance(x, str) else "%.10g" % x for x in r) + "\n")
    with open(a.out + ".caption", "w", encoding="utf-8") as f:
        f.write(res.provenance(inputs=a.figure not in ("sched_ablation", "training", "training_mismatch"),
                               shapes=not a.figure.startswith("training")).replace('"', "'") + "\n")


if __name__ == "__main__":
    main()
