#!/usr/bin/env python3
"""The forward's item boundary in time, from v137_timeline's stamps (check_forward with
FWD_TIMELINE_OUT=FILE; dev/forward/v137_timeline.patch says what each slot is). Per item (CTA b,
item k of that CTA): the producer's chain (its round start -> Q buffer free -> first tile issued ->
record out), each consumer warpgroup's waits (for the record, for the first tile), and the
boundary (last P V done -> epilogue done -> the next item's first tile ready). Means in ns by item
length (tiles), at the SM clock given (cycles / GHz). Each CTA's first item is left out: its waits
hold the kernel's start (~7.5 us), which made the seventy-seventh session's means of the record wait
read 0.4-0.8 us at 1,024 tokens where the other items' mean is 0.17-0.20 us (median 0.11 us; the
seventy-eighth session found it). --epilogue: v140_epilogue_timeline's slots instead of the producer's,
warpgroup 0's epilogue by step (medians).
Seventy-seventh session. Usage: python3 dev/forward/timeline.py [--epilogue] FILE [GHz = 1.98]"""
import struct
import sys

CTAS, ITEMS, SLOTS = 132, 128, 16


def load(path):
    raw = open(path, "rb").read()
    n = CTAS * ITEMS * SLOTS
    vals = struct.unpack("<%dQ" % n, raw[: 8 * n])
    return [[vals[(b * ITEMS + k) * SLOTS:(b * ITEMS + k + 1) * SLOTS] for k in range(ITEMS)] for b in range(CTAS)]


def signed(x):
    """stamps are unsigned cycles: a negative difference wrapped around"""
    return x - (1 << 64) if x >= (1 << 63) else x


BUCKETS = ("1-2", "3-8", "9-16", "17+")


def bucket_of(nvis):
    return "1-2" if nvis <= 2 else "3-8" if nvis <= 8 else "9-16" if nvis <= 16 else "17+"


def buckets(rows):
    """the item-length buckets that have items, in order"""
    return [bk for bk in BUCKETS if bk in rows]


def epilogue(tl, ns):
    """warpgroup 0's epilogue (slot 7 -> 8) by step, v140's slots: median ns by item length"""
    steps = [("rows: l, 1 / l, lse, frame", 7, 0), ("drain of the last O stores", 0, 1), ("first barrier", 1, 2),
             ("stmatrix", 2, 3), ("fence, second barrier", 3, 15), ("stores issued", 15, 8), ("whole epilogue", 7, 8),
             ("record wait", 4, 5), ("first-tile wait", 5, 6)]
    rows = {}
    for b in range(CTAS):
        for k in range(1, ITEMS - 1):  # the first item holds the kernel's start
            s = tl[b][k]
            if not s[14] or not all(s[i] for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 15)):
                continue
            rows.setdefault(bucket_of(s[14]), []).append([signed(s[bb] - s[a]) for _, a, bb in steps])
    bks = buckets(rows)
    print("| step (ns, median) | " + " | ".join("tiles %s" % bk for bk in bks) + " |")
    print("|---|" + "---|" * len(bks))
    for i, (name, _, _) in enumerate(steps):
        print("| %s | %s |" % (name, " | ".join("%.0f" % ns(sorted(r[i] for r in rows[bk])[len(rows[bk]) // 2]) for bk in bks)))
    print("| items | %s |" % " | ".join(str(len(rows[bk])) for bk in bks))


def main():
    args = [a for a in sys.argv[1:] if a != "--epilogue"]
    tl = load(args[0])
    ghz = float(args[1]) if len(args) > 1 else 1.98
    ns = lambda c: c / ghz
    if "--epilogue" in sys.argv:
        return epilogue(tl, ns)
    rows = {}  # bucket -> list of measures
    names = ["prep: start->Q free", "prep: Q free->tile 0 out", "prep: tile 0->record", "record late (vs wg0 ask)",
             "wg0 record wait", "wg0 tile-0 wait", "wg1 record wait", "wg1 tile-0 wait", "wg0 epilogue",
             "wg0 boundary (PV done->next tile 0)", "producer: prev record->this start", "items"]
    for b in range(CTAS):
        for k in range(1, ITEMS - 1):  # the first item holds the kernel's start
            s, n = tl[b][k], tl[b][k + 1]
            nvis = s[14]
            if not nvis or not all(s[i] for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)):
                continue
            bucket = bucket_of(nvis)
            m = [s[1] - s[0], s[3] - s[1], s[2] - s[3], s[2] - s[4], s[5] - s[4], s[6] - s[5], s[10] - s[9],
                 s[11] - s[10], s[8] - s[7], (n[6] - s[7]) if n[6] and n[14] else None,
                 (s[0] - tl[b][k - 1][2]) if tl[b][k - 1][2] else None]
            rows.setdefault(bucket, []).append(m)
    bks = buckets(rows)
    print("| measure (ns, mean) | " + " | ".join("tiles %s" % bk for bk in bks) + " |")
    print("|---|" + "---|" * len(bks))
    for i, name in enumerate(names):
        cells = []
        for bk in bks:
            if name == "items":
                cells.append(str(len(rows[bk])))
                continue
            v = [signed(r[i]) for r in rows[bk] if r[i] is not None]
            cells.append("%.0f" % ns(sum(v) / len(v)) if v else "-")
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
