#!/usr/bin/env python3
"""merge_h5.py OUT.h5 IN1.h5 IN2.h5 ... - concatenates the tables (groups of equal-length
1-D columns, experiments' schema) of several runs of one driver into one file: root
attributes from the first input (plus `merged_from`), every table's rows appended in
input order, column attributes kept. Used by device_run.sh, which runs the latency
driver once per workload (a kernel fault ends a process, not the whole measurement)."""
import sys

import h5py
import numpy as np


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, ins = sys.argv[1], sys.argv[2:]
    srcs = [h5py.File(p, "r") for p in ins]
    with h5py.File(out + ".tmp", "w") as f:
        for k, v in srcs[0].attrs.items():
            f.attrs[k] = v
        f.attrs["merged_from"] = " ".join(ins)
        names = []
        for s in srcs:
            names += [n for n in s.keys() if n not in names]
        for n in names:
            parts = [s[n] for s in srcs if n in s]
            g = f.create_group(n)
            for k, v in parts[0].attrs.items():
                g.attrs[k] = v
            rows = 0
            for col in parts[0].keys():
                arrs = [p[col][...] for p in parts]
                if arrs[0].dtype.kind == "S":
                    w = max(a.dtype.itemsize for a in arrs)
                    arrs = [a.astype(f"S{w}") for a in arrs]
                data = np.concatenate(arrs)
                rows = len(data)
                d = g.create_dataset(col, data=data)
                for k, v in parts[0][col].attrs.items():
                    d.attrs[k] = v
            g.attrs["rows"] = np.int64(rows)
    for s in srcs:
        s.close()
    import os
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
