#!/usr/bin/env python3
"""Instruction mix of one kernel's SASS (dev/sass_here.sh output): opcode counts over the whole
function or an address range, and, given two files, the opcodes whose counts differ.
Usage: python3 dev/sass_hist.py A.sass[:LO-HI[,SKIPLO-SKIPHI...]] [B.sass[:...]]
  (hex addresses, e.g. fwd.sass:3b30-9fe0,6690-6ef0: the tile loop without its addition block)"""
import collections
import re
import sys

INSTR = re.compile(r'/\*([0-9a-f]{4,6})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z0-9_]+)')


def mix(spec):
    path, _, rng = spec.partition(':')
    ranges = [tuple(int(x, 16) for x in r.split('-')) for r in rng.split(',')] if rng else []
    lo, hi = ranges[0] if ranges else (0, 1 << 40)
    skip = ranges[1:]
    counts = collections.Counter()
    with open(path) as f:
        for line in f:
            m = INSTR.search(line)
            if not m:
                continue
            a = int(m.group(1), 16)
            if lo <= a < hi and not any(s <= a < e for s, e in skip):
                counts[m.group(3)] += 1
    return counts


def main(args):
    if not 1 <= len(args) <= 2:
        sys.exit(__doc__)
    mixes = [mix(a) for a in args]
    print('  '.join('%s: %d instructions' % (a, sum(m.values())) for a, m in zip(args, mixes)))
    ops = sorted(set().union(*mixes))
    for op in ops:
        row = [m[op] for m in mixes]
        if len(mixes) == 1 or row[0] != row[1]:
            print('%-10s %s' % (op, ' '.join('%6d' % n for n in row)))


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except BrokenPipeError:  # piped into head
        sys.exit(0)
