#!/usr/bin/env python3
"""protocol_model.py - j_sketch.cu's hand-off protocol, checked without a GPU (fiftieth session).

Each warpgroup is one actor running the sequence of barrier operations the kernel executes for
a CTA whose first sub-step is s0 (64-key tile n = s0; sub-steps s0 .. 63 of a 4096-token
document, query tiles of 128 from s0 // 2), with J_PREFETCH and J_BPREFETCH 1 or 0. Named barriers (count 256:
one arrive or sync of 128 threads from each warpgroup) complete when both warpgroups have
contributed; a warpgroup contributing twice to one generation would complete it wrongly
(reported). mbarriers: full[b] completes a phase when its tile is loaded (the load is taken as
landing at once), empty[b] when both warpgroups have arrived, panel[p] when its rows are
loaded. The model runs the two actors with every interleaving choice taken greedily in both
orders and reports a deadlock, a double contribution, a wait on a phase that was skipped, and
any barrier left incomplete at the end.
Usage: python3 dev/backward/j_sketch/protocol_model.py   (exit status 1 on any finding)
"""
import sys

TILES = 32          # 128-query tiles of a 4096-token document
S_END = 2 * TILES   # 64-query sub-steps
P_FULL, P_EMPTY, DS_FULL, DS_EMPTY = 3, 5, 7, 9


def ops_a(s0, prefetch):
    r0 = s0 >> 1
    buf = lambda s: ((s >> 1) - r0) & 1
    fphase = lambda s: (((s >> 1) - r0) >> 1) & 1
    o = [("load_tile", r0)]
    if r0 + 1 < TILES:
        o.append(("load_tile", r0 + 1))
    o.append(("load_panel", s0))
    if s0 + 1 < S_END:
        o.append(("load_panel", s0 + 1))

    def issue_s(s):
        if (s & 1) == 0 or s == s0:
            o.append(("mwait", ("full", buf(s)), fphase(s)))

    def make_p(s):
        if (s & 1) == 1 or s == S_END - 1:
            o.append(("marrive", ("empty", buf(s))))
        o.append(("sync", P_EMPTY + (s & 1)))
        o.append(("arrive", P_FULL + (s & 1)))

    if s0 + 1 < S_END:
        o.append(("arrive", DS_EMPTY + ((s0 + 1) & 1)))
    o.append(("arrive", DS_EMPTY + (s0 & 1)))
    issue_s(s0)
    make_p(s0)
    for s in range(s0, S_END):
        more = s + 1 < S_END
        o.append(("mwait", ("panel", s & 1), ((s - s0) >> 1) & 1))
        if prefetch and more:
            issue_s(s + 1)
        o.append(("sync", DS_FULL + (s & 1)))
        if prefetch and more:
            make_p(s + 1)
        if s + 2 < S_END:
            o.append(("arrive", DS_EMPTY + (s & 1)))
            o.append(("load_panel", s + 2))
        if not prefetch and more:
            issue_s(s + 1)
            make_p(s + 1)
    return o


def ops_b(s0, bprefetch):
    r0 = s0 >> 1
    buf = lambda s: ((s >> 1) - r0) & 1
    fphase = lambda s: (((s >> 1) - r0) >> 1) & 1
    o = []

    def issue_dp(s):
        if (s & 1) == 0 or s == s0:
            o.append(("mwait", ("full", buf(s)), fphase(s)))

    if s0 + 1 < S_END:
        o.append(("arrive", P_EMPTY + ((s0 + 1) & 1)))
    o.append(("arrive", P_EMPTY + (s0 & 1)))
    if bprefetch:
        issue_dp(s0)
    for s in range(s0, S_END):
        more = s + 1 < S_END
        tile_end = (s & 1) == 1 or not more
        if not bprefetch:
            issue_dp(s)
        o.append(("sync", P_FULL + (s & 1)))
        if s + 2 < S_END:
            o.append(("arrive", P_EMPTY + (s & 1)))
        o.append(("sync", DS_EMPTY + (s & 1)))
        o.append(("arrive", DS_FULL + (s & 1)))
        if bprefetch and more:  # between dK(s)'s two partials
            issue_dp(s + 1)
        if tile_end:
            r = s >> 1
            o.append(("marrive", ("empty", buf(s))))
            if r + 2 < TILES:
                o.append(("mwait", ("empty", buf(s)), ((r - r0) >> 1) & 1))
                o.append(("load_tile", r + 2))
    return o


def run(s0, prefetch, prefer, bprefetch=1):
    """simulate; prefer: which actor moves first when both can. Returns a list of findings."""
    r0 = s0 >> 1
    seq = {"A": ops_a(s0, prefetch), "B": ops_b(s0, bprefetch)}
    pc = {"A": 0, "B": 0}
    named = {}                      # id -> set of actors contributed to the open generation
    done_gen = {}                   # id -> generations completed
    waiting = {}                    # actor -> (id, generation it waits for)
    mph = {}                        # mbarrier -> phases completed
    marr = {}                       # mbarrier -> arrivals in the open phase
    findings = []

    def complete(bar):
        mph[bar] = mph.get(bar, 0) + 1

    def step(actor):
        op = seq[actor][pc[actor]]
        kind = op[0]
        if actor in waiting:        # blocked in a sync until its generation completes
            bid, gen = waiting[actor]
            if done_gen.get(bid, 0) > gen:
                del waiting[actor]
                pc[actor] += 1
                return True
            return False
        if kind in ("arrive", "sync"):
            bid = op[1]
            cur = named.setdefault(bid, set())
            if actor in cur:
                findings.append(f"s0={s0} pf={prefetch}: {actor} contributes twice to barrier {bid}'s open generation")
                return None
            cur.add(actor)
            gen = done_gen.get(bid, 0)
            if len(cur) == 2:
                named[bid] = set()
                done_gen[bid] = gen + 1
            if kind == "sync" and done_gen.get(bid, 0) == gen:
                waiting[actor] = (bid, gen)
                return True
            pc[actor] += 1
            return True
        if kind == "mwait":
            bar, parity = op[1], op[2]
            ph = mph.get(bar, 0)
            # try_wait.parity(p) passes once the phase with parity p has completed and the barrier
            # is not two phases further (that would be a skipped phase)
            if ph >= 1 and (ph - 1) % 2 == parity:
                pc[actor] += 1
                return True
            if ph >= 2 and (ph - 2) % 2 == parity:
                findings.append(f"s0={s0} pf={prefetch}: {actor} waits on {bar} parity {parity} after it moved on ({ph} phases)")
                return None
            return False
        if kind == "marrive":
            bar = op[1]
            marr[bar] = marr.get(bar, 0) + 1
            if marr[bar] == 2:
                marr[bar] = 0
                complete(bar)
            pc[actor] += 1
            return True
        if kind == "load_tile":
            r = op[1]
            complete(("full", (r - r0) & 1))
            pc[actor] += 1
            return True
        if kind == "load_panel":
            complete(("panel", op[1] & 1))
            pc[actor] += 1
            return True
        raise ValueError(op)

    order = ["A", "B"] if prefer == "A" else ["B", "A"]
    while True:
        live = [a for a in order if pc[a] < len(seq[a])]
        if not live:
            break
        moved = False
        for a in live:
            r = step(a)
            if r is None:
                return findings
            if r:
                moved = True
                break
        if not moved:
            findings.append(f"s0={s0} pf={prefetch} prefer={prefer}: deadlock at A {seq['A'][pc['A']] if pc['A'] < len(seq['A']) else 'end'}"
                            f" / B {seq['B'][pc['B']] if pc['B'] < len(seq['B']) else 'end'}")
            return findings
    for bid, cur in named.items():
        if cur:
            findings.append(f"s0={s0} pf={prefetch}: barrier {bid} left with an open generation ({sorted(cur)})")
    return findings


def main():
    findings, runs = [], 0
    for prefetch in (1, 0):
        for bprefetch in (1, 0):
            for s0 in range(S_END):
                for prefer in ("A", "B"):
                    findings += run(s0, prefetch, prefer, bprefetch)
                    runs += 1
    for f in findings[:20]:
        print(f)
    print(f"protocol_model: {runs} runs (s0 0..{S_END - 1}, J_PREFETCH and J_BPREFETCH 1 and 0, either warpgroup first), "
          f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
