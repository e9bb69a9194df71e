#!/usr/bin/env python3
"""kernels/sm90/cuda_unit.py (the generated CUDA units that make an edited header rebuild the
kernels): the unit includes its source by absolute path and is rewritten on every run, and a
header present in a header directory but missing from the inputs stops it, naming the header.
Usage: test_cuda_unit.py CUDA_UNIT_PY"""
import os
import subprocess
import sys
import tempfile


def run(script, out, src, dirs, inputs):
    return subprocess.run([sys.executable, script, out, src] + dirs + ["--"] + inputs,
                          capture_output=True, text=True)


def main():
    script = os.path.abspath(sys.argv[1])
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        src, h1, h2 = (os.path.join(d, n) for n in ("k.cu", "a.cuh", "b.h"))
        for p in (src, h1, h2):
            open(p, "w").write("/* */\n")
        out = os.path.join(d, "k.unit.cu")
        r = run(script, out, src, [d], [src, h1, h2])
        text = open(out).read() if os.path.exists(out) else ""
        ok = r.returncode == 0 and ('#include "%s"' % os.path.abspath(src)) in text
        print("all headers listed: rc %d, unit includes the source: %s" % (r.returncode, ok))
        failures += not ok
        r = run(script, out, src, [d], [src, h1])
        ok = r.returncode != 0 and "b.h" in r.stderr
        print("b.h not listed: rc %d, message %r" % (r.returncode, r.stderr.strip()[-80:]))
        failures += not ok
    print("test_cuda_unit: %s" % ("ok" if not failures else "%d FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
