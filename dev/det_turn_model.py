#!/usr/bin/env python3
"""det_turn_model.py - list-scheduling model of the FP8 backward's main kernel with and
without deterministic dQ, to predict what the turn order and v41 cost (nineteenth session).

Model: CTAs of (document, key tile n, kv head) in the grid's order (sm90_tiles.cuh slots,
kv head fastest; the deterministic kernels run a document's key tiles last to first) go to
whichever of the 132 SMs frees first, one CTA per SM. A CTA costs CTA_US (prologue and
epilogue) plus, per query tile it meets (causal: m = n .. last) and query head of its
group, two sub-steps of STEP_US. Each sub-step ends in a dQ add into (query rows, head):
  default   no order, the add overlaps the next sub-step (TMA reduce-add);
  atomic    the deterministic kernels up to now: the add waits for its turn, then costs
            ADD_US of blocking atomics, then passes the turn; order ascending (key tile
            0 first, d6e2faf) or descending (last key tile first, 862ed9c);
  v41       descending; the add waits for its turn, is asynchronous, and the turn is passed
            when the CTA reaches its next sub-step's add (or its end).
Calibration (H200, Table A fits of the thirteenth session and ncu): STEP_US = 8.55 / 2 us per
sub-step, CTA_US = 10.4 us; ADD_US from the measured deterministic cost at 16x4096 when no
add waits (8.7 ms over 2,048 sub-steps per SM).
Twentieth session: v41 measured +28.5 % at 16x4096 (predicted +1 %). The v42 probes split
it: launch order and dK order ~7 points, the passes' wait for their add's completion ~9, the
turn waits ~13. The second table adds an add completion latency L: L ~ 4.8 us (a sub-step is
4.3) reproduces the passes' cost, but this model has no jitter, so it puts nothing in the turn
waits (a contributor is always a sub-step ahead); the measured 13 points are the jitter's.
It also says that passing earlier in the sub-step (v43 probe 4) only moves the stall earlier
and adds 0.2 sub-steps to it, unless the warps' wait at the CTA barrier hides it.
Twenty-first session: the completion latency is refuted (v43: waiting for the add's source
read instead of its completion changed nothing). The passes' cost is the release of the
counter add (MEMBAR.ALL.GPU + ERRBAR before the RED): a relaxed add took ~7 points back at
16x4096, ~0.35 us a sub-step (0.7 ms over ~2,048 sub-steps an SM), a fixed stall rather than
a latency the next sub-step could hide. The second table's L is kept as the record of the fit.
Usage: python3 dev/det_turn_model.py"""
import heapq

SMS, STEP_US, CTA_US, ADD_US = 132, 8.55 / 2, 10.4, 4.25


def workload(name):
    if name == "16x4096":
        return [4096] * 16, 16, 16
    if name == "4x4096":
        return [4096] * 4, 16, 16
    if name == "8192+224x256":
        return [8192] + [256] * 224, 16, 16
    if name == "gqa-16x1024":
        return [1024] * 16, 16, 4
    raise ValueError(name)


def simulate(lens, hq, hkv, mode, order, lat_us=0.0, pass_at=1.0, waits=True):
    """lat_us (v41): an add completes lat_us after its issue, and its pass waits for that;
    pass_at: where in the next sub-step the pass is made (1.0: at that sub-step's add, v41;
    0.8: before its CTA barrier, v43 probe 4); waits=False: no turn waits (v42 probe 1)"""
    group = hq // hkv
    ctas = []  # grid order: documents, their slots, kv head fastest
    for doc, L in enumerate(lens):
        nt = (L + 127) // 128
        for slot in range(nt):
            n = nt - 1 - slot if order == "desc" else slot
            for hk in range(hkv):
                ctas.append((doc, n, hk, nt))
    passed = {}  # (doc, head, m, h2) -> list of pass times by contributor rank
    free = [0.0] * SMS
    heapq.heapify(free)
    end_all = 0.0
    for doc, n, hk, nt in ctas:
        t = heapq.heappop(free) + CTA_US / 2  # prologue
        pending = None  # v41: (key, rank) of the add not yet passed
        for g in range(group):
            h = hk * group + g
            for m in range(n, nt):
                for h2 in range(2):
                    key = (doc, h, m, h2)
                    rank = m - n if order == "desc" else n  # place among tiles m..0
                    if mode != "v41":
                        t += STEP_US  # the sub-step's compute
                    else:  # compute up to the pass point, the pass (after the add completed), the rest
                        t += pass_at * STEP_US
                        if pending is not None:
                            t = max(t, pending[2] + lat_us)
                            passed.setdefault(pending[0], {})[pending[1]] = t
                        t += (1.0 - pass_at) * STEP_US
                    if mode == "default":
                        continue
                    if rank > 0 and waits:  # wait for the previous contributor's pass
                        t = max(t, passed[key][rank - 1])
                    if mode == "atomic":
                        t += ADD_US
                        passed.setdefault(key, {})[rank] = t
                    else:
                        pending = (key, rank, t)
        t += CTA_US / 2  # epilogue
        if mode == "v41" and pending is not None:
            t = max(t, pending[2] + lat_us)
            passed.setdefault(pending[0], {})[pending[1]] = t
        end_all = max(end_all, t)
        heapq.heappush(free, t)
    return end_all / 1000.0


def main():
    print("%-14s %8s %14s %14s %14s %14s" % ("workload", "default", "atomic asc", "atomic desc", "v41 desc",
                                           "atomic, no wait"))
    for w in ("4x4096", "16x4096", "8192+224x256", "gqa-16x1024"):
        lens, hq, hkv = workload(w)
        base = simulate(lens, hq, hkv, "default", "asc")
        row = [base]
        for mode, order in (("atomic", "asc"), ("atomic", "desc"), ("v41", "desc")):
            row.append(simulate(lens, hq, hkv, mode, order))
        # the atomics' cost alone: every sub-step ADD_US longer, no waits
        subs = sum(((L + 127) // 128) * (((L + 127) // 128) + 1) for L in lens) * hq  # 2 x n(n+1)/2 x heads
        row.append(base + subs * ADD_US / SMS / 1000.0)
        print("%-14s %7.2f ms" % (w, base) + "".join(" %7.2f (%+4.0f%%)" % (x, 100 * (x / base - 1)) for x in row[1:]))
    # twentieth session: the passes wait for their add's completion (v42 probes: the passes
    # alone cost +8.7 points at 16x4096, the turn waits +12.6 more)
    print("\nv41 with an add completion latency L (us), the turn order descending:")
    print("%-14s %-6s %16s %16s %16s" % ("workload", "L", "passes, no waits", "v41", "pass at 0.8 (v43 4)"))
    for w in ("4x4096", "16x4096", "8192+224x256", "gqa-16x1024"):
        lens, hq, hkv = workload(w)
        base = simulate(lens, hq, hkv, "default", "asc")
        for lat in (0.0, 4.5, 4.8, 5.5):
            row = [simulate(lens, hq, hkv, "v41", "desc", lat, 1.0, False), simulate(lens, hq, hkv, "v41", "desc", lat),
                   simulate(lens, hq, hkv, "v41", "desc", lat, 0.8)]
            print("%-14s %-6.1f" % (w, lat) + "".join(" %7.2f (%+5.1f%%)" % (x, 100 * (x / base - 1)) for x in row))


if __name__ == "__main__":
    main()
