#!/usr/bin/env python3
"""The forward's item boundary in time, from v137_timeline's stamps (check_forward with
FWD_TIMELINE_OUT=FILE; dev/forward/v137_timeline.patch says what each slot is). Per item (CTA b,
item k of that CTA): the producer's chain (its round start -> Q buffer free -> first tile issued ->
record out), each consumer warpgroup's waits (for the record, for the first tile), and the
boundary (last P V done -> epilogue done -> the next item's first tile ready). Means in ns by item
length (tiles), at the SM clock given (cycles / GHz).
Seventy-seventh session. Usage: python3 dev/forward/timeline.py FILE [GHz = 1.98]"""
import struct
import sys

CTAS, ITEMS, SLOTS = 132, 128, 16


def load(path):
    raw = open(path, "rb").read()
    n = CTAS * ITEMS * SLOTS
    vals = struct.unpack("<%dQ" % n, raw[: 8 * n])
    return [[vals[(b * ITEMS + k) * SLOTS:(b * ITEMS + k + 1) * SLOTS] for k in range(ITEMS)] for b in range(CTAS)]


def main():
    tl = load(sys.argv[1])
    ghz = float(sys.argv[2]) if len(sys.argv) > 2 else 1.98
    ns = lambda c: c / ghz
    rows = {}  # bucket -> list of measures
    names = ["prep: start->Q free", "prep: Q free->tile 0 out", "prep: tile 0->record", "record late (vs wg0 ask)",
             "wg0 record wait", "wg0 tile-0 wait", "wg1 record wait", "wg1 tile-0 wait", "wg0 epilogue",
             "wg0 boundary (PV done->next tile 0)", "producer: prev record->this start", "items"]
    for b in range(CTAS):
        for k in range(ITEMS - 1):
            s, n = tl[b][k], tl[b][k + 1]
            nvis = s[14]
            if not nvis or not all(s[i] for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)):
                continue
            bucket = "1-2" if nvis <= 2 else "3-8" if nvis <= 8 else "9-16" if nvis <= 16 else "17+"
            m = [s[1] - s[0], s[3] - s[1], s[2] - s[3], s[2] - s[4], s[5] - s[4], s[6] - s[5], s[10] - s[9],
                 s[11] - s[10], s[8] - s[7], (n[6] - s[7]) if n[6] and n[14] else None,
                 (s[0] - tl[b][k - 1][2]) if k > 0 and tl[b][k - 1][2] else None]
            rows.setdefault(bucket, []).append(m)
    print("| measure (ns, mean) | " + " | ".join("tiles %s" % bk for bk in ("1-2", "3-8", "9-16", "17+") if bk in rows) + " |")
    print("|---|" + "---|" * len([bk for bk in ("1-2", "3-8", "9-16", "17+") if bk in rows]))
    for i, name in enumerate(names):
        cells = []
        for bk in ("1-2", "3-8", "9-16", "17+"):
            if bk not in rows:
                continue
            if name == "items":
                cells.append(str(len(rows[bk])))
                continue
            v = [r[i] for r in rows[bk] if r[i] is not None]
            # stamps are unsigned cycles: a negative difference wrapped around
            v = [x - (1 << 64) if x >= (1 << 63) else x for x in v]
            cells.append("%.0f" % ns(sum(v) / len(v)) if v else "-")
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
