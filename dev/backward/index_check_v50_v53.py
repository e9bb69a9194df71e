#!/usr/bin/env python3
"""Exhaustive check, on the CPU, of the index rewrites in v50 / v52 / v53 (dev/backward):
every address or predicate the patched kernel forms equals the one the head forms, for every
thread and unrolled index. Python models of the kernel's integer expressions.
Usage: python3 dev/backward/index_check_v50_v53.py   (prints 'ok' or the first mismatch)"""


def perm_row(c):  # kernels/sm90/sm90_e4m3.cuh flamia_fp8_perm_row
    e, t, j, b = c & 1, (c >> 1) & 3, (c >> 3) & 3, c >> 5
    return (b << 5) | ((j >> 1) << 4) | (t << 2) | ((j & 1) << 1) | e


def acc_query(j, tq4):  # backward_fp8.cu
    return ((j >> 2) << 5) + (((j & 3) >> 1) << 4) + tq4 + ((j & 1) << 1)


def sw128(r, q):  # sm90_ptx.cuh
    return r * 128 + ((q ^ (r & 7)) << 4)


def check_v50():
    """dS code stores: head address vs four per-thread offsets plus immediates."""
    for tid in range(256):
        wg, wtid = tid >> 7, tid & 127
        wq, lane = wtid >> 5, tid & 31
        g, tq4 = lane >> 2, 4 * (lane & 3)
        rloc = [wg * 64 + wq * 16 + g, wg * 64 + wq * 16 + g + 8]
        c = (wg * 4 + wq) ^ (tq4 & 4)
        dsoff = [((c ^ k) << 4) | g for k in range(4)]
        for j in range(8):
            qn, cj = acc_query(j, tq4), acc_query(j, 0)
            assert qn == acc_query(j, 0) + tq4
            for hh in range(2):
                r = rloc[hh]
                old0 = qn * 128 + (((r >> 4) ^ (qn & 7)) << 4) + (r & 15)
                old1 = (qn + 1) * 128 + (((r >> 4) ^ ((qn + 1) & 7)) << 4) + (r & 15)
                new0 = tq4 * 128 + dsoff[cj & 2] + cj * 128 + 8 * hh
                new1 = tq4 * 128 + dsoff[(cj & 2) | 1] + (cj + 1) * 128 + 8 * hh
                if (old0, old1) != (new0, new1):
                    return "v50: tid %d j %d hh %d: %s != %s" % (tid, j, hh, (old0, old1), (new0, new1))
    return None


def check_v52():
    """A sub-step v52 calls full has no masked pair (jkv <= qlim for every element)."""
    for causal in (0, 1):
        for length in list(range(1, 300)) + [511, 512, 513, 1000, 1024]:
            for k0 in range(0, length, 128):
                for q0 in range(0 if not causal else k0, length, 128):
                    for h2 in range(2):
                        qsub = q0 + h2 * 64
                        if qsub >= length:
                            break
                        for wg in range(2):
                            klast = k0 + wg * 64 + 63
                            full = qsub + 63 < length and klast < length and (not causal or klast <= qsub)
                            if not full:
                                continue
                            for key in range(k0 + wg * 64, k0 + wg * 64 + 64):
                                jkv = key if key < length else 1 << 31
                                for i in range(qsub, qsub + 64):
                                    qlim = (i if causal else length - 1) if i < length else -1
                                    if not jkv <= qlim:
                                        return "v52: L %d causal %d k0 %d q0 %d key %d query %d masked" % (
                                            length, causal, k0, q0, key, i)
    return None


def check_v53():
    """Per-tile loads: token and shared offsets by constant strides vs per chunk."""
    for tid in range(256):
        for i in range(4):  # Q / dO rows
            ch = tid + i * 256
            c, q = ch >> 3, ch & 7
            c0 = tid >> 3
            if (perm_row(c), sw128(c, q)) != (perm_row(c0) + 32 * i, sw128(c0, q) + 4096 * i):
                return "v53 Q/dO: tid %d i %d" % (tid, i)
        for i in range(8):  # F16 dO panel
            ch = tid + i * 256
            r, cc = ch >> 4, ch & 15
            r0 = tid >> 4
            old = (cc >> 3) * 16384 + sw128(r, cc & 7)
            new = (cc >> 3) * 16384 + sw128(r0, cc & 7) + 2048 * i
            if (perm_row(r), old) != (perm_row(r0) + 16 * i, new):
                return "v53 dO panel: tid %d i %d" % (tid, i)
    return None


if __name__ == "__main__":
    for f in (check_v50, check_v52, check_v53):
        err = f()
        if err:
            raise SystemExit(err)
    print("ok: v50 stores, v52 full sub-steps, v53 tile loads")
