#!/usr/bin/env python3
"""test_render_gpu.py - the GPU tables of the pipeline (accuracy_gpu, Table B on the kernels,
Table A, Table D's exact-option and deterministic-dQ costs, the O-sum ablation, packed vs padded, the
one-process acceptance ratios):
rendered from the HDF5 measurements shipped in data/measured/<gpu>/ through h5totsv, a CPU run
on other inputs left out of the comparison, and a missing measurement rendered as "needs a GPU
run" with no numbers.
    test_render_gpu.py H5TOTSV ACCURACY_DRIVER SOURCE_ROOT TMPDIR"""
import glob
import json
import os
import subprocess
import sys

h5totsv, accuracy_driver, root, tmp = sys.argv[1:5]
sys.path.insert(0, os.path.join(root, "pipelines", "scripts"))
from fxtsv import Result  # noqa: E402
render = os.path.join(root, "pipelines", "scripts", "render_tables.py")
cfg = json.dumps({"recipes": ["bf16", "mxfp8", "mxfp8-exact", "nvfp4", "fp8-tensor", "mx-floor"],
                  "paper_accuracy": {"mxfp8": {"o": 0.9988, "dq": 0.9979}}, "peers": {}})
failures = 0


def check(cond, what):
    global failures
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    failures += 0 if cond else 1


def run(table, name, *inputs, md2=True):
    out = [os.path.join(tmp, "%s.%s" % (name, e)) for e in ("md", "tex", "2.md", "2.tex")]
    cmd = [sys.executable, render, table, "--md", out[0], "--tex", out[1], "--config", cfg]
    if md2:
        cmd += ["--md2", out[2], "--tex2", out[3]]
    subprocess.run(cmd + ["h5totsv=" + h5totsv] + list(inputs), check=True)
    return [open(p, encoding="utf-8").read() if md2 or p == out[0] else None for p in (out[0], out[2])]


def rows(md):
    return [l for l in md.splitlines() if l.startswith("| ") and not l.startswith("| recipe")
            and not l.startswith("| workload")]


def cells(row):
    return [c.strip() for c in row.strip("|").split("|")]


acc = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "accuracy_gpu.h5")))
leak = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "leak_probe_gpu.h5")))
check(acc and leak, "shipped GPU measurements found (data/measured/*/accuracy_gpu.h5, leak_probe_gpu.h5)")

if acc:
    # a CPU export on other inputs: must not appear as the comparison column
    cpu_h5 = os.path.join(tmp, "cpu-other.h5")
    subprocess.run([accuracy_driver, "--out", cpu_h5, "--workloads", "2x64,1x33",
                    "--heads", "2", "--scale", "1", "--recipes", "mxfp8", "--quiet"], check=True)
    # the driver rewrites its file after every workload; the last write says it is complete
    meta_dir = os.path.join(tmp, "cpu-other-tsv")
    subprocess.run([h5totsv, cpu_h5, meta_dir], check=True, stdout=subprocess.DEVNULL)
    meta = Result(meta_dir).meta
    check(meta.get("complete") == "1" and meta.get("workloads") == "2x64,1x33" and
          meta.get("workloads_requested") == "2x64,1x33", "accuracy driver: complete = 1, every workload in the file")
    md, md2 = run("accuracy_gpu", "acc", "gpu=" + acc[0], "cpu=" + cpu_h5)
    r = rows(md)
    check([cells(x)[0] for x in r] == ["bf16", "mxfp8", "mxfp8-exact"], "accuracy_gpu: one row per GPU recipe")
    cos = [float(c) for x in r for c in cells(x)[1:7]]
    check(len(cos) == 18 and all(0.9 < c <= 1.0 for c in cos), "accuracy_gpu: 6 cosines per row, in (0.9, 1]")
    check("CPU reference" not in md, "accuracy_gpu: a CPU run on other inputs is not shown as the comparison")
    check("NVIDIA" in md and "commit" in md, "accuracy_gpu: caption names the GPU and the commit")
    check(len(rows(md2)) >= 1 and all(len(cells(x)) == 4 for x in rows(md2)),
          "accuracy_gpu per workload: workload + 3 recipe columns without the CPU comparison")

if leak:
    md, md2 = run("table_b_leak", "leak", "leak=" + leak[0])
    ex = [x for x in rows(md) if cells(x)[0] == "mxfp8-exact"]
    check(len(ex) == 1 and all(c in ("0", "0 / 0") for c in cells(ex[0])[2:9]),
          "Table B on the kernels: mxfp8-exact bit-identical before the perturbation (every kind)")
    check("sm90 kernels" in md and "CPU-reference emulations" not in md, "Table B on the kernels: says so")

lat = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "latency_ours.h5")))
if lat:
    md, _ = run("table_d_gpu", "exact", *["h5_%03d=%s" % (i, f) for i, f in enumerate(lat)], md2=False)
    r = rows(md)
    costs = [c for x in r for c in cells(x)[3::3]]
    check(len(r) >= 1 and all(len(cells(x)) == 10 for x in r), "Table D exact cost: workload + 3 passes x 3 columns")
    check(all(c == "-" or (c.endswith("%") and abs(float(c[:-1])) < 100) for c in costs) and
          any(c != "-" for c in costs), "Table D exact cost: costs are percentages")
# Table A: one table per pass; an FP8 peer (cudnn-fp8) is compared with its own fwd+quant and bwd rows
lat_all = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "latency*.h5")))
if lat_all:
    md, _ = run("table_a_latency", "table-a", *["h5_%03d=%s" % (i, f) for i, f in enumerate(lat_all)], md2=False)
    parts = {p.split(")")[0]: p for p in md.split("**Table A - latency (")[1:]}
    check({"quant", "fwd", "fwd+quant", "bwd", "train"} <= set(parts), "Table A: quant, fwd, fwd+quant, bwd, train tables")
    check(all("fastest peer / fastest flamia" in parts[p] for p in ("fwd", "fwd+quant", "train")),
          "Table A: fwd, fwd+quant and train compare with the peers")
    if "| cudnn-fp8 (ms)" in parts.get("fwd", ""):  # a measurement with the FP8 peer
        check("| cudnn-fp8 (ms)" in parts["fwd+quant"] and "cudnn-fp8 (fwd)" not in parts["fwd+quant"],
              "Table A fwd+quant: cudnn-fp8 by its own fwd+quant, not its forward alone")
        check("| cudnn-fp8 (ms)" in parts["bwd"] and "fastest peer / fastest flamia" in parts["bwd"],
              "Table A bwd: our backward against cudnn-fp8's")
        check("cudnn-fp8 (fwdbwd) (ms)" in parts["train"] and "cudnn-bf16 (fwdbwd) (ms)" in parts["train"],
              "Table A train: the peers' forward + backward, cudnn-fp8's with its quantization")
md, _ = run("table_d_gpu", "exact-none", md2=False)
check("Needs a GPU run" in md and not rows(md), "Table D exact cost without a measurement")

det = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "deterministic*.h5")))
if det:
    md, _ = run("table_d_det", "det", *["det_%03d=%s" % (i, f) for i, f in enumerate(det)], md2=False)
    r = rows(md)
    check(len(r) >= 1 and all(len(cells(x)) == 5 for x in r), "Table D deterministic cost: workload, recipe, 2 times, cost")
    check(all(float(cells(x)[3]) > 0 and float(cells(x)[2]) > 0 and cells(x)[4].endswith("%") for x in r),
          "Table D deterministic cost: both times measured, cost a percentage")
    check("NVIDIA" in md and "commit" in md, "Table D deterministic cost: caption names the GPU and the commit")
md, _ = run("table_d_det", "det-none", md2=False)
check("Needs a GPU run" in md and not rows(md), "Table D deterministic cost without a measurement")

osum = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "osum_ablation_gpu.h5")))
if osum:
    md, _ = run("osum_ablation", "osum", "osum=" + osum[0], md2=False)
    r = rows(md)
    check(len(r) >= 2 and all(len(cells(x)) == 10 for x in r), "O-sum ablation: workload, recipe, interval + 7 columns")
    check(any(cells(x)[2] == "never" for x in r) and all(cells(x)[8].endswith("%") for x in r if cells(x)[2] == "never"),
          "O-sum ablation: the no-sum row present, times relative to it")
md, _ = run("osum_ablation", "osum-none", md2=False)
check("Needs a GPU run" in md and not rows(md), "O-sum ablation without a measurement")

# packed vs padded: a CPU run of the driver renders like the GPU's (no workspace there)
packed_driver = os.path.join(os.path.dirname(accuracy_driver), "packed_memory")
pm_h5 = os.path.join(tmp, "packed.h5")
subprocess.run([packed_driver, "--out", pm_h5, "--workloads", "40+7+1,3x9", "--heads", "2", "--recipes",
                "mxfp8", "--quiet"], check=True)
md, _ = run("packed_memory", "packed", "packed=" + pm_h5, md2=False)
r = rows(md)
check(len(r) == 2 and all(len(cells(x)) == 12 and cells(x)[11] == "bit-identical" for x in r),
      "packed vs padded: a row per workload, real-token outputs bit-identical")
check(cells(r[0])[4] == "48 / 120" and cells(r[0])[7].endswith("x"), "packed vs padded: tokens and the ratio")
packed = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "packed_memory_gpu.h5")))
if packed:
    md, _ = run("packed_memory", "packed-gpu", "packed=" + packed[0], md2=False)
    check(rows(md) and "NVIDIA" in md and "commit" in md, "packed vs padded (GPU): rows, the GPU and the commit")
md, _ = run("packed_memory", "packed-none", md2=False)
check("Needs a GPU run" in md and not rows(md), "packed vs padded without a measurement")

# the acceptance ratios (one process, alternated rounds): a row per (workload, our pass, peer)
ratios = sorted(glob.glob(os.path.join(root, "data", "measured", "*", "ratios_gpu.h5")))
check(ratios, "shipped one-process ratios found (data/measured/*/ratios_gpu.h5)")
if ratios:
    md, _ = run("acceptance_ratios", "ratios", "ratios=" + ratios[0], md2=False)
    r = rows(md)
    med = lambda x: float(cells(x)[6][:-1])  # noqa: E731
    check(len(r) >= 8 and all(len(cells(x)) == 9 and cells(x)[6].endswith("x") for x in r),
          "acceptance ratios: workload, our pass, peer, rounds, two times, median ratio, range, fastest calls' ratio")
    check(all(cells(x)[8] == "-" or 0.5 < float(cells(x)[8][:-1]) / med(x) < 2 for x in r) and
          any(cells(x)[8] != "-" for x in r), "acceptance ratios: the fastest calls' ratio near the median one")
    check(all(float(cells(x)[7].split("-")[0]) <= med(x) <= float(cells(x)[7].split("-")[1]) for x in r),
          "acceptance ratios: each median inside its rounds' range")
    check(all(abs(float(cells(x)[4]) / float(cells(x)[5]) / med(x) - 1) < 0.25 for x in r),
          "acceptance ratios: the median ratio near the median times' ratio")
    check("issue 4" in md and "issue 5" in md and "NVIDIA" in md and "commit" in md,
          "acceptance ratios: the issues' lines, the GPU and the commit")
md, _ = run("acceptance_ratios", "ratios-none", md2=False)
check("Needs a GPU run" in md and not rows(md), "acceptance ratios without a measurement")

# nothing measured: a table that says so, and no numbers
md, md2 = run("accuracy_gpu", "none")
check("Needs a GPU run" in md and not rows(md) and "Needs a GPU run" in md2, "accuracy_gpu without a measurement")
md, md2 = run("accuracy_gpu", "none-full", "full=1")
check("paper sizes" in md and "accuracy_full_gpu" in md and not rows(md), "accuracy_gpu full=1 without a measurement")
md, md2 = run("table_b_leak", "none-b")
check("Needs a GPU run" in md and not rows(md), "Table B (kernels) without a measurement")
sys.exit(1 if failures else 0)
