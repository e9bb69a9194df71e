#!/usr/bin/env python3
"""sass_loop.py - read one kernel's innermost wgmma loop from `cuobjdump -sass` output, without a GPU:
the loop's instructions split at every SHFL, QGMMA / HGMMA, wait and barrier (what ran since the
last one, by kind), and the longest self-accumulating chains (FFMA / FADD / FMNMX whose
destination is also a source: a row sum or a running maximum kept in one register).

The twenty-first session read the forward's tile loop this way (perf-notes, forward kernel:
where the exponentials sit against the shuffles; the row sum l as one chain of 32 FFMAs).

Usage:
  cuobjdump -sass build/kernels/libflamia.so.p/meson-generated_.._sm90_forward.unit.cu.o > fwd.sass
  python3 dev/sass_loop.py fwd.sass fwd_kernelILi1ELi3ELb1ELb0ELb0E [--mma 16]
The second argument is a substring of the mangled name (the first match is read); --mma picks
the loop (a backward branch) whose body holds that many QGMMA / HGMMA (default: the smallest
loop holding any). cuobjdump without the CUDA toolkit's GPU packages: docs/hopper-port.md, Tools.
"""
import argparse
import collections
import re
import signal

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head

MARKS = ("SHFL", "QGMMA", "HGMMA", "DEPBAR", "BAR.SYNC", "BAR.ARV", "BRA", "WARPSYNC")
KINDS = ("MUFU.EX2", "FMNMX", "FMUL", "FFMA", "FADD", "F2FP", "STL", "LDL", "LDS", "STS")


def read_function(path, name):
    """[(address, instruction)] of the first function whose mangled name contains `name`"""
    out, inside = [], False
    for line in open(path):
        if "Function :" in line:
            if inside:
                break
            inside = name in line
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if inside and m:
            out.append((int(m[1], 16), m[2]))
    if not out:
        raise SystemExit("sass_loop.py: no function matching %r" % name)
    return out


def loops(ins):
    """(target, branch address, body) of every backward branch"""
    for addr, text in ins:
        b = re.search(r"BRA\s+(0x[0-9a-f]+)", text)
        if b and int(b[1], 16) < addr:
            t = int(b[1], 16)
            yield t, addr, [x for x in ins if t <= x[0] <= addr]


def mma_count(body):
    return sum(("QGMMA" in s) or ("HGMMA" in s) for _, s in body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sass")
    ap.add_argument("function")
    ap.add_argument("--mma", type=int, default=None)
    a = ap.parse_args()
    ins = read_function(a.sass, a.function)
    cand = [l for l in loops(ins) if mma_count(l[2]) > 0 and (a.mma is None or mma_count(l[2]) == a.mma)]
    if not cand:
        raise SystemExit("sass_loop.py: no loop with that many wgmma instructions")
    t, end, body = min(cand, key=lambda l: len(l[2]))
    print("loop %x-%x: %d instructions, %d wgmma" % (t, end, len(body), mma_count(body)))
    since = collections.Counter()
    for addr, text in body:
        mark = next((m for m in MARKS if m in text), None)
        if mark:
            print("  %6x %-46s | since: %s" % (addr, text[:46], " ".join("%s %d" % kv for kv in since.items())))
            since.clear()
        else:
            since[next((k for k in KINDS if k in text), "other")] += 1
    chains = collections.Counter()
    for _, text in body:
        m = re.match(r"(?:@!?P\d\s+)?(FFMA|FADD|FMNMX)\S*\s+(R\d+),\s*(.*)", text)
        if m and m[2] in re.findall(r"R\d+", m[3]):
            chains[(m[1], m[2])] += 1
    print("longest self-accumulating chains:", ", ".join("%s %s x%d" % (k[0], k[1], n) for k, n in chains.most_common(6)))


if __name__ == "__main__":
    main()
