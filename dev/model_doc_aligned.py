# model_doc_aligned.py - a Python model (no GPU) of the index logic that writes the
# document-aligned transposed codes (sm90_launch.h flamia_sm90_vt_shift): the per-token
# quantize kernel's V^T placement as dev/quantize/v7_vt_place.patch computes it (GRAN 1:
# 32-token windows; GRAN 32: window_blocks' ranges of up to 63 tokens), its GRAN 1 windows
# over V^T positions (v8, with the 32-way search of doc_of_vt_position), the block-warp
# kernel's (committed: s_vshift from window_blocks, gap = s_vshift[bend] - s_vshift[bstart]),
# and dev/backward/v16_doc_aligned_t.patch's bwd_transpose (a search over positions). For
# random packs it checks that every position of a row [0, t_vpad) is written exactly once,
# with the right token's code or a zero in a gap. It models the sources' formulas, not the
# compiled code: the device checks (test_gpu_quantize, compare.sh bytes) remain the proof.
# Usage: python3 dev/model_doc_aligned.py   (~10 s)
import random

A = 32  # FLAMIA_SM90_VT_ALIGN

def shift(c, d):
    return ((c + A - 1) // A) * A - c + A * d

def doc_of(cu, t):
    return max(d for d in range(len(cu) - 1) if cu[d] <= t)

def reference(cu):
    T, nd = cu[-1], len(cu) - 1
    row = [None] * (T + shift(T, nd))  # None: a gap (zero)
    for d in range(nd):
        for t in range(cu[d], cu[d + 1]):
            row[t + shift(cu[d], d)] = t
    return row

def check(label, cu, writes):
    ref, got = reference(cu), {}
    for pos, val in writes:
        assert pos not in got, f"{label}: position {pos} written twice"
        got[pos] = val
    assert sorted(got) == list(range(len(ref))), f"{label}: positions {sorted(set(range(len(ref))) ^ set(got))[:5]}"
    for pos, val in got.items():
        assert val == ref[pos], f"{label}: position {pos} holds {val}, want {ref[pos]}"

def vt_place(cu, t):  # v7: one search; the gap after t (0 inside a document)
    d = doc_of(cu, t)
    s = shift(cu[d], d)
    return s, (shift(cu[d + 1], d + 1) - s if t + 1 == cu[d + 1] else 0)

def window_blocks(cu, w0):
    T, nd = cu[-1], len(cu) - 1
    starts, vsh = [], []
    for i in range(64):
        t = w0 + i
        if t < T:
            d = doc_of(cu, t)
            starts.append(cu[d] + ((t - cu[d]) & ~31) == t)
            vsh.append(shift(cu[d], d))
        else:
            starts.append(False)
            vsh.append(shift(T, nd))
    a = next((w0 + i for i in range(32) if starts[i]), T)
    b = next((w0 + i for i in range(32, 64) if starts[i]), T)
    return a, b, starts, vsh

def doc_of_vt_position(cu, pos):  # sm90_tiles.cuh: the 32-way warp search, step by step
    nd, lo, hi = len(cu) - 1, 0, len(cu) - 1
    while hi - lo > 1:
        step = (hi - lo + 31) >> 5
        m = [lo + lane * step < hi and cu[lo + lane * step] + shift(cu[lo + lane * step], lo + lane * step) <= pos
             for lane in range(32)]
        assert m[0]
        lo += max(k for k in range(32) if m[k]) * step
        hi = min(lo + step, hi)
    return lo

def general_kernel_gran1(cu):  # quantize_kernel GRAN 1 (v8): windows are V^T positions
    T, nd = cu[-1], len(cu) - 1
    tv, out, tokens = T + shift(T, nd), [], []
    assert tv % 32 == 0
    for w0 in range(0, tv, 32):
        d = doc_of_vt_position(cu, w0)
        a = min(w0 - shift(cu[d], d), cu[d + 1])
        b = min(a + 32, cu[d + 1])
        assert a >= cu[d]
        tokens += range(a, b)
        out += [(w0 + lane, a + lane if lane < b - a else None) for lane in range(32)]
    assert tokens == list(range(T)), "GRAN 1 windows: a token quantized twice or never"
    return out

def general_kernel(cu, gran):  # quantize_kernel's V^T writes with v7's placement (GRAN 32)
    T, out = cu[-1], []
    for w0 in range(0, T, 32):
        if gran == 1:
            a, b = w0, min(w0 + 32, T)
        else:
            a, b, _, _ = window_blocks(cu, w0)
        for lane in range(32):
            for i in range(2 if gran == 32 else 1):
                t = a + lane + 32 * i
                if t < b:
                    s, g = vt_place(cu, t)
                    out.append((t + s, t))
                    out += [(t + s + k, None) for k in range(1, g + 1)]
    return out

def warp_kernel(cu):  # quantize_block_warp_kernel's V^T writes (committed)
    T, out = cu[-1], []
    for w0 in range(0, T, 32):
        a, b, starts, vsh = window_blocks(cu, w0)
        bs = [w0 + i for i in range(64) if starts[i] and a <= w0 + i < b]
        for j, bstart in enumerate(bs):
            bend = bs[j + 1] if j + 1 < len(bs) else b
            assert bend - w0 <= 63, "bend outside s_vshift"
            n, sh = bend - bstart, vsh[bstart - w0]
            gap = vsh[bend - w0] - sh
            assert 1 <= n <= 32 and 0 <= gap <= 2 * A - 1
            out += [(bstart + sh + lane, bstart + lane) for lane in range(n)]
            out += [(bstart + sh + n + lane, None) for lane in range(gap)]
    return out

def bwd_transpose(cu):  # v16: position -> token
    T, nd = cu[-1], len(cu) - 1
    tv = T + shift(T, nd)
    out = []
    for p in range(0, (tv + 63) // 64 * 64):
        lo = max(d for d in range(nd) if cu[d] + shift(cu[d], d) <= p)
        t = p - shift(cu[lo], lo)
        if p < tv:
            out.append((p, t if t < cu[lo + 1] else None))
    return out

rng = random.Random(20261201)
pool = [1, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255, 257, 300, 385]
packs = [[1] * 70, [32] * 9, [4096], [644, 266, 4260, 1092, 55, 3420]]
for _ in range(120):
    target, lens = rng.randint(1, 3000), []
    while sum(lens) < target:
        lens.append(min(rng.choice(pool) if rng.random() < 0.7 else rng.randint(1, 400), target - sum(lens)))
    packs.append(lens)
for lens in packs:
    cu = [0]
    for l in lens:
        cu.append(cu[-1] + l)
    check("quantize gran 1 (v7)", cu, general_kernel(cu, 1))
    check("quantize gran 1 (v8, V^T windows)", cu, general_kernel_gran1(cu))
    check("quantize gran 32 (v7)", cu, general_kernel(cu, 32))
    check("block-warp kernel", cu, warp_kernel(cu))
    check("bwd_transpose (v16)", cu, bwd_transpose(cu))
print(f"model_doc_aligned: ok ({len(packs)} packs, 5 writers, every position written once)")
