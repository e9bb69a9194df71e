#!/usr/bin/env python3
"""ptxas's spills in the per-token passes (quantize.cu, backward_prep.cu) and the backward's main
kernel (backward_fp8.cu), compiled here as the release build compiles them (-O3, sm_90a): a
kernel has none unless ALLOWED lists it with the spills it has today, which it may not exceed.
The per-token passes are bound by DRAM, and a spill in their loops goes there too: quantize's
block-warp kernel spilled 132 bytes a thread for many sessions, which cost 13 % of its time
(docs/perf-notes.md, "Quantize and peers", sixty-first session). The backward main kernel runs at
255 registers, where one more live value spills inside its sub-step loop. Needs nvcc (exit 77, a
skip, without it). Usage: test_ptxas_spills.py NVCC KERNELS_SM90_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCES = ["quantize.cu", "backward_prep.cu", "backward_fp8.cu", "backward_dq.cu"]
# mangled-name substring -> spill-store bytes allowed (what ptxas gives today)
ALLOWED = {
    # mxfp8 through the per-slot kernel, never launched at the default settings: the block-warp
    # kernel takes mxfp8 (FLAMIA_QUANT_WARP_BLOCKS)
    "quantize_kernelILi128ELi32ELb1ELb0E": 24,
    # the deterministic-by-turns instantiations of the backward main kernel (dQ mode kDqTurns),
    # mxfp8-exact and mxfp8: two STL / LDL pairs in the sub-step loop (docs/perf-notes.md, "Backward
    # kernel", sixty-first session, named them the launch-order ones: the template's second
    # argument was the deterministic flag)
    "bwd_main_fp8ILi2ELi1ELb0E": 16,
    "bwd_main_fp8ILi1ELi1ELb0E": 4,
}


def spills(nvcc, src, inc):
    """{entry function: spill-store bytes} from ptxas -v"""
    with tempfile.TemporaryDirectory() as d:
        cmd = [nvcc, "-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "--expt-relaxed-constexpr",
               "-Xptxas", "-v", "-cubin", "-o", os.path.join(d, "k.cubin"), src] + ["-I" + i for i in inc]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("nvcc failed on %s:\n%s" % (src, r.stderr[-2000:]))
    out, entry = {}, None
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            entry = m.group(1)
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            entry = m.group(1) if entry == m.group(1) else None
            continue
        m = re.search(r"(\d+) bytes spill stores", line)
        if m and entry:
            out[entry] = int(m.group(1))
            entry = None
    return out


def main():
    nvcc, sm90 = shutil.which(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not nvcc:
        print("no nvcc: skipped")
        return 77
    inc = [sm90, os.path.join(sm90, "../include"), os.path.join(sm90, "../formats"), os.path.join(sm90, "../ref")]
    failures = checked = 0
    for name in SOURCES:
        found = spills(nvcc, os.path.join(sm90, name), inc)
        if not found:
            print("%s: no entry function found in ptxas's report" % name)
            failures += 1
        for fn, stores in sorted(found.items()):
            allowed = next((b for k, b in ALLOWED.items() if k in fn), 0)
            ok = stores <= allowed
            checked += 1
            failures += not ok
            print("%-4s %s: %d bytes of spill stores (allowed %d)" % ("ok" if ok else "FAIL", fn, stores, allowed))
    print("test_ptxas_spills: %d kernels, %s" % (checked, "ok" if not failures else "%d FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
