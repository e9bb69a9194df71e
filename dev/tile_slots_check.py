#!/usr/bin/env python3
"""Exhaustive check of the tile-slot mapping of kernels/sm90/sm90_tiles.cuh (base(d) =
floor(cu[d]/128) + d, the 32-way warp search): on 3000 random packs (1 to 5000 documents,
1-token documents, lengths around multiples of 128) every tile of every document gets
exactly one slot, a document's tiles are consecutive and in order, and the grid of
floor(T/128) + num_docs slots covers them. A transcription of the device code: keep the
two in step. Run: python3 dev/tile_slots_check.py (about 20 s)."""
import random
def base(cu,d): return cu[d]//128 + d
def doc_tile_of(cu, nd, slot):
    lo, hi = 0, nd
    while hi - lo > 1:
        step = (hi - lo + 31) >> 5
        m = 0
        for lane in range(32):
            d = lo + lane*step
            if d < hi and base(cu,d) <= slot: m |= 1 << lane
        k = m.bit_length()-1
        assert k >= 0
        lo += k*step
        hi = min(lo+step, hi)
    c0 = cu[lo]; ln = cu[lo+1]-c0
    nt = (ln+127)//128
    tile = slot - base(cu,lo)
    return (lo if tile < nt else -1, tile, nt)
random.seed(1)
for trial in range(3000):
    nd = random.choice([1,2,3,31,32,33,100,1000,1025, 5000])
    lens = [random.choice([1,1,2,127,128,129,255,256,300,1000,4096]) for _ in range(nd)]
    cu=[0]
    for l in lens: cu.append(cu[-1]+l)
    T=cu[-1]
    nslots = T//128 + nd
    seen = {}
    for slot in range(nslots):
        d,t,nt = doc_tile_of(cu, nd, slot)
        if d >= 0:
            assert 0 <= t < nt
            assert (d,t) not in seen
            seen[(d,t)] = slot
    expect = sum((l+127)//128 for l in lens)
    assert len(seen) == expect, (len(seen), expect)
    # order: within a doc tiles consecutive and increasing
    for d in range(nd):
        nt=(lens[d]+127)//128
        for t in range(1,nt): assert seen[(d,t)] == seen[(d,t-1)]+1
    if trial % 500 == 0: print(trial, nd, T, nslots, expect)
print("all layouts: every tile exactly once, idle slots <= docs")
