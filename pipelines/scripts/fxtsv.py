"""fxtsv.py - reads the TSV export of one experiment result (experiments/common/h5totsv.c).

An export directory holds meta.tsv (root attributes), <table>.tsv (header + rows) and
<table>.columns.tsv (units, descriptions). Standard library only (runs with the Python
that runs Snakemake)."""
import math
import os


def _num(s):
    try:
        return float(s)
    except ValueError:
        return s


class Result:
    def __init__(self, directory):
        self.dir = directory
        self.meta = {}
        with open(os.path.join(directory, "meta.tsv"), encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if "\t" in line:
                    k, v = line.split("\t", 1)
                    self.meta[k] = v

    def table(self, name):
        """rows of one table as a list of dicts (numbers as float, labels as str)"""
        path = os.path.join(self.dir, name + ".tsv")
        with open(path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("\t")
            rows = []
            for line in f:
                cells = line.rstrip("\n").split("\t")
                rows.append({h: _num(c) for h, c in zip(header, cells)})
        return rows

    def has_table(self, name):
        return os.path.exists(os.path.join(self.dir, name + ".tsv"))

    def tables(self):
        return sorted(n[:-4] for n in os.listdir(self.dir)
                      if n.endswith(".tsv") and not n.endswith(".columns.tsv") and n != "meta.tsv")

    def provenance(self, inputs=True, shapes=True):
        """hardware, date, commit, settings: one sentence for a caption (inputs: the input
        generator's outliers; shapes: the document-length scale and the query heads)"""
        m = self.meta
        dev = m.get("device_name", "?")
        if m.get("backend") == "cpu":
            hw = "CPU run on %s (%s cores)" % (dev, m.get("cpu_cores", "?"))
        else:
            hw = m.get("gpu_name") or dev
            extra = [x for x in ("driver " + m["gpu_driver"] if m.get("gpu_driver") else "",
                                 "CUDA " + m["cuda_runtime"] if m.get("cuda_runtime") else "") if x]
            if extra:
                hw += " (%s)" % ", ".join(extra)
        commit = m.get("git_commit", "unknown")[:12]
        if m.get("git_dirty") == "1":
            commit += " (uncommitted changes)"
        date = m.get("utc_time", "?")
        settings = []
        scale = m.get("scale")
        if shapes and scale and float(scale) != 1.0:
            settings.append("document lengths x%g" % float(scale))
        heads = m.get("heads")
        if shapes and heads and heads != "0":
            settings.append("%s query heads" % heads)
        if not inputs:
            pass
        elif m.get("outliers") not in (None, "0"):
            settings.append("K with %s outlier channels x%g" % (m["outliers"], float(m.get("outlier_scale", "0"))))
        elif m.get("outliers") == "0":
            settings.append("plain randn inputs")
        settings.append("seed %s" % m.get("seed", "?"))
        return "%s; %s UTC; commit %s; %s." % (hw, date.replace("T", " ").rstrip("Z"), commit, ", ".join(settings))


def fmt_sci(v, zero="0"):
    if isinstance(v, str):
        return v
    if math.isnan(v):
        return "nan"
    if v == 0:
        return zero
    return "%.1e" % v


def fmt_fix(v, digits=4):
    if isinstance(v, str):
        return v
    if math.isnan(v):
        return "nan"
    return "%.*f" % (digits, v)


def fmt_pct(v, digits=2):
    if isinstance(v, str):
        return v
    if math.isnan(v):
        return "nan"
    return "%.*f%%" % (digits, 100.0 * v)


def uniq(seq):
    """the distinct items of seq in first-seen order"""
    out = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out
