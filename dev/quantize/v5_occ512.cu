/*
 * v5_occ512.cu - dev variant of kernels/sm90/quantize.cu (v4, 35ef29e): same outputs
 * (codes, exponents, V^T with zeroed pad, BF16 operands, err_flag), bit for bit.
 * Changes against v4, in the order of dev/quantize/README.md's list:
 *  (1) mxfp8 (token blocks) runs 512-thread CTAs at 40 registers, 3 CTAs = 1536 threads
 *      per SM (v4: 64 registers, 4 x 256 = 1024). A window's range has n = 32 rows
 *      except where a document boundary falls in it, so the plain 512-thread mapping
 *      (2 passes of 32 rows) would leave the second pass, half the warps, empty almost
 *      always. Instead the CTA runs in GROUP MODE whenever n <= 32: its two 256-thread
 *      halves take alternate head slots (slot0 + h, slot0 + h + 2, ...), each covering
 *      the 32 rows with v4's per-thread pattern (D = 128: 2 rows of 16 B per thread),
 *      with its own named barrier (bar.sync 1 / 2, 256) and its own s_amax / V^T tile.
 *      For n > 32 both halves take every slot, half h the rows [32h, 32h + 32) with
 *      the same per-thread pattern, full-CTA barriers: one code path, a row offset
 *      instead of a slot offset. Rows in flight per SM: 1536 x 2 (v4: 1024 x 2).
 *      The per-token kinds keep 256 threads (QV5_NT1 changes that).
 *  (2) V^T leaves as 4-byte words: the transposition tile is indexed by token - 32w
 *      (so its 4-byte columns are the global 4-byte words; t_pad is a multiple of 16),
 *      XOR-swizzled by the dim's 8-group (conflict-free byte writes and word reads);
 *      half-warps store one dim row each, words wholly inside [a, b) as one 32-bit
 *      store, the (misaligned) edge words byte by byte. v4: one byte per lane.
 *  (4) The first slot's rows [32w, 32w + 32) are loaded BEFORE the cu_seqlens search
 *      (QV5_SPEC=1), in group mode's mapping (half h: slot0 + h): when the window starts
 *      a block (a = 32w: every window of an aligned pack) and group mode follows, those
 *      registers are the rows; rows >= 32 follow the search; otherwise the rows are
 *      reloaded (the speculative loads were L2 traffic only).
 *  (3) TMA bulk slab loads: not tried here.
 * Compile-time switches (for the timing run; every setting computes the same bytes):
 *   QV5_NT32   threads of the token-block kernels (512; 256 = v4's mapping + (2), (4))
 *   QV5_NT1    threads of the per-token kernels (mxfp8-exact, bf16; default 256 as v4)
 *   QV5_GROUPS 1: group mode (default); 0: the plain 512-thread mapping, 2 passes of 32 rows
 *   QV5_SPEC   1: (4) on (default); 0: the search first, as v4
 *   QV5_MINB   minimum CTAs/SM promised to ptxas for the non-Hadamard token-block kernel
 *              (3 = 40 registers: ptxas spills 36 B at D = 128 in group mode; 2 = 64)
 * @variant t256=QV5_NT32=256
 * @variant nospec=QV5_SPEC=0
 * @variant e512=QV5_NT1=512
 * @variant g0=QV5_GROUPS=0
 * @variant b2=QV5_MINB=2
 */
/*
 * quantize.cu - the fused quantize kernel of the Hopper backend (one launch).
 *
 * Reads BF16 Q, K, V [T][H][D] and cu_seqlens; optionally rotates Q and K by
 * H_D / sqrt(D) (Sylvester Hadamard, FP32 butterflies in the order of
 * flamia_ref_hadamard); computes the recipe's group statistics and writes, per
 * docs/numerics.md section 2 and the workspace layout of sm90_launch.h:
 *   E4M3 kinds: codes [T][H][D], the token's group exponent [T][H] (int8),
 *               V's codes transposed [Hkv][D][t_pad] (pad tokens zeroed),
 *               err_flag |= 1 on a non-finite input element;
 *   BF16 kind:  the BF16 operands (Q, K rotated and re-rounded to BF16 when
 *               the Hadamard option is on, else a copy).
 *
 * Work decomposition. The token axis is cut into windows of 32 tokens. A CTA
 * owns window w and a few head slots (slot = one head of Q, K or V). For
 * token-block scaling (mxfp8) the CTA processes every 32-token block of one
 * document that STARTS inside [32w, 32w+32): those blocks cover the contiguous
 * token range [a, b) with a = first block start >= 32w and b = first block
 * start >= 32w+32 (at most 63 tokens), so every block is read once, whole, by
 * one CTA, and no group ever crosses a document boundary. Block starts come
 * from one binary search of cu_seqlens per token (64 threads, one round).
 * Per-token scaling (mxfp8-exact) and the BF16 kind simply use [32w, 32w+32).
 *
 * Thread mapping: D/8 threads per token row, 8 elements (16 bytes) each; a
 * 256-thread CTA covers 2048/D rows per pass. Loads are 16-byte streaming
 * loads, the next head slot's rows are loaded while the current one is
 * encoded. E4M3 encoding uses the hardware conversion
 * cvt.rn.satfinite.e4m3x2.f32, which equals flamia_fmt_e4m3_encode on every
 * float (tests/gpu/test_gpu_e4m3_cvt.cu checks all 2^32 inputs), and the
 * exponent rule is flamia_fmt_block_exponent itself: the result is bit-exact
 * against a host quantization with flamia_formats.h (tests/gpu).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_launch.h"

namespace {

#ifndef QV5_NT32
#define QV5_NT32 512
#endif
#ifndef QV5_NT1
#define QV5_NT1 256
#endif
#ifndef QV5_SPEC
#define QV5_SPEC 1
#endif
#ifndef QV5_GROUPS
#define QV5_GROUPS 1
#endif
#ifndef QV5_MINB
#define QV5_MINB (QV5_NT32 == 512 ? 3 : 4)
#endif

template <int GRAN> struct Threads { static constexpr int n = GRAN == 1 ? QV5_NT1 : QV5_NT32; };

/* __launch_bounds__ minimum CTAs per SM: v4's choices for 256 threads; for 512 the same
 * threads per SM where 512 divides them, 3 x 512 (40 registers) for the token-block
 * kernel; the Hadamard kernels 1 x 512 (2 x 512 spills 44 bytes at D = 128). */
template <int GRAN, bool HAD> constexpr int min_blocks() {
    return Threads<GRAN>::n == 512 ? (HAD ? 1 : (GRAN == 1 ? 2 : QV5_MINB))
                                   : (HAD ? (GRAN == 1 ? 3 : 2) : (GRAN == 1 ? 4 : QV5_MINB));
}

struct QuantParams {
    const uint16_t *src[3]; /* Q, K, V */
    uint8_t *codes[3];
    int8_t *exps[3];
    uint16_t *bf16[3];
    uint8_t *vt;
    int *err;
    const int32_t *cu;
    int heads[3];
    int T, num_docs, t_pad, head_slots, heads_per_cta, hadamard;
    float had_norm;
};

__device__ __forceinline__ uint4 ld_stream(const uint16_t *p) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
}

template <int D, int GRAN, bool FP8, bool HAD>
__global__ void __launch_bounds__(Threads<GRAN>::n, min_blocks<GRAN, HAD>()) quantize_kernel(const QuantParams p) {
    constexpr int kThreads = Threads<GRAN>::n;
    constexpr int TPR = D / 8;           /* threads per token row */
    constexpr int RP = kThreads / TPR;   /* rows per pass (whole CTA) */
    constexpr int MAXR = GRAN == 1 ? 32 : 64;
    constexpr int NP = MAXR / RP > 0 ? MAXR / RP : 1; /* passes */
    constexpr int RPW = 32 / TPR;        /* rows per warp and pass */
    constexpr int VW = 16;               /* V^T tile: 64 token columns = 16 words per dim */
    static_assert(NP * RP >= MAXR, "mapping");
    /* Group mode (token blocks, 512 threads): when the CTA's range has n <= 32 rows (every
     * window but those holding a document boundary), the two 256-thread halves work on
     * alternate head slots, each half covering the 32 rows in NP passes of RP / 2 (D = 128:
     * 2 passes of 16 rows, as v4), with its own named barrier and shared buffers; else the
     * whole CTA covers the <= 63 rows in NP passes of RP. Either way NP rows per thread. */
    constexpr bool kGroups = GRAN != 1 && kThreads == 512 && QV5_GROUPS;
    constexpr int NG = kGroups ? 2 : 1;
    static_assert(!kGroups || NP * (RP / 2) >= 32, "group mapping");

    __shared__ int s_tokbs[64];          /* block start of token 32w + i (GRAN 32) */
    __shared__ float s_amax[NG][2][64];  /* row amax per unit, double-buffered by slot parity */
    __shared__ int s_range[2];
    /* V^T tile per unit [D][64 tokens from 32w] as words, word index XOR (d / 8) & 15 */
    __shared__ uint32_t s_vt[NG][FP8 ? D * VW : 1];

    const int tid = threadIdx.x;
    const int c = tid % TPR;
    const int T = p.T;
    const int w0 = blockIdx.x * 32;

    const int slot0 = blockIdx.y * p.heads_per_cta;
    const int slot1 = min(slot0 + p.heads_per_cta, p.head_slots);

    auto slot_tensor = [&](int slot, int &h) {
        if (slot < p.heads[0]) { h = slot; return 0; }
        if (slot < p.heads[0] + p.heads[1]) { h = slot - p.heads[0]; return 1; }
        h = slot - p.heads[0] - p.heads[1];
        return 2;
    };
    auto row_ptr = [&](int slot, int t) {
        int h;
        const int ti = slot_tensor(slot, h);
        return p.src[ti] + ((size_t)t * p.heads[ti] + h) * D + c * 8;
    };

    uint4 raw[NP];
    /* ---- 0. (4) speculative loads of the first slot's rows [32w, 32w + 32), in the mapping
     * of group mode where there is one (the mode of n <= 32) */
    constexpr bool kSpec = GRAN != 1 && QV5_SPEC;
    if (kSpec) {
        const int sg = kGroups ? tid >> 8 : 0;
        const int sr0 = (kGroups ? tid & 255 : tid) / TPR, srp = kGroups ? RP / 2 : RP;
#pragma unroll
        for (int q = 0; q < NP; q++) {
            const int r = sr0 + q * srp;
            if (slot0 + sg < slot1 && r < 32 && w0 + r < T) raw[q] = ld_stream(row_ptr(slot0 + sg, w0 + r));
            else raw[q] = make_uint4(0, 0, 0, 0);
        }
    }

    /* ---- 1. the token range [a, b) this CTA owns */
    int a, b;
    if (GRAN == 1) {
        a = w0;
        b = min(w0 + 32, T);
    } else {
        if (tid < 64) {
            const int t = w0 + tid;
            bool start = false;
            int bs = 0;
            if (t < T) {
                int lo = 0, hi = p.num_docs; /* cu[lo] <= t < cu[hi] */
                while (hi - lo > 1) {
                    const int mid = (lo + hi) >> 1;
                    if (__ldg(p.cu + mid) <= t) lo = mid; else hi = mid;
                }
                const int c0 = __ldg(p.cu + lo);
                bs = c0 + ((t - c0) & ~(GRAN - 1));
                start = bs == t;
            }
            s_tokbs[tid] = bs;
            const unsigned m = __ballot_sync(0xffffffffu, start);
            if ((tid & 31) == 0) {
                const int base = w0 + (tid & 32);
                /* no block starts in a window only when the block reaches T */
                s_range[tid >> 5] = m ? base + __ffs(m) - 1 : T;
            }
        }
        __syncthreads();
        a = s_range[0];
        b = s_range[1];
    }
    const int n = b - a; /* rows of this CTA (may be 0) */
    const int off = a - w0; /* first row's column in the V^T tile, [0, 32] */

    uint32_t badmax = 0; /* max |bf16| bit pattern seen: >= 0x7f80 is Inf or NaN */
    const bool grp = kGroups && n <= 32;

    /* The unit's mapping. Group mode: half h = tid / 256 takes slots slot0 + h, + 2, ...
     * rows r0 + 16q (D = 128). Else (n > 32) both halves take every slot, half h the rows
     * [32h, 32h + 32): the same per-thread pattern with a row offset instead of a slot
     * offset, so one code path serves both. Without groups the CTA is the unit. */
    constexpr int UT = kGroups ? 256 : kThreads; /* threads per half */
    constexpr int rpu = UT / TPR;                /* rows per pass of a half */
    const int half = kGroups ? tid >> 8 : 0;
    const int ut = kGroups ? tid & 255 : tid;
    const int gm = kGroups && grp ? 1 : 0;       /* group mode as 0/1 */
    const int roff = (half & (gm ^ 1)) * 32;
    const int g = half & gm;                     /* slot offset and shared buffer of the unit */
    const int sstep = 1 + gm;
    const int unit = kThreads >> gm;             /* threads in the unit */
    const int r0 = roff + ut / TPR;
    const int wrow0 = r0 & ~(RPW - 1);           /* first row of this warp in pass 0 */
    auto unit_sync = [&]() {
        if (!(kGroups && grp)) __syncthreads();
        else if (half) asm volatile("bar.sync 2, 256;" ::: "memory");
        else asm volatile("bar.sync 1, 256;" ::: "memory");
    };

    auto load_rows = [&](int slot, uint4 (&dst)[NP]) {
#pragma unroll
        for (int q = 0; q < NP; q++) {
            const int r = r0 + q * rpu;
            if (r < n) dst[q] = ld_stream(row_ptr(slot, a + r));
            else dst[q] = make_uint4(0, 0, 0, 0);
        }
    };

    if (slot0 + g < slot1) {
        if (kSpec) {
            /* a == 32w and the speculation's mapping: rows < 32 are in registers (rows
             * r >= n among them are tokens >= T, loaded as zeros); else every row is reloaded */
            const bool keep = a == w0 && (grp || half == 0);
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * rpu;
                if (r >= n) raw[q] = make_uint4(0, 0, 0, 0);
                else if (!keep || r >= 32) raw[q] = ld_stream(row_ptr(slot0 + g, a + r));
            }
        } else {
            load_rows(slot0 + g, raw);
        }
    }

    int it = 0; /* the unit's slot count (s_amax buffer parity) */
#pragma unroll 1
    for (int slot = slot0 + g; slot < slot1; slot += sstep, it++) {
        int h;
        const int ti = slot_tensor(slot, h);
        const int H = p.heads[ti];
        const bool rotate = HAD && ti < 2; /* the kernel's HAD matches p.hadamard */

        /* ---- 2. this slot's rows stay packed (BF16) in registers; FP32 copies exist only
         * in the Hadamard kernels. Passes with no row of this warp are skipped: the branch
         * is warp-uniform, so the shuffles below stay whole-warp. */
        float x[HAD ? NP : 1][8];
        uint4 cur[NP];
        uint32_t rmax[NP]; /* max |bf16| bits of the row (both halves reduced below) */
#pragma unroll
        for (int q = 0; q < NP; q++) {
            cur[q] = raw[q];
            const uint32_t wv[4] = {raw[q].x, raw[q].y, raw[q].z, raw[q].w};
            uint32_t m2 = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (FP8) m2 = flamia_vmax_u16x2(m2, wv[j] & 0x7fff7fffu);
                if (HAD) {
                    x[HAD ? q : 0][2 * j] = __uint_as_float(wv[j] << 16);
                    x[HAD ? q : 0][2 * j + 1] = __uint_as_float(wv[j] & 0xffff0000u);
                }
            }
            rmax[q] = max(m2 & 0xffffu, m2 >> 16);
        }
        if (slot + sstep < slot1) load_rows(slot + sstep, raw);

        /* ---- 3. Hadamard rotation of Q and K (same butterflies as flamia_ref_hadamard) */
        if (HAD && rotate) {
#pragma unroll
            for (int q = 0; q < (HAD ? NP : 0); q++) {
                if (wrow0 + q * rpu >= n) continue;
#pragma unroll
                for (int len = 1; len < 8; len <<= 1)
#pragma unroll
                    for (int i = 0; i < 8; i += 2 * len)
#pragma unroll
                        for (int j = i; j < i + len; j++) {
                            const float u = x[q][j], v = x[q][j + len];
                            x[q][j] = __fadd_rn(u, v);
                            x[q][j + len] = __fsub_rn(u, v);
                        }
#pragma unroll
                for (int m = 1; m < TPR; m <<= 1) {
                    const bool upper = (c & m) != 0; /* holds x[i + len] of each pair */
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const float o = __shfl_xor_sync(0xffffffffu, x[q][j], m);
                        x[q][j] = upper ? __fsub_rn(o, x[q][j]) : __fadd_rn(x[q][j], o);
                    }
                }
#pragma unroll
                for (int j = 0; j < 8; j++) x[q][j] = __fmul_rn(x[q][j], p.had_norm);
            }
        }

        if constexpr (!FP8) {
            /* ---- BF16 kind: copy, or the rotated values rounded to BF16 */
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * rpu;
                if (r >= n) continue;
                uint4 out = cur[q];
                if (HAD && rotate) {
                    uint32_t wv[4];
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        wv[j] = (uint32_t)flamia_bf16_bits(x[HAD ? q : 0][2 * j]) |
                                ((uint32_t)flamia_bf16_bits(x[HAD ? q : 0][2 * j + 1]) << 16);
                    out = make_uint4(wv[0], wv[1], wv[2], wv[3]);
                }
                *reinterpret_cast<uint4 *>(p.bf16[ti] + ((size_t)(a + r) * H + h) * D + c * 8) = out;
            }
        } else {
            /* ---- 4. row amax over the row's D/8 threads. Unrotated rows: the max |bf16|
             * bit pattern is the amax (non-negative floats order as their bits). */
            float ramax[NP];
#pragma unroll
            for (int q = 0; q < NP; q++) {
                ramax[q] = 0.0f;
                if (wrow0 + q * rpu >= n) continue;
                uint32_t mb = rmax[q];
#pragma unroll
                for (int o = TPR / 2; o >= 1; o >>= 1) mb = max(mb, __shfl_xor_sync(0xffffffffu, mb, o));
                badmax = max(badmax, mb);
                if (!(HAD && rotate)) {
                    ramax[q] = __uint_as_float(mb << 16);
                } else {
                    float m = 0.0f;
#pragma unroll
                    for (int j = 0; j < 8; j++) m = fmaxf(m, fabsf(x[HAD ? q : 0][j]));
#pragma unroll
                    for (int o = TPR / 2; o >= 1; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
                    ramax[q] = m;
                }
            }

            /* ---- 5. group exponents */
            int e[NP];
            if (GRAN == 1) {
#pragma unroll
                for (int q = 0; q < NP; q++) {
                    e[q] = flamia_block_exponent_ceil_fast(ramax[q]);
                    const int r = r0 + q * rpu;
                    if (c == 0 && r < n) p.exps[ti][(size_t)(a + r) * H + h] = (int8_t)e[q];
                }
            } else {
                /* Block max: row maxima meet in shared memory (one barrier); then the D/8
                 * threads of each row reduce over the rows of its block (<= 32, contiguous,
                 * same document) with a strided load and a shuffle tree. s_amax alternates
                 * between two buffers: a buffer is rewritten two slots later, after every
                 * reader has passed the next slot's barrier. */
                float (*am)[64] = s_amax[g];
                const int buf = it & 1;
#pragma unroll
                for (int q = 0; q < NP; q++) {
                    const int r = r0 + q * rpu;
                    if (c == 0 && r < n) am[buf][r] = ramax[q];
                }
                unit_sync();
#pragma unroll
                for (int q = 0; q < NP; q++) {
                    e[q] = 0;
                    if (wrow0 + q * rpu >= n) continue;
                    const int r = r0 + q * rpu;
                    float m = 0.0f;
                    if (r < n) {
                        const int bs = s_tokbs[off + r];
                        const int first = bs - a; /* >= 0: the block starts inside [a, b) */
#pragma unroll
                        for (int k = c; k < GRAN; k += TPR) {
                            const int i = first + k;
                            if (i < n && s_tokbs[off + i] == bs) m = fmaxf(m, am[buf][i]);
                        }
                    }
#pragma unroll
                    for (int o = TPR / 2; o >= 1; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
                    e[q] = flamia_block_exponent_ceil_fast(m);
                    if (c == 0 && r < n) p.exps[ti][(size_t)(a + r) * H + h] = (int8_t)e[q];
                }
            }

            /* ---- 6. E4M3 codes (and V's transposition tile) */
            const bool is_v = ti == 2;
            uint8_t *tile = reinterpret_cast<uint8_t *>(s_vt[g]);
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * rpu;
                if (r >= n) continue;
                const int ex = e[q];
                float xin[8];
                if (HAD && rotate) {
#pragma unroll
                    for (int j = 0; j < 8; j++) xin[j] = x[HAD ? q : 0][j];
                } else {
                    const uint32_t wv[4] = {cur[q].x, cur[q].y, cur[q].z, cur[q].w};
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        xin[2 * j] = __uint_as_float(wv[j] << 16);
                        xin[2 * j + 1] = __uint_as_float(wv[j] & 0xffff0000u);
                    }
                }
                float y[8];
                if (ex <= 126) {
                    const float sc = flamia_pow2f(-ex);
#pragma unroll
                    for (int j = 0; j < 8; j++) y[j] = __fmul_rn(xin[j], sc);
                } else {
#pragma unroll
                    for (int j = 0; j < 8; j++) y[j] = flamia_ldexpf(xin[j], -ex);
                }
                const uint32_t lo = flamia_cvt_e4m3x2(y[0], y[1]) | (flamia_cvt_e4m3x2(y[2], y[3]) << 16);
                const uint32_t hi = flamia_cvt_e4m3x2(y[4], y[5]) | (flamia_cvt_e4m3x2(y[6], y[7]) << 16);
                *reinterpret_cast<uint2 *>(p.codes[ti] + ((size_t)(a + r) * H + h) * D + c * 8) =
                    make_uint2(lo, hi);
                if (is_v) {
                    /* dims c*8 .. c*8+7 share the swizzle (d / 8) & 15 = c & 15 */
                    const int col = off + r;
                    const int cb = (((col >> 2) ^ (c & 15)) << 2) | (col & 3);
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        tile[(c * 8 + j) * (VW * 4) + cb] = (uint8_t)(lo >> (8 * j));
                        tile[(c * 8 + 4 + j) * (VW * 4) + cb] = (uint8_t)(hi >> (8 * j));
                    }
                }
            }
            if (is_v) {
                unit_sync();
                /* (2) a half-warp per V^T row, lane = word of 4 tokens from 32w */
                const int l = tid & 15;
                const int lo_t = l * 4 - off, hi_t = lo_t + 4; /* the word's rows, [lo_t, hi_t) */
                if (hi_t > 0 && lo_t < n) {
                    uint8_t *vt = p.vt + (size_t)h * D * p.t_pad + w0 + l * 4;
                    for (int d = (tid & (unit - 1)) >> 4; d < D; d += unit / 16) {
                        const uint32_t wd = s_vt[g][d * VW + (l ^ ((d >> 3) & 15))];
                        uint8_t *dst = vt + (size_t)d * p.t_pad;
                        if (lo_t >= 0 && hi_t <= n) {
                            *reinterpret_cast<uint32_t *>(dst) = wd;
                        } else {
#pragma unroll
                            for (int k = 0; k < 4; k++)
                                if (lo_t + k >= 0 && lo_t + k < n) dst[k] = (uint8_t)(wd >> (8 * k));
                        }
                    }
                }
                /* the last window also zeroes the pad tokens [T, t_pad) */
                const int pad = p.t_pad - T;
                if (blockIdx.x == gridDim.x - 1 && pad > 0)
                    for (int k = tid & (unit - 1); k < D * 16; k += unit) {
                        const int d = k / 16, i = k % 16;
                        if (i < pad) p.vt[((size_t)h * D + d) * p.t_pad + T + i] = 0;
                    }
            }
            /* GRAN 1: the next V slot rewrites the tile. GRAN 32: its s_amax barrier orders that. */
            if (GRAN == 1 && is_v) unit_sync();
        }
    }

    if (FP8) {
        const unsigned any = __ballot_sync(0xffffffffu, badmax >= 0x7f80u);
        if (any && (tid & 31) == 0) atomicOr(p.err, 1);
    }
}

template <int D, int GRAN, bool FP8>
cudaError_t launch(const QuantParams &qp, dim3 grid, cudaStream_t stream) {
    void *args[] = {const_cast<QuantParams *>(&qp)};
    const void *fn = qp.hadamard ? (const void *)quantize_kernel<D, GRAN, FP8, true>
                                 : (const void *)quantize_kernel<D, GRAN, FP8, false>;
    return cudaLaunchKernel(fn, grid, dim3(Threads<GRAN>::n), args, 0, stream);
}

template <int D>
cudaError_t dispatch(const QuantParams &qp, dim3 grid, enum flamia_sm90_kind kind, cudaStream_t stream) {
    switch (kind) {
    case FLAMIA_SM90_BF16: return launch<D, 1, false>(qp, grid, stream);
    case FLAMIA_SM90_MXFP8: return launch<D, 32, true>(qp, grid, stream);
    case FLAMIA_SM90_MXFP8_EXACT: return launch<D, 1, true>(qp, grid, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace

cudaError_t flamia_sm90_quantize(const struct flamia_sm90_problem *pb, const uint16_t *q, const uint16_t *k,
                                 const uint16_t *v, void *workspace, cudaStream_t stream) {
    const struct flamia_sm90_layout L = flamia_sm90_layout_of(pb);
    uint8_t *ws = (uint8_t *)workspace;
    QuantParams qp;
    qp.src[0] = q;
    qp.src[1] = k;
    qp.src[2] = v;
    qp.codes[0] = ws + L.q_codes;
    qp.codes[1] = ws + L.k_codes;
    qp.codes[2] = ws + L.v_codes;
    qp.exps[0] = (int8_t *)(ws + L.q_exp);
    qp.exps[1] = (int8_t *)(ws + L.k_exp);
    qp.exps[2] = (int8_t *)(ws + L.v_exp);
    qp.bf16[0] = (uint16_t *)(ws + L.q_bf16);
    qp.bf16[1] = (uint16_t *)(ws + L.k_bf16);
    qp.bf16[2] = (uint16_t *)(ws + L.v_bf16);
    qp.vt = ws + L.vt_codes;
    qp.err = (int *)(ws + L.err_flag);
    qp.cu = pb->cu_seqlens;
    qp.heads[0] = pb->heads_q;
    qp.heads[1] = pb->heads_kv;
    qp.heads[2] = pb->heads_kv;
    qp.T = pb->total_tokens;
    qp.num_docs = pb->num_docs;
    qp.t_pad = L.t_pad;
    qp.head_slots = pb->heads_q + 2 * pb->heads_kv;
    qp.hadamard = pb->hadamard;
    qp.had_norm = 1.0f / sqrtf((float)pb->head_dim); /* as flamia_ref_hadamard */

    /* Enough CTAs to fill 132 SMs many times over; up to 8 head slots per CTA
     * amortize the cu_seqlens search and keep the next slot's loads in flight. */
    const long long windows = (pb->total_tokens + 31) / 32;
    long long hpc = windows * qp.head_slots / 8192;
    if (hpc < 1) hpc = 1;
    if (hpc > 8) hpc = 8;
    qp.heads_per_cta = (int)hpc;
    const dim3 grid((unsigned)windows, (unsigned)((qp.head_slots + hpc - 1) / hpc));

    cudaError_t e = cudaMemsetAsync(qp.err, 0, sizeof(int), stream);
    if (e != cudaSuccess) return e;
    if (pb->head_dim == 128) return dispatch<128>(qp, grid, pb->kind, stream);
    if (pb->head_dim == 64) return dispatch<64>(qp, grid, pb->kind, stream);
    return cudaErrorInvalidValue;
}
