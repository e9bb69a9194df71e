/*
 * quantize.cu - the fused quantize kernel of the Hopper backend (one launch).
 *
 * Reads BF16 Q, K, V [T][H][D] and cu_seqlens; optionally rotates Q and K by
 * H_D / sqrt(D) (Sylvester Hadamard, FP32 butterflies in the order of
 * flamia_ref_hadamard); computes the recipe's group statistics and writes, per
 * docs/numerics.md section 2 and the workspace layout of sm90_launch.h:
 *   E4M3 kinds: codes [T][H][D], the token's group exponent [T][H] (int8),
 *               V's codes transposed [Hkv][D][t_vpad] (documents on 32-token boundaries,
 *               flamia_sm90_vt_shift; the gaps zeroed), and in the training call
 *               (flamia_sm90_problem::qkt_in_quantize) Q's and K's the same way for the
 *               backward (qt_codes, kt_codes: its bwd_transpose pass is then skipped),
 *               err_flag |= FLAMIA_SM90_BAD_Q / _K / _V for a tensor with a non-finite
 *               element;
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
 * The BF16 kind simply uses tokens [32w, 32w+32). Per-token scaling (mxfp8-exact) cuts
 * V^T's positions instead: window w is positions [32w, 32w+32) of V^T, which hold the
 * tokens of one document (documents start on 32-token boundaries there) or a gap, so the
 * CTA writes its V^T rows as whole 32-byte sectors, gap zeros included (grid t_vpad / 32).
 *
 * mxfp8 without the rotation (the default recipe) runs quantize_block_warp_kernel
 * instead: the same windows and ranges, but one warp per (block, head slot), the block max
 * a whole-warp reduction with no shared-memory exchange or CTA barrier per slot.
 *
 * Thread mapping: D/8 threads per token row, 8 elements (16 bytes) each; a
 * 256-thread CTA covers 2048/D rows per pass. Loads are 16-byte streaming
 * loads, the next head slot's rows are loaded while the current one is
 * encoded. E4M3 encoding uses the hardware conversion
 * cvt.rn.satfinite.e4m3x2.f32, which equals flamia_fmt_e4m3_encode on every
 * float (tests/gpu/test_gpu_e4m3_cvt.cu checks all 2^32 inputs), and the
 * exponent rule is flamia_fmt_block_exponent itself (branch-free for CEIL): the result is
 * bit-exact against a host quantization with flamia_formats.h (tests/gpu).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_launch.h"
#include "sm90_tiles.cuh"

namespace {

constexpr int kThreads = 256;
/* grid shape: about this many CTAs, at most this many head slots per CTA (dev/quantize
 * builds variants with other values) */
#ifndef FLAMIA_QUANT_TARGET_CTAS
#define FLAMIA_QUANT_TARGET_CTAS 8192
#endif
#ifndef FLAMIA_QUANT_MAX_SLOTS
#define FLAMIA_QUANT_MAX_SLOTS 8
#endif
/* mxfp8 without rotation: quantize_block_warp_kernel (1) or quantize_kernel (0); its CTAs
 * per SM (register bound) and head slots per CTA */
#ifndef FLAMIA_QUANT_WARP_BLOCKS
#define FLAMIA_QUANT_WARP_BLOCKS 1
#endif
#ifndef FLAMIA_QUANT_WB_CTAS
#define FLAMIA_QUANT_WB_CTAS 2
#endif
/* 16 head slots a CTA: each warp converts two (block, slot) pairs a CTA, so the CTA's
 * cu_seqlens search is paid once per 16 pairs (forty-third session, dev/sessions/forty-third_fourth.sh:
 * against 8, -2.8 % at 16x4096, -6.9 % on 8192+224x256, -2.5 % on logu-64k, -0.3 % at 16x1024;
 * 24 and 48 gained less or lost, 48 +4 % at 16x1024 where too few CTAs remain) */
#ifndef FLAMIA_QUANT_WB_SLOTS
#define FLAMIA_QUANT_WB_SLOTS 16
#endif

/* Where token t < T lands in V^T: its document's flamia_sm90_vt_shift and the zero gap V^T
 * has after it (0 inside a document, 1..63 after its last token). One binary search of
 * cu_seqlens. The token-block kernel with the Hadamard rotation places its tokens this way;
 * the per-token kernel cuts V^T's positions instead (1. below). */
struct VtPlace {
    int shift, gap;
};
__device__ __forceinline__ VtPlace vt_place(const int32_t *cu, int num_docs, int t) {
    const int lo = flamia_sm90::doc_of_token(cu, num_docs, t);
    const int c1 = __ldg(cu + lo + 1);
    VtPlace r;
    r.shift = flamia_sm90_vt_shift(__ldg(cu + lo), lo);
    r.gap = t + 1 == c1 ? flamia_sm90_vt_shift(c1, lo + 1) - r.shift : 0;
    return r;
}

struct QuantParams {
    const uint16_t *src[3]; /* Q, K, V */
    uint8_t *codes[3];
    int8_t *exps[3];
    uint16_t *bf16[3];
    uint8_t *vt;
    uint8_t *qt, *kt; /* training call (flamia_sm90_problem::qkt_in_quantize): Q^T, K^T in V^T's
                         layout for the backward, else null */
    int *err;
    const int32_t *cu;
    int heads[3];
    int T, num_docs, t_vpad, head_slots, heads_per_cta, hadamard;
    float had_norm;
};

/* where operand ti's transposed codes go (null: not written), by selection rather than an
 * array indexed at run time (that puts the parameter block in local memory) */
__device__ __forceinline__ uint8_t *transposed_dst(const QuantParams &p, int ti) {
    return ti == 0 ? p.qt : ti == 1 ? p.kt : p.vt;
}

__device__ __forceinline__ uint4 ld_stream(const uint16_t *p) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
}

template <int D, int GRAN, bool FP8, bool HAD>
__global__ void __launch_bounds__(kThreads, HAD ? (GRAN == 1 ? 3 : 2) : 4) quantize_kernel(const QuantParams p) {
    constexpr int TPR = D / 8;           /* threads per token row */
    constexpr int RP = kThreads / TPR;   /* rows per pass */
    constexpr int MAXR = GRAN == 1 ? 32 : 64;
    constexpr int NP = MAXR / RP;        /* passes */
    constexpr int VSTR = MAXR + 1;       /* transposition tile row stride (bytes) */
    constexpr int RPW = 32 / TPR;        /* rows per warp and pass */
    static_assert(NP >= 1 && NP * RP == MAXR, "mapping");

    __shared__ int s_tokbs[64];          /* block start of token 32w + i (GRAN 32) */
    __shared__ float s_amax[2][64];      /* row amax, double-buffered by slot parity */
    __shared__ int s_range[2];
    __shared__ uint8_t s_vt[FP8 ? D * VSTR : 1];

    const int tid = threadIdx.x;
    const int c = tid % TPR;
    const int r0 = tid / TPR;
    const int wrow0 = (tid / 32) * RPW;  /* first row of this warp in pass 0 */
    const int T = p.T;
    const int w0 = blockIdx.x * 32;

    /* ---- 1. the token range [a, b) this CTA owns */
    int a, b;
    if (GRAN == 1 && FP8) {
        /* window w0 is V^T positions [w0, w0 + 32): the tokens of the one document there
         * (none in a gap), so every V^T row is written as whole 32-byte sectors; token-axis
         * windows split a sector between two CTAs wherever a document starts off a 32-token
         * boundary (eleventh session, v8: logu-64k 0.59 -> 0.43 ms, 16x4096 -8 %) */
        const int d = flamia_sm90::doc_of_vt_position(p.cu, p.num_docs, w0);
        const int c0 = __ldg(p.cu + d), c1 = __ldg(p.cu + d + 1);
        a = min(w0 - flamia_sm90_vt_shift(c0, d), c1);
        b = min(a + 32, c1);
    } else if (GRAN == 1) {
        a = w0;
        b = min(w0 + 32, T);
    } else {
        flamia_sm90::window_blocks(p.cu, p.num_docs, T, w0, s_tokbs, s_range);
        __syncthreads();
        a = s_range[0];
        b = s_range[1];
    }
    const int n = b - a; /* rows of this CTA (may be 0) */

    const int slot0 = blockIdx.y * p.heads_per_cta;
    const int slot1 = min(slot0 + p.heads_per_cta, p.head_slots);

    auto slot_tensor = [&](int slot, int &h) {
        if (slot < p.heads[0]) { h = slot; return 0; }
        if (slot < p.heads[0] + p.heads[1]) { h = slot - p.heads[0]; return 1; }
        h = slot - p.heads[0] - p.heads[1];
        return 2;
    };
    auto load_rows = [&](int slot, uint4 (&raw)[NP]) {
        int h;
        const int ti = slot_tensor(slot, h);
        const int H = p.heads[ti];
#pragma unroll
        for (int q = 0; q < NP; q++) {
            const int r = r0 + q * RP;
            if (r < n)
                raw[q] = ld_stream(p.src[ti] + ((size_t)(a + r) * H + h) * D + c * 8);
            else
                raw[q] = make_uint4(0, 0, 0, 0);
        }
    };

    uint32_t badmax = 0; /* max |bf16| bit pattern seen: >= 0x7f80 is Inf or NaN */
    uint4 raw[NP];
    if (slot0 < slot1) load_rows(slot0, raw);
    /* GRAN 32: V^T placement of tokens a + lane (+ 32), the same for every head: only CTAs
     * with a transposed slot (V's; Q's and K's too in the training call) search cu_seqlens,
     * and the search's latency overlaps the first slot's loads (GRAN 1 windows are V^T
     * positions already) */
    VtPlace vp[2] = {{0, 0}, {0, 0}};
    if (FP8 && GRAN == 32 && (p.qt != nullptr || slot1 > p.heads[0] + p.heads[1]))
        for (int i = 0; i < (MAXR > 32 ? 2 : 1); i++) {
            const int t = a + (tid & 31) + 32 * i;
            if (t < b) vp[i] = vt_place(p.cu, p.num_docs, t);
        }

    for (int slot = slot0; slot < slot1; slot++) {
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
        if (slot + 1 < slot1) load_rows(slot + 1, raw);

        /* ---- 3. Hadamard rotation of Q and K (same butterflies as flamia_ref_hadamard) */
        if (HAD && rotate) {
#pragma unroll
            for (int q = 0; q < (HAD ? NP : 0); q++) {
                if (wrow0 + q * RP >= n) continue;
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
                const int r = r0 + q * RP;
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
                if (wrow0 + q * RP >= n) continue;
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
                    e[q] = flamia_fmt_block_exponent(ramax[q], 0);
                    const int r = r0 + q * RP;
                    if (c == 0 && r < n) p.exps[ti][(size_t)(a + r) * H + h] = (int8_t)e[q];
                }
            } else {
                /* Block max: row maxima meet in shared memory (one barrier); then the D/8
                 * threads of each row reduce over the rows of its block (<= 32, contiguous,
                 * same document) with a strided load and a shuffle tree. s_amax alternates
                 * between two buffers: a buffer is rewritten two slots later, after every
                 * reader has passed the next slot's barrier. */
                float (*am)[64] = s_amax;
                const int buf = (slot - slot0) & 1;
                const int off = a - w0;
#pragma unroll
                for (int q = 0; q < NP; q++) {
                    const int r = r0 + q * RP;
                    if (c == 0 && r < n) am[buf][r] = ramax[q];
                }
                __syncthreads();
#pragma unroll
                for (int q = 0; q < NP; q++) {
                    e[q] = 0;
                    if (wrow0 + q * RP >= n) continue;
                    const int r = r0 + q * RP;
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
                    e[q] = flamia_fmt_block_exponent(m, 0);
                    if (c == 0 && r < n) p.exps[ti][(size_t)(a + r) * H + h] = (int8_t)e[q];
                }
            }

            /* ---- 6. E4M3 codes (and the transposition tile of V, and of Q and K in the
             * training call) */
            uint8_t *const tdst = transposed_dst(p, ti);
            const bool is_t = tdst != nullptr; /* CTA-uniform */
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * RP;
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
                    for (int j = 0; j < 8; j++) y[j] = flamia_ldexpf_outlined(xin[j], -ex);
                }
                const uint32_t lo = flamia_cvt_e4m3x2(y[0], y[1]) | (flamia_cvt_e4m3x2(y[2], y[3]) << 16);
                const uint32_t hi = flamia_cvt_e4m3x2(y[4], y[5]) | (flamia_cvt_e4m3x2(y[6], y[7]) << 16);
                *reinterpret_cast<uint2 *>(p.codes[ti] + ((size_t)(a + r) * H + h) * D + c * 8) =
                    make_uint2(lo, hi);
                if (is_t) {
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        s_vt[(c * 8 + j) * VSTR + r] = (uint8_t)(lo >> (8 * j));
                        s_vt[(c * 8 + 4 + j) * VSTR + r] = (uint8_t)(hi >> (8 * j));
                    }
                }
            }
            if (is_t) {
                __syncthreads();
                /* one warp per transposed row: lanes are consecutive tokens */
                const int lane = tid & 31;
                if (GRAN == 1) { /* positions w0 + lane: the window's tokens, then gap zeros */
                    uint8_t *vt = tdst + (size_t)h * D * p.t_vpad + w0;
                    for (int d = tid >> 5; d < D; d += kThreads / 32)
                        vt[(size_t)d * p.t_vpad + lane] = lane < n ? s_vt[d * VSTR + lane] : 0;
                } else {
                    uint8_t *vt = tdst + (size_t)h * D * p.t_vpad + a;
                    for (int d = tid >> 5; d < D; d += kThreads / 32) {
                        uint8_t *row = vt + (size_t)d * p.t_vpad;
                        if (lane < n) row[lane + vp[0].shift] = s_vt[d * VSTR + lane];
                        if (MAXR > 32 && lane + 32 < n) row[lane + 32 + vp[1].shift] = s_vt[d * VSTR + lane + 32];
                    }
                    /* after a document's last token, its lane zeroes the gap to the next one */
                    if (__any_sync(0xffffffffu, vp[0].gap | vp[1].gap))
                        for (int d = tid >> 5; d < D; d += kThreads / 32) {
                            uint8_t *row = vt + (size_t)d * p.t_vpad;
                            for (int i = 0; i < (MAXR > 32 ? 2 : 1); i++)
                                for (int g = 1; g <= vp[i].gap; g++) row[lane + 32 * i + vp[i].shift + g] = 0;
                        }
                }
            }
            /* GRAN 1: the next transposed slot rewrites the tile. GRAN 32: its s_amax barrier
             * orders that. */
            if (GRAN == 1 && is_t) __syncthreads();
        }
    }

    /* Which tensors: only when a warp saw a non-finite element, its lanes read their rows of
     * every slot again (a cold path, so that the loop above stays as it was without the
     * per-tensor record: in the loop it cost +1.5 % of the mxfp8-exact pass, forty-third session) */
    if (FP8 && __any_sync(0xffffffffu, badmax >= 0x7f80u)) {
        uint32_t bad_tensors = 0;
        for (int slot = slot0; slot < slot1; slot++) {
            int h;
            const int ti = slot_tensor(slot, h);
            load_rows(slot, raw);
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const uint32_t w[4] = {raw[q].x, raw[q].y, raw[q].z, raw[q].w};
#pragma unroll
                for (int i = 0; i < 4; i++)
                    if ((w[i] & 0x7f80u) == 0x7f80u || (w[i] & 0x7f800000u) == 0x7f800000u) bad_tensors |= 1u << ti;
            }
        }
        const unsigned bad = __reduce_or_sync(0xffffffffu, bad_tensors);
        if (bad && (tid & 31) == 0) atomicOr(p.err, (int)bad);
    }
}

/* ------------------------------------------------------------------------------------
 * Token-block recipe (mxfp8) without the Hadamard rotation: one WARP per (32-token block,
 * head slot). The CTA finds the blocks that start in its window as quantize_kernel does;
 * its 8 warps then take the (block, slot) pairs in turn. A lane loads its share of the
 * block's rows (D/8 lanes per row, 16 bytes each: 16 loads in flight for D = 128), the
 * block max is a whole-warp reduction (no shared memory, no CTA barrier per slot), and V's
 * transposition (Q's and K's too in the training call) goes through the warp's own shared
 * tile. Same values as quantize_kernel by construction: the block max is the max of the
 * rows' max |bf16| bit patterns, a row
 * whose pattern is a NaN ignored as fmaxf ignores it there (a rare path, taken when the
 * block holds a NaN), the same exponent rule and encoder. */
template <int D>
__global__ void __launch_bounds__(kThreads, FLAMIA_QUANT_WB_CTAS) quantize_block_warp_kernel(const QuantParams p) {
    constexpr int TPR = D / 8;  /* lanes per token row */
    constexpr int RPL = 32 / TPR; /* rows per warp-wide load */
    constexpr int NL = 32 / RPL;  /* loads per lane: a whole 32-row block */
    __shared__ int s_tokbs[64];
    __shared__ int s_range[2];
    __shared__ int s_vshift[64]; /* V^T shift of token w0 + i's document */
    /* a warp's block codes for the transposes: [row][dim], rows of TSTR bytes (an odd word
     * count, so that the two token halves' reads below fall in different banks) */
    constexpr int TSTR = D + 4;
    __shared__ __align__(16) uint8_t s_tile[kThreads / 32][32 * TSTR];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int c = lane % TPR, r0 = lane / TPR;
    const int T = p.T;
    const int w0 = blockIdx.x * 32;

    /* ---- the token range [a, b): the blocks that start in this window (quantize_kernel 1.) */
    flamia_sm90::window_blocks(p.cu, p.num_docs, T, w0, s_tokbs, s_range, s_vshift);
    __syncthreads();
    const int a = s_range[0], b = s_range[1];
    /* block starts in [a, b) as a 64-bit mask over window offsets (every warp the same) */
    unsigned long long starts = 0;
    {
        const int i0 = lane, i1 = lane + 32;
        const bool s0 = w0 + i0 >= a && w0 + i0 < b && s_tokbs[i0] == w0 + i0;
        const bool s1 = w0 + i1 >= a && w0 + i1 < b && s_tokbs[i1] == w0 + i1;
        starts = (unsigned long long)__ballot_sync(0xffffffffu, s0) |
                 ((unsigned long long)__ballot_sync(0xffffffffu, s1) << 32);
    }
    const int nb = __popcll(starts);
    const int slot0 = blockIdx.y * p.heads_per_cta;
    const int slot1 = min(slot0 + p.heads_per_cta, p.head_slots);
    const int npairs = nb * (slot1 - slot0);
    uint32_t bad_tensors = 0; /* 1 << ti for a tensor with an Inf or NaN (|bf16| bits >= 0x7f80) */

    for (int pr = warp; pr < npairs; pr += kThreads / 32) {
        const int j = pr % nb, slot = slot0 + pr / nb;
        /* the j-th start and the next one (or b) */
        unsigned long long m = starts;
        for (int k = 0; k < j; k++) m &= m - 1;
        const int bstart = w0 + __ffsll((long long)m) - 1;
        m &= m - 1;
        const int bend = m ? w0 + __ffsll((long long)m) - 1 : b;
        const int n = bend - bstart; /* rows of the block, 1..32 */
        int ti, h;
        if (slot < p.heads[0]) { ti = 0; h = slot; }
        else if (slot < p.heads[0] + p.heads[1]) { ti = 1; h = slot - p.heads[0]; }
        else { ti = 2; h = slot - p.heads[0] - p.heads[1]; }
        const int H = p.heads[ti];

        /* element offset of this lane's first row; row r0 + i RPL is i row strides further */
        const size_t base = ((size_t)(bstart + r0) * H + h) * D + c * 8, rstride = (size_t)RPL * H * D;
        uint4 raw[NL];
#pragma unroll
        for (int i = 0; i < NL; i++) {
            const int r = r0 + i * RPL;
            raw[i] = r < n ? ld_stream(p.src[ti] + base + i * rstride) : make_uint4(0, 0, 0, 0);
        }
        /* block max of the |bf16| bit patterns */
        uint32_t m2 = 0;
#pragma unroll
        for (int i = 0; i < NL; i++) {
            m2 = flamia_vmax_u16x2(m2, raw[i].x & 0x7fff7fffu);
            m2 = flamia_vmax_u16x2(m2, raw[i].y & 0x7fff7fffu);
            m2 = flamia_vmax_u16x2(m2, raw[i].z & 0x7fff7fffu);
            m2 = flamia_vmax_u16x2(m2, raw[i].w & 0x7fff7fffu);
        }
        uint32_t mb = max(m2 & 0xffffu, m2 >> 16);
#pragma unroll
        for (int o = 16; o >= 1; o >>= 1) mb = max(mb, __shfl_xor_sync(0xffffffffu, mb, o));
        bad_tensors |= (mb >= 0x7f80u ? 1u : 0u) << ti;
        if (mb > 0x7f80u) { /* a NaN somewhere: per row, a NaN row is left out (warp-uniform) */
            /* The rows are loaded again here rather than taken from raw[]: reusing raw[] let the
             * compiler keep the 64 masked words of the block max live beside the 64 raw ones
             * for this rare path, 132 bytes of spills a thread (sixty-first session) */
            uint32_t keep = 0;
#pragma unroll
            for (int i = 0; i < NL; i++) {
                const uint4 v = r0 + i * RPL < n ? ld_stream(p.src[ti] + base + i * rstride) : make_uint4(0, 0, 0, 0);
                uint32_t w2 = flamia_vmax_u16x2(flamia_vmax_u16x2(v.x & 0x7fff7fffu, v.y & 0x7fff7fffu),
                                                flamia_vmax_u16x2(v.z & 0x7fff7fffu, v.w & 0x7fff7fffu));
                uint32_t rb = max(w2 & 0xffffu, w2 >> 16);
#pragma unroll
                for (int o = TPR / 2; o >= 1; o >>= 1) rb = max(rb, __shfl_xor_sync(0xffffffffu, rb, o));
                if (rb <= 0x7f80u) keep = max(keep, rb);
            }
#pragma unroll
            for (int o = 16; o >= TPR; o >>= 1) keep = max(keep, __shfl_xor_sync(0xffffffffu, keep, o));
            mb = keep;
        }
        const int ex = flamia_fmt_block_exponent(__uint_as_float(mb << 16), 0);
        if (lane < n) p.exps[ti][(size_t)(bstart + lane) * H + h] = (int8_t)ex;

        /* V always, Q and K in the training call: the block's codes also go transposed
         * ([h][D][t_vpad], flamia_sm90_vt_shift), through the warp's shared tile */
        uint8_t *const tdst = transposed_dst(p, ti);
        uint8_t *const tile = s_tile[warp];
#pragma unroll
        for (int i = 0; i < NL; i++) {
            const int r = r0 + i * RPL;
            if (r >= n) { /* rows past the block: zero codes in the tile (they become the gap) */
                if (tdst) {
                    *reinterpret_cast<uint32_t *>(tile + r * TSTR + c * 8) = 0u;
                    *reinterpret_cast<uint32_t *>(tile + r * TSTR + c * 8 + 4) = 0u;
                }
                continue;
            }
            const uint32_t wv[4] = {raw[i].x, raw[i].y, raw[i].z, raw[i].w};
            float y[8];
            if (ex <= 126) {
                const float sc = flamia_pow2f(-ex);
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    y[2 * k] = __fmul_rn(__uint_as_float(wv[k] << 16), sc);
                    y[2 * k + 1] = __fmul_rn(__uint_as_float(wv[k] & 0xffff0000u), sc);
                }
            } else {
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    y[2 * k] = flamia_ldexpf_outlined(__uint_as_float(wv[k] << 16), -ex);
                    y[2 * k + 1] = flamia_ldexpf_outlined(__uint_as_float(wv[k] & 0xffff0000u), -ex);
                }
            }
            const uint32_t lo = flamia_cvt_e4m3x2(y[0], y[1]) | (flamia_cvt_e4m3x2(y[2], y[3]) << 16);
            const uint32_t hi = flamia_cvt_e4m3x2(y[4], y[5]) | (flamia_cvt_e4m3x2(y[6], y[7]) << 16);
            *reinterpret_cast<uint2 *>(p.codes[ti] + base + i * rstride) = make_uint2(lo, hi);
            if (tdst) {
                *reinterpret_cast<uint32_t *>(tile + r * TSTR + c * 8) = lo;
                *reinterpret_cast<uint32_t *>(tile + r * TSTR + c * 8 + 4) = hi;
            }
        }
        if (tdst) {
            /* The block's 32 transposed positions start on a 32-token boundary (documents do,
             * and blocks are 32 tokens from their document's start), so every dim's row gets
             * one whole 32-byte slot: tokens, then zeros past a short last block, and one more
             * slot of zeros when the gap is longer. Lane (dg, th) takes dims 4 dg .. 4 dg + 3
             * (dg = lane / 2 + 16 j) and tokens 16 th .. 16 th + 15 (th = lane & 1): 4 x 4 byte
             * blocks read as words and turned by byte permutes (flamia_transpose_bytes4x4), and
             * the two lanes of a pair store the two halves of a row's sector together
             * (fifteenth session: mxfp8 quantize 0.443 ms at 16x4096 as with the byte-wise
             * [dim][token] tile before; one lane per row, 16 bytes each, took 0.501 ms: twice
             * the L2 write requests; the byte-wise tile for Q and K too (FLAMIA_QUANT_TR_PAIRS=0 at f50c6a7): train
             * 11.934 ms against these pairs' 11.927, docs/perf-notes.md) */
            /* after a document's last block the gap to the next document is 1..63 zeros
             * (bend <= w0 + 63: in s_vshift) */
            const int sh = s_vshift[bstart - w0], gap = s_vshift[bend - w0] - sh;
            const bool zero_slot = gap > 32 - n; /* warp-uniform */
            const int th = lane & 1;
            __syncwarp();
#pragma unroll
            for (int j = 0; j < D / 64; j++) {
                const int dg = (lane >> 1) + 16 * j;
                uint32_t words[4][4]; /* [dim][token group]: 4 tokens' codes of one dim */
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    const int tb = 16 * th + 4 * k;
                    uint32_t w[4], out[4];
#pragma unroll
                    for (int i = 0; i < 4; i++) w[i] = *reinterpret_cast<const uint32_t *>(tile + (tb + i) * TSTR + 4 * dg);
                    flamia_transpose_bytes4x4(w[0], w[1], w[2], w[3], out);
#pragma unroll
                    for (int d = 0; d < 4; d++) words[d][k] = out[d];
                }
                uint8_t *dst = tdst + ((size_t)h * D + 4 * dg) * p.t_vpad + bstart + sh + 16 * th;
#pragma unroll
                for (int d = 0; d < 4; d++) {
                    uint4 *row = reinterpret_cast<uint4 *>(dst + (size_t)d * p.t_vpad);
                    row[0] = make_uint4(words[d][0], words[d][1], words[d][2], words[d][3]);
                    if (zero_slot) row[2] = make_uint4(0u, 0u, 0u, 0u);
                }
            }
            __syncwarp(); /* the tile is rewritten by this warp's next transposed pair */
        }
    }
    const unsigned bad = __reduce_or_sync(0xffffffffu, bad_tensors);
    if (bad && lane == 0) atomicOr(p.err, (int)bad);
}

template <int D, int GRAN, bool FP8>
cudaError_t launch(const QuantParams &qp, dim3 grid, cudaStream_t stream) {
    void *args[] = {const_cast<QuantParams *>(&qp)};
    const void *fn = qp.hadamard ? (const void *)quantize_kernel<D, GRAN, FP8, true>
                                 : (const void *)quantize_kernel<D, GRAN, FP8, false>;
    return cudaLaunchKernel(fn, grid, dim3(kThreads), args, 0, stream);
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
    const bool qkt = pb->qkt_in_quantize && pb->kind != FLAMIA_SM90_BF16;
    qp.qt = qkt ? ws + L.qt_codes : nullptr;
    qp.kt = qkt ? ws + L.kt_codes : nullptr;
    qp.err = (int *)(ws + L.err_flag);
    qp.cu = pb->cu_seqlens;
    qp.heads[0] = pb->heads_q;
    qp.heads[1] = pb->heads_kv;
    qp.heads[2] = pb->heads_kv;
    qp.T = pb->total_tokens;
    qp.num_docs = pb->num_docs;
    qp.t_vpad = L.t_vpad;
    qp.head_slots = pb->heads_q + 2 * pb->heads_kv;
    qp.hadamard = pb->hadamard;
    qp.had_norm = 1.0f / sqrtf((float)pb->head_dim); /* as flamia_ref_hadamard */

    /* Enough CTAs to fill 132 SMs many times over; several head slots per CTA
     * amortize the cu_seqlens search and keep the next slot's loads in flight. */
    const long long windows = (pb->total_tokens + 31) / 32;
    /* the per-token FP8 kernel's windows are V^T positions (quantize_kernel, 1.) */
    const long long windows_vt = pb->kind == FLAMIA_SM90_MXFP8_EXACT ? L.t_vpad / 32 : windows;
    long long hpc = windows * qp.head_slots / FLAMIA_QUANT_TARGET_CTAS;
    if (hpc < 1) hpc = 1;
    if (hpc > FLAMIA_QUANT_MAX_SLOTS) hpc = FLAMIA_QUANT_MAX_SLOTS;
    qp.heads_per_cta = (int)hpc;
    const dim3 grid((unsigned)windows_vt, (unsigned)((qp.head_slots + hpc - 1) / hpc));

    cudaError_t e = cudaMemsetAsync(qp.err, 0, sizeof(int), stream);
    if (e != cudaSuccess) return e;
    if (FLAMIA_QUANT_WARP_BLOCKS && pb->kind == FLAMIA_SM90_MXFP8 && !pb->hadamard &&
        (pb->head_dim == 128 || pb->head_dim == 64)) {
        /* one warp per (block, head slot), FLAMIA_QUANT_WB_SLOTS slots a CTA */
        qp.heads_per_cta = FLAMIA_QUANT_WB_SLOTS < qp.head_slots ? FLAMIA_QUANT_WB_SLOTS : qp.head_slots;
        const dim3 gwb((unsigned)windows, (unsigned)((qp.head_slots + qp.heads_per_cta - 1) / qp.heads_per_cta));
        void *args[] = {&qp};
        const void *fn = pb->head_dim == 128 ? (const void *)quantize_block_warp_kernel<128>
                                             : (const void *)quantize_block_warp_kernel<64>;
        e = cudaLaunchKernel(fn, gwb, dim3(kThreads), args, 0, stream);
        return e;
    }
    if (pb->head_dim == 128) return dispatch<128>(qp, grid, pb->kind, stream);
    if (pb->head_dim == 64) return dispatch<64>(qp, grid, pb->kind, stream);
    return cudaErrorInvalidValue;
}
