# FLAMIA-H reproduction pipeline (docs/experiments.md).
#
#   snakemake -c2 tables            every table in paper_tables/ (Markdown + LaTeX)
#   snakemake -c2 figures           every figure in figures/ (PNG + PDF)
#   snakemake -c2                   both
#   snakemake -c2 leak_probe        one experiment by name: run, export, its tables and figure
#   snakemake -c2 tables --config device=cuda     re-measure on an H200 (GPU tables too)
#
# The pipeline builds the C code itself (meson, into config["builddir"]), runs each driver
# once into data/runs/<device>/<experiment>.h5, exports HDF5 -> TSV with h5totsv, draws
# figures with gnuplot and renders tables with pipelines/scripts/render_tables.py
# (Python standard library only). Rules: pipelines/build.smk, run.smk, export.smk,
# figures.smk, tables.smk; configuration: pipelines/config.yaml.
import glob
import json
import os
import sys

configfile: "pipelines/config.yaml"

DEVICE = str(config["device"])
if DEVICE not in ("cpu", "cuda"):
    raise ValueError("config device must be cpu or cuda, not %r" % DEVICE)
BUILD = config["builddir"]
RUNS = "data/runs/" + DEVICE
PY = sys.executable
CONFIG_JSON = json.dumps(config)
# experiments this device can run: CPU-capable drivers run anywhere (on the CPU when they
# lack a CUDA backend), CUDA-only ones (latency) only with device=cuda
EXPERIMENTS = {k: v for k, v in config["experiments"].items()
               if "cpu" in v.get("backends", ["cpu"]) or DEVICE in v.get("backends", [])}
BINARIES = {v["driver"]: v.get("binary", "experiments/" + v["driver"]) for v in EXPERIMENTS.values()}
BINARIES["h5totsv"] = "experiments/h5totsv"

def driver(name):
    return "%s/%s" % (BUILD, BINARIES[name])

H5TOTSV = driver("h5totsv")

# filled by the rule files: every table and figure the targets build
TABLES = []
FIGURES = []

rule default:
    default_target: True
    input: lambda wc: TABLES + FIGURES

include: "pipelines/build.smk"
include: "pipelines/run.smk"
include: "pipelines/export.smk"
include: "pipelines/figures.smk"
include: "pipelines/tables.smk"

rule tables:
    input: lambda wc: TABLES

rule figures:
    input: lambda wc: FIGURES
