/*
 * backward.cu - the Hopper (sm_90a) attention backward of FLAMIA-H.
 *
 * Computes docs/numerics.md section 4 on the operands quantize.cu and forward.cu
 * left in the workspace (layout: sm90_launch.h). Four launches on the caller's
 * stream, no allocation, no host synchronization (graph-capturable):
 *
 *  1. bwd_pre_do     dO -> E4M3 codes with the recipe's groups (32-token document
 *                    blocks, CEIL; per token for mxfp8-exact), do_codes / do_exp,
 *                    and D_i = sum_d dO^_id O_id from the SAME quantized dO (FP32);
 *                    FP8 kinds: the main kernel's per-row constants (bwd_rows) and
 *                    the dO codes as exact F16 values (do_bf16, dV's B operand);
 *                    BF16 kind: do_bf16 copy and D from the BF16 dO.
 *  2. bwd_transpose  qt_codes, kt_codes: the same codes transposed to [H][D][t_vpad] in
 *                    V^T's layout (each document on a 32-token boundary, the gaps zero;
 *                    flamia_sm90_vt_shift) - one payload, two directions.
 *     (dq_accum and the deterministic mode's turn counters are zeroed by bwd_pre_do.)
 *  3. main kernel, one CTA per (128-key tile aligned to the document start, kv head):
 *     a 1-D grid over the batch's tile slots (sm90_tiles.cuh) x kv heads, kv head fastest;
 *     looping over the GQA group's query heads and the query tiles that see the key tile
 *     (causal: from the diagonal one). dK, dV stay in registers; dQ is reduce-added
 *     (TMA reduce-adds; deterministic mode: FP32 atomics in turn) into dq_accum.
 *       bwd_main_fp8 (mxfp8, mxfp8-exact; the default): FP8 wgmma (QGMMA) for the
 *       products, see "FP8 main kernel" below.
 *       bwd_simt (BF16 kind; FP8 kinds with FLAMIA_SM90_BWD=plain): 32x32 blocks in
 *       shared memory, FP32 FMA, the reference's function to FP32 summation order; slow.
 *  4. bwd_dq_out     dq_accum -> BF16 dq.
 *
 * P is rebuilt exactly as numerics.md 3.3 / 4.2 say: t = fl(s c) (s from the exact
 * FP32 products of the codes times the power-of-two factors), ti = trunc(t),
 * tf = t - ti, E = ex2.approx(tf) * 2^(ti - m_i) with m_i the forward's final
 * integer frame (row_frame), evaluated as the forward does (sm90_exp2.cuh),
 * pb = e4m3(E 2^8), P = dec(pb) 2^-8 exp2(m_i - lse_i/ln2) (the normalizer in FP64, as
 * the reference). dS = P (dP - D_i) in FP32, quantized
 * by the recipe's group (32x32 block max / query row x 32 keys, CEIL).
 *
 * FP8 main kernel: 2 consumer warpgroups, warpgroup w owns keys 64w..64w+63 of the
 * tile. Per query tile (128 queries, 4 operand tiles staged in shared memory:
 * Q and dO by cp.async with rows permuted as in forward.cu, Q^T and dO^T by TMA),
 * two sub-steps of 64 queries:
 *   S^T  = K Q^T     m64n64k32 SS  (row factor 2^eK_j, column factor c 2^eQ_i: exact)
 *   dP^T = V dO^T    m64n64k32 SS  (row factor 2^eV_j, column factor 2^eDO_i: exact)
 *   dV  += P^T dO    m64n128k16 F16 RS (HGMMA; A = P^T 2^(eDO - G) as F16 from the S
 *                                   accumulator, B = the dO codes as exact F16 values,
 *                                   rows in the staged (permuted) order, MN-major)
 *   dK  += dS^T Q    m64n128k32 RS
 *   dQ   = dS K      m64n64k32 SS  (dS codes written to shared memory [query][key]);
 *                                  warpgroup w computes head dims 64w..64w+63.
 * Scales along the contraction (numerics.md 4.6 GPU latitude), per product:
 *   dQ: EXACT option - one k=32 wgmma per 32-key block into a partial accumulator,
 *       added with the row factor scale 2^(eDS(i, block) + EKmax(i, block)); the A
 *       operand is the dS code itself (mxfp8: bit-exact), for mxfp8-exact times
 *       2^(eK_j - EKmax) with EKmax the max eK over the row's VALID keys of the block
 *       (a prefix max: never depends on later keys, so the exact recipe stays causal).
 *   dK: EXACT option - one k=32 wgmma per 32-query block into a partial, factor 2^M,
 *       M = max over the block of eDS + eQ; A = e4m3(dS^ 2^(eQ_i - M)): the dS code
 *       itself for mxfp8, a fold within 32 rows for mxfp8-exact (per-row eDS, per-token
 *       eQ; subnormal-only difference).
 *   (v2, dev/backward/v2_branchfree.patch, folded across the 4 key blocks / 2 query blocks
 *   instead: measured dQ/dK relL2 1.0e-2..1.4e-2 vs the reference, because a block whose
 *   scale is 2^s below the step's largest loses its small entries to E4M3 subnormals.)
 *   dV: P_ij contains the normalizer exp2(m_i - lse_i/ln2), not a power of two: an
 *       E4M3 operand would re-round P (v2 did: relative <= 2^-4 an element, measured
 *       dV relL2 2.7e-2). v3 multiplies P 2^(eDO_i - G + 14) in F16 (relative 2^-11;
 *       G = max eDO over the queries the key tile sees, all heads of the group; the
 *       +14 keeps P >= 2^-28 2^(G - eDO) normal in F16, the rest is the subnormal
 *       latitude) by the dO codes, exact in F16. Costs the F16 rate (half of FP8) on
 *       this one product.
 * TMA: the transposed tiles (tokens innermost) go by TMA, whose boxes must start 16-byte
 * aligned: Q^T and K^T hold every document from a 32-token boundary (v16, eleventh
 * session; before, a document starting off a 16-token boundary had its transposed tiles
 * built by a shared-memory transpose of the row tiles, 22 % of logu-64k's backward).
 * Per sub-step the two warpgroups meet at one CTA barrier, before dQ (its operand holds
 * both warpgroups' dS); the dS block maxima, exponents and dQ factors are warpgroup-local
 * (named barriers), and a query tile costs two more CTA barriers (its loads landed; the
 * previous tile's buffer is free, so the next tile's loads go out right after).
 * Epilogue: dK scaled (and rotated back), dV times 2^(G - 14), both through shared memory
 * (stmatrix) and out as whole 256-byte rows.
 * STATUS: v28 (thirteenth session, 2026-12-01): the same bytes as v3 in the deterministic
 * dQ mode; 10.18 ms at 16x4096 mxfp8 in the dev harness (v3 18.1, v9 11.34). Before v28:
 * 8.69 us per tile pair and 10.4 us per CTA; v28 took 3-5 us off the latter.
 * docs/perf-notes.md "Backward kernel".
 */
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "backward_wgmma.cuh"
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_launch.h"
#include "sm90_ptx.cuh"
#include "sm90_tiles.cuh"
#include "sm90_tma_host.cuh"

namespace flamia_bwd {

constexpr int kD = 128;
constexpr double kLn2 = 0.69314718055994530942;

/* ================================================================ helpers */
/* 2^e for any int e: 0 below FP32's range (callers only use e <= 127) */
__device__ __forceinline__ float pow2z(int e) { return e < -149 ? 0.f : flamia_pow2f(e > 127 ? 127 : e); }

/* two E4M3 codes (low byte a) -> two floats, exact */
__device__ __forceinline__ float2 e4m3x2_to_f2(uint32_t codes16) {
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)codes16));
    __half2 hv = *reinterpret_cast<__half2 *>(&h2);
    return __half22float2(hv);
}
__device__ __forceinline__ uint32_t bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* ================================================================ 1. dO */
struct PreParams {
    const uint16_t *dout, *o;
    uint8_t *do_codes;
    int8_t *do_exp;
    uint16_t *do_bf16;
    float *delta;
    float *dq_acc; /* zeroed here for the main kernel */
    int *dq_turn;  /* deterministic mode only (else null): zeroed here */
    int *err;
    const int32_t *cu;
    int T, Hq, num_docs;
    /* FP8 kinds: the main kernel's row constants (layout bwd_rows) from the forward's final
     * frame, lse, eQ and this kernel's D and eDO */
    float *rows;
    const float *row_frame, *lse;
    const int8_t *qe;
    float c;
};

/* GRAN: 32 token blocks (mxfp8), 1 per token (exact), 0 BF16. grid (windows of 32, Hq). */
/* 6 CTAs per SM (40 registers; shared memory allows 6): the dO rows are read again from
 * shared memory in the second pass rather than held in registers across the exponent barrier */
template <int GRAN>
__global__ void __launch_bounds__(256, 6) bwd_pre_do(const PreParams p) {
    __shared__ int s_tokbs[64];
    __shared__ float s_amax[64];
    __shared__ int s_exp[64];
    __shared__ int s_range[2];
    __shared__ float s_delta[64];
    __shared__ __align__(16) uint16_t s_io[2][64][kD]; /* the window's dO and O rows (BF16) */
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int h = blockIdx.y, T = p.T, w0 = blockIdx.x * 32;
    int a, b;
    if (GRAN == 32) { /* blocks that start in [w0, w0+32): the same rule as quantize.cu */
        flamia_sm90::window_blocks(p.cu, p.num_docs, T, w0, s_tokbs, s_range);
        __syncthreads();
        a = s_range[0];
        b = s_range[1];
    } else {
        a = w0;
        b = min(w0 + 32, T);
    }
    const int n = b - a; /* <= 63 rows */
    /* every dO and O row of the window goes out at once, by cp.async into shared memory
     * (no registers held, so occupancy stays; loads into registers, row by row, left
     * bwd_pre_do waiting on each load at 35 % of DRAM bandwidth: ncu, eleventh session) */
    for (int ch = tid; ch < n * (kD / 8); ch += 256) {
        const int r = ch / (kD / 8), q = ch % (kD / 8);
        const size_t off = ((size_t)(a + r) * p.Hq + h) * kD + q * 8;
        flamia_sm90::cp_async16(flamia_sm90::smem_u32(&s_io[0][r][q * 8]), p.dout + off, true);
        flamia_sm90::cp_async16(flamia_sm90::smem_u32(&s_io[1][r][q * 8]), p.o + off, true);
    }
    flamia_sm90::cp_async_commit();
    /* the main kernel's dQ accumulator rows of this window start at zero (and, deterministic
     * mode, their turn counters): stores while the rows fly, instead of a memset pass over
     * the whole region (537 MB at 16x4096) */
    for (int ch = tid; ch < n * (kD / 4); ch += 256) {
        const int r = ch / (kD / 4), q = ch % (kD / 4);
        reinterpret_cast<float4 *>(p.dq_acc + ((size_t)(a + r) * p.Hq + h) * kD)[q] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    if (p.dq_turn && tid < n) p.dq_turn[(size_t)(a + tid) * p.Hq + h] = 0;
    float rf_m = 0.f, rf_lse = 0.f; /* the row constants' inputs, in flight with the rows */
    int rf_eq = 0;
    if (GRAN != 0 && tid < n) {
        const size_t row = (size_t)(a + tid) * p.Hq + h;
        rf_m = p.row_frame[row];
        rf_lse = p.lse[row];
        rf_eq = p.qe[row];
    }
    flamia_sm90::cp_async_wait<0>();
    __syncthreads();
    constexpr int RPW = 8; /* rows per warp (8 warps x 8 >= 63) */
    /* dims 4 lane .. 4 lane + 3 of row r of the window's dO, from shared memory */
    auto row_x = [&](int r, float (&v)[4]) {
        const uint2 raw = *reinterpret_cast<const uint2 *>(&s_io[0][r][lane * 4]);
        v[0] = __uint_as_float(raw.x << 16);
        v[1] = __uint_as_float(raw.x & 0xffff0000u);
        v[2] = __uint_as_float(raw.y << 16);
        v[3] = __uint_as_float(raw.y & 0xffff0000u);
    };
    bool bad = false;
#pragma unroll
    for (int k = 0; k < RPW; k++) {
        const int r = warp + 8 * k;
        float xk[4]; /* one row at a time: the second pass reads the row again */
        xk[0] = xk[1] = xk[2] = xk[3] = 0.f;
        if (r < n) {
            const uint2 raw = *reinterpret_cast<const uint2 *>(&s_io[0][r][lane * 4]);
            row_x(r, xk);
            if (GRAN == 0) *reinterpret_cast<uint2 *>(p.do_bf16 + ((size_t)(a + r) * p.Hq + h) * kD + lane * 4) = raw;
            float m = 0.f;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                bad |= !isfinite(xk[e]);
                m = fmaxf(m, fabsf(xk[e]));
            }
#pragma unroll
            for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
            if (lane == 0) s_amax[r] = m;
        }
    }
    if (GRAN != 0) {
        __syncthreads();
        if (tid < n) {
            float m = s_amax[tid];
            if (GRAN == 32) {
                const int off = a - w0;
                const int bs = s_tokbs[off + tid];
                const int first = bs - a, last = min(first + 32, n);
                m = 0.f;
                for (int r = first; r < last; r++)
                    if (s_tokbs[off + r] == bs) m = fmaxf(m, s_amax[r]);
            }
            const int ex = flamia_fmt_block_exponent(m, 0);
            s_exp[tid] = ex;
            p.do_exp[(size_t)(a + tid) * p.Hq + h] = (int8_t)ex;
        }
        __syncthreads();
    }
#pragma unroll
    for (int k = 0; k < RPW; k++) {
        const int r = warp + 8 * k;
        if (r >= n) continue; /* warp-uniform */
        const size_t row = (size_t)(a + r) * p.Hq + h;
        float xk[4];
        row_x(r, xk);
        float dq[4];
        if (GRAN != 0) {
            const int ex = s_exp[r];
            float y[4];
            if (ex <= 126) {
                const float s = flamia_pow2f(-ex);
#pragma unroll
                for (int e = 0; e < 4; e++) y[e] = __fmul_rn(xk[e], s);
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++) y[e] = flamia_ldexpf_outlined(xk[e], -ex);
            }
            const uint32_t c = flamia_cvt_e4m3x2(y[0], y[1]) | (flamia_cvt_e4m3x2(y[2], y[3]) << 16);
            *reinterpret_cast<uint32_t *>(p.do_codes + row * kD + lane * 4) = c;
            /* the same codes as exact F16 values (dV's B operand; region do_bf16) */
            uint32_t h01, h23;
            asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h01) : "h"((uint16_t)(c & 0xffffu)));
            asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h23) : "h"((uint16_t)(c >> 16)));
            *reinterpret_cast<uint2 *>(p.do_bf16 + row * kD + lane * 4) = make_uint2(h01, h23);
            /* the dequantized dO (D uses it): the exact F16 values of the codes times 2^ex,
             * one multiplication as flamia_e4m3_dequant's flamia_ldexpf does for ex in the
             * normal range (the same bits); its software decode and range checks, unrolled
             * for 32 elements, were a third of this kernel's SASS */
            const float hv[4] = {__low2float(*reinterpret_cast<const __half2 *>(&h01)),
                                 __high2float(*reinterpret_cast<const __half2 *>(&h01)),
                                 __low2float(*reinterpret_cast<const __half2 *>(&h23)),
                                 __high2float(*reinterpret_cast<const __half2 *>(&h23))};
            if (ex >= -126 && ex <= 127) {
                const float s = flamia_pow2f(ex);
#pragma unroll
                for (int e = 0; e < 4; e++) dq[e] = hv[e] * s;
            } else {
#pragma unroll
                for (int e = 0; e < 4; e++) dq[e] = flamia_ldexpf_outlined(hv[e], ex);
            }
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++) dq[e] = xk[e];
        }
        const uint2 oraw = *reinterpret_cast<const uint2 *>(&s_io[1][r][lane * 4]);
        float acc = dq[0] * __uint_as_float(oraw.x << 16);
        acc = fmaf(dq[1], __uint_as_float(oraw.x & 0xffff0000u), acc);
        acc = fmaf(dq[2], __uint_as_float(oraw.y << 16), acc);
        acc = fmaf(dq[3], __uint_as_float(oraw.y & 0xffff0000u), acc);
#pragma unroll
        for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) {
            p.delta[row] = acc;
            s_delta[r] = acc;
        }
    }
    if (GRAN != 0) {
        const unsigned any = __ballot_sync(0xffffffffu, bad);
        if (any && lane == 0) atomicOr(p.err, 1);
        __syncthreads();
        if (tid < n) { /* row constants, one thread per token (consecutive: coalesced per field) */
            float *w = p.rows + (size_t)h * 8 * T + a + tid;
            const float m = rf_m;
            const int eq = rf_eq, edo = s_exp[tid];
            w[0] = p.c * flamia_pow2f(eq);
            /* 2^(8 - m): E(t, m) 2^8 = ex2(t) 2^(8 - m) (sm90_exp2.cuh); 0 where that form does not
             * hold (the main kernel then evaluates the split with m from row_frame) */
            w[(size_t)T] = flamia_sm90::exp_frame_direct_ok(m, m - 8.f) ? flamia_pow2f(8 - (int)m) : 0.f;
            w[2 * (size_t)T] = (float)exp2((double)m - (double)rf_lse / kLn2) * 0.00390625f;
            w[3 * (size_t)T] = s_delta[tid];
            w[4 * (size_t)T] = flamia_pow2f(edo);
            w[5 * (size_t)T] = __int_as_float(edo);
            w[7 * (size_t)T] = __int_as_float(eq);
        }
    }
}

/* ================================================================ 2. transposes */
struct TrParams {         /* [0] Q, [1] K */
    const uint8_t *src[2]; /* [T][H][D] */
    uint8_t *dst[2];       /* [H][D][t_vpad], documents on 32-token boundaries (flamia_sm90_vt_shift) */
    int heads[2];
    const int32_t *cu;
    int num_docs, t_vpad;
};

/* grid (ceil(t_vpad/64), ceil((Hq + Hkv) / kTrSlots)): 64 positions x 128 dims of kTrSlots
 * heads per CTA. Position pos holds token pos - shift(d) of the document d whose range
 * covers it (V^T's layout, sm90_launch.h), so that every document's tiles start 16-byte
 * aligned for TMA; the gaps between documents are written zero. The search that maps
 * positions to tokens is a chain of dependent loads ahead of the CTA's first load: one
 * per kTrSlots heads (v17: 191 us at 16x4096, ncu; one search per head took 307 us, the
 * token-order transpose before document alignment 265 us). v25's byte-permute read side and
 * parameter selection without local memory: 187 -> 147 us. */
#ifndef FLAMIA_BWD_TR_SLOTS
#define FLAMIA_BWD_TR_SLOTS 8
#endif
constexpr int kTrSlots = FLAMIA_BWD_TR_SLOTS;
__global__ void __launch_bounds__(256) bwd_transpose(const TrParams p) {
    __shared__ uint8_t s[64][kD + 4];
    __shared__ int s_tok[64];
    const int p0 = blockIdx.x * 64, tid = threadIdx.x;
    if (tid < 64) { /* the last document starting at or before this position */
        const int pos = p0 + tid;
        const int lo = flamia_sm90::last_doc(p.cu, p.num_docs,
                                             [=](int c, int d) { return flamia_sm90::vt_start(c, d) <= pos; });
        const int c0 = __ldg(p.cu + lo), t = pos - flamia_sm90_vt_shift(c0, lo);
        s_tok[tid] = t < __ldg(p.cu + lo + 1) ? t : -1; /* -1: a gap (or past the last document) */
    }
    __syncthreads();
    /* head slots slot0 .. slot1 - 1 (Q's heads, then K's), one search for all of them; the
     * next slot's rows are loaded before the barrier that frees the tile */
    const int slot0 = blockIdx.y * kTrSlots, slot1 = min(slot0 + kTrSlots, p.heads[0] + p.heads[1]);
    int tok[2];
#pragma unroll
    for (int k = 0; k < 2; k++) tok[k] = s_tok[(tid + 256 * k) >> 3];
    /* the slot's source, destination and head count by selection, not by indexing the
     * parameter arrays with a run-time index (that put the parameter block in local memory:
     * 56 B of stack, an LDL ahead of every row load's address) */
    auto load = [&](int slot, uint4 (&v)[2]) {
        const int ti = slot >= p.heads[0], h = slot - (ti ? p.heads[0] : 0), H = ti ? p.heads[1] : p.heads[0];
        const uint8_t *src = ti ? p.src[1] : p.src[0];
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const int q = (tid + 256 * k) & 7;
            v[k] = make_uint4(0, 0, 0, 0);
            if (tok[k] >= 0) v[k] = *reinterpret_cast<const uint4 *>(src + ((size_t)tok[k] * H + h) * kD + q * 16);
        }
    };
    uint4 v[2];
    load(slot0, v);
    /* the read side of the transpose: thread (dims 4 dg .. 4 dg + 3, tokens 8 tg .. 8 tg + 7)
     * reads 8 words and transposes two 4 x 4 byte blocks with byte permutes (8 LDS.32 and 16
     * PRMT for 32 bytes; byte loads took 32 LDS.U8 and their shifts) */
    const int dg = tid >> 3, tg = tid & 7;
    for (int slot = slot0; slot < slot1; slot++) {
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const int ch = tid + 256 * k, r = ch >> 3, q = ch & 7;
            const uint32_t w[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
#pragma unroll
            for (int j = 0; j < 4; j++) *reinterpret_cast<uint32_t *>(&s[r][q * 16 + 4 * j]) = w[j];
        }
        if (slot + 1 < slot1) load(slot + 1, v);
        __syncthreads();
        const int ti = slot >= p.heads[0], h = slot - (ti ? p.heads[0] : 0);
        uint8_t *dst = ti ? p.dst[1] : p.dst[0];
        uint32_t out[2][4]; /* [token half][dim]: 4 tokens' bytes of one dim */
#pragma unroll
        for (int half = 0; half < 2; half++) {
            uint32_t w[4]; /* rows 8 tg + 4 half + i, dims 4 dg .. 4 dg + 3 */
#pragma unroll
            for (int i = 0; i < 4; i++) w[i] = *reinterpret_cast<const uint32_t *>(&s[8 * tg + 4 * half + i][4 * dg]);
            flamia_transpose_bytes4x4(w[0], w[1], w[2], w[3], out[half]); /* out[half][d]: byte d of w[0..3] */
        }
        const int tt = p0 + 8 * tg;
        if (tt < p.t_vpad)
#pragma unroll
            for (int d = 0; d < 4; d++)
                *reinterpret_cast<uint2 *>(dst + ((size_t)h * kD + 4 * dg + d) * p.t_vpad + tt) =
                    make_uint2(out[0][d], out[1][d]);
        __syncthreads();
    }
}

/* ================================================================ 4. dq out */
/* Hadamard option (numerics.md 2): dQ, dK were computed in the rotated basis and are
 * rotated back by the same H_D / sqrt(D), the butterflies of flamia_ref_hadamard (each
 * stage forms a + b and a - b of the same pairs, so the FP32 results are the reference's
 * for the same inputs). `x` holds 4 consecutive dims 4 lane..4 lane+3 of one row (D=128
 * spread over a warp): stages 1, 2 in the thread, 4..64 across lanes. */
__device__ __forceinline__ void hadamard_row4(float (&x)[4], int lane, float norm) {
    float a = x[0], b = x[1];
    x[0] = a + b, x[1] = a - b;
    a = x[2], b = x[3];
    x[2] = a + b, x[3] = a - b;
    a = x[0], b = x[2];
    x[0] = a + b, x[2] = a - b;
    a = x[1], b = x[3];
    x[1] = a + b, x[3] = a - b;
#pragma unroll
    for (int st = 0; st < 5; st++) {
        const int m = 1 << st;
        const bool upper = (lane & m) != 0;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float o = __shfl_xor_sync(0xffffffffu, x[e], m);
            x[e] = upper ? o - x[e] : x[e] + o;
        }
    }
#pragma unroll
    for (int e = 0; e < 4; e++) x[e] *= norm;
}

/* dq_accum [rows][128] -> BF16 dq (rotated back when hadamard): one warp per row */
__global__ void bwd_dq_out(const float4 *acc, uint2 *dq, size_t rows, int hadamard, float had_norm) {
    const int lane = threadIdx.x & 31;
    for (size_t r = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5; r < rows;
         r += ((size_t)gridDim.x * blockDim.x) >> 5) {
        const float4 v = acc[r * 32 + lane];
        float x[4] = {v.x, v.y, v.z, v.w};
        if (hadamard) hadamard_row4(x, lane, had_norm);
        dq[r * 32 + lane] = make_uint2(bf16x2(x[0], x[1]), bf16x2(x[2], x[3]));
    }
}

/* ================================================================ main kernel parameters */
struct MainParams {
    const uint8_t *q8, *k8, *v8, *do8;
    const int8_t *qe, *ke, *ve, *doe;
    const uint16_t *qb, *kb, *vb, *dob;
    const float *row_frame, *lse, *delta;
    const float *rows; /* FP8 main kernel: the row constants (layout bwd_rows) */
    const uint16_t *dof16; /* FP8 main kernel: the dO codes as F16 values (region do_bf16) */
    float *dq_acc;
    int *dq_turn; /* deterministic dQ (DET kernels): the turn counters, zeroed per call */
    uint16_t *dk, *dv;
    const int32_t *cu;
    int T, Hq, Hkv, group, causal, hadamard;
    int num_docs; /* FP8 main kernel: its grid.x is the batch's tile slots (sm90_tiles.cuh) */
    float c, scale, had_norm;
};

/* Deterministic dQ: the CTAs that add into one query block take turns in key-tile order
 * (turn = their key tile index: for a causal query tile m the contributors are tiles
 * 0..m, otherwise all tiles, and every contributor adds exactly once per head), so each
 * dQ element is the same FP32 sum ((0 + c0) + c1) + ... on every run. No deadlock: a
 * CTA only waits for CTAs of a smaller key tile of the same (document, kv head), which
 * have smaller linear block indices in both grids (simt: key tile = z; FP8: the tile
 * slots of sm90_tiles.cuh, key tile fastest in x), so the hardware dispatched them
 * before it (block order), and which wait only on smaller tiles themselves. Costs a wavefront: tile n's CTA starts
 * adding into query tile m only after tile n-1's CTA has. */
__device__ __forceinline__ void dq_turn_wait(const int *turn, int mine) {
    if (threadIdx.x == 0) {
        int v;
        do {
            asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(turn) : "memory");
        } while (v != mine);
    }
    __syncthreads();
}
__device__ __forceinline__ void dq_turn_pass(int *turn, int mine) {
    __threadfence(); /* this CTA's dQ adds before the next one's */
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(turn), "r"(mine + 1) : "memory");
}

/* ================================================================ 3a. plain kernel */
/* KIND: 0 BF16, 1 mxfp8 (dS 32x32 blocks), 2 mxfp8-exact (dS per row x 32 keys).
 * grid (num_docs, Hkv, ceil(max_seqlen / 32)); 256 threads; one 32-key block per CTA. */
/* element d of operand row r (token x head) as the plain kernel reads it: the BF16 value
 * (KIND 0) or the E4M3 code times its row's block exponent */
template <int KIND>
__device__ __forceinline__ float simt_operand(const uint16_t *bf16, const uint8_t *codes, const int8_t *exps, size_t r,
                                              int d) {
    return KIND == 0 ? flamia_bf16_value(bf16[r * kD + d]) : flamia_e4m3_dequant(codes[r * kD + d], exps[r]);
}

template <int KIND, bool DET> /* DET: deterministic dQ (p.dq_turn) */
__global__ void __launch_bounds__(256) bwd_simt(const MainParams p) {
    constexpr int LD = kD + 1;
    extern __shared__ float sm[];
    float *sK = sm, *sV = sK + 32 * LD, *sQ = sV + 32 * LD, *sDO = sQ + 32 * LD;
    float *sP = sDO + 32 * LD, *sS = sP + 32 * 33;
    float *sM = sS + 32 * 33, *sN = sM + 32, *sDl = sN + 32, *sRA = sDl + 32;
    const int doc = blockIdx.x, hk = blockIdx.y, kbk = blockIdx.z;
    const int ds = p.cu[doc], len = p.cu[doc + 1] - ds;
    if (kbk * 32 >= len) return;
    const int tid = threadIdx.x;
    const int j0 = kbk * 32;
    /* K, V block, dequantized */
    for (int x = tid; x < 32 * kD; x += 256) {
        const int jj = x / kD, d = x % kD, j = j0 + jj;
        float kv = 0.f, vv = 0.f;
        if (j < len) {
            const size_t r = (size_t)(ds + j) * p.Hkv + hk;
            kv = simt_operand<KIND>(p.kb, p.k8, p.ke, r, d);
            vv = simt_operand<KIND>(p.vb, p.v8, p.ve, r, d);
        }
        sK[jj * LD + d] = kv;
        sV[jj * LD + d] = vv;
    }
    const int aj = tid >> 3, ad = (tid & 7) * 16; /* accumulator ownership: key aj, dims ad.. */
    float dk[16], dv[16];
#pragma unroll
    for (int x = 0; x < 16; x++) dk[x] = dv[x] = 0.f;
    const int nqb = (len + 31) / 32;
    for (int gi = 0; gi < p.group; gi++) {
        const int h = hk * p.group + gi;
        for (int qb = p.causal ? kbk : 0; qb < nqb; qb++) {
            const int i0 = qb * 32;
            __syncthreads();
            for (int x = tid; x < 32 * kD; x += 256) {
                const int ii = x / kD, d = x % kD, i = i0 + ii;
                float qv = 0.f, dov = 0.f;
                if (i < len) {
                    const size_t r = (size_t)(ds + i) * p.Hq + h;
                    qv = simt_operand<KIND>(p.qb, p.q8, p.qe, r, d);
                    dov = simt_operand<KIND>(p.dob, p.do8, p.doe, r, d);
                }
                sQ[ii * LD + d] = qv;
                sDO[ii * LD + d] = dov;
            }
            if (tid < 32) {
                const int i = i0 + tid;
                float m = 0.f, nr = 0.f, dl = 0.f;
                if (i < len) {
                    const size_t r = (size_t)(ds + i) * p.Hq + h;
                    m = p.row_frame[r];
                    nr = (float)exp2((double)m - (double)p.lse[r] / kLn2);
                    dl = p.delta[r];
                }
                sM[tid] = m;
                sN[tid] = nr;
                sDl[tid] = dl;
            }
            __syncthreads();
            /* S, dP, P, dS: thread -> row ii, keys jb..jb+3 */
            {
                const int ii = tid >> 3, jb = (tid & 7) * 4, i = i0 + ii;
                float s[4] = {0.f, 0.f, 0.f, 0.f}, dp[4] = {0.f, 0.f, 0.f, 0.f};
                for (int d = 0; d < kD; d++) {
                    const float qv = sQ[ii * LD + d], dov = sDO[ii * LD + d];
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        s[x] = fmaf(qv, sK[(jb + x) * LD + d], s[x]);
                        dp[x] = fmaf(dov, sV[(jb + x) * LD + d], dp[x]);
                    }
                }
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int j = j0 + jb + x;
                    const bool ok = i < len && j < len && (!p.causal || j <= i);
                    float P = 0.f, dS = 0.f;
                    if (ok) {
                        const float E = flamia_sm90::exp_frame_split_k63(s[x] * p.c, sM[ii]);
                        float pq;
                        if (KIND == 0) pq = flamia_round_bf16(E);
                        else pq = flamia_fmt_e4m3_decode(flamia_fmt_e4m3_encode(E * 256.f)) * 0.00390625f;
                        P = pq * sN[ii];
                        dS = P * (dp[x] - sDl[ii]);
                    }
                    sP[ii * 33 + jb + x] = P;
                    sS[ii * 33 + jb + x] = dS;
                }
            }
            __syncthreads();
            if (KIND != 0) {
                if (tid < 32) {
                    float a = 0.f;
                    for (int jj = 0; jj < 32; jj++) a = fmaxf(a, fabsf(sS[tid * 33 + jj]));
                    sRA[tid] = a;
                }
                __syncthreads();
                const int ii = tid >> 3, jb = (tid & 7) * 4;
                float a = sRA[ii];
                if (KIND == 1)
                    for (int r = 0; r < 32; r++) a = fmaxf(a, sRA[r]);
                const int e = flamia_fmt_block_exponent(a, 0);
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    float *ps = &sS[ii * 33 + jb + x];
                    *ps = flamia_e4m3_dequant(flamia_e4m3_quant(*ps, e), e);
                }
            } else {
                const int ii = tid >> 3, jb = (tid & 7) * 4;
#pragma unroll
                for (int x = 0; x < 4; x++) sS[ii * 33 + jb + x] = flamia_round_bf16(sS[ii * 33 + jb + x]);
            }
            __syncthreads();
            /* dV, dK for key aj */
            for (int ii = 0; ii < 32; ii++) {
                const float P = sP[ii * 33 + aj], dS = sS[ii * 33 + aj];
#pragma unroll
                for (int x = 0; x < 16; x++) {
                    dv[x] = fmaf(P, sDO[ii * LD + ad + x], dv[x]);
                    dk[x] = fmaf(dS, sQ[ii * LD + ad + x], dk[x]);
                }
            }
            /* dQ for row ai = aj */
            int *turn = DET ? p.dq_turn + (size_t)(ds + i0) * p.Hq + h : nullptr;
            if (DET) dq_turn_wait(turn, kbk);
            {
                const int ii = aj, i = i0 + ii;
                float acc[16];
#pragma unroll
                for (int x = 0; x < 16; x++) acc[x] = 0.f;
                for (int jj = 0; jj < 32; jj++) {
                    const float dS = sS[ii * 33 + jj];
#pragma unroll
                    for (int x = 0; x < 16; x++) acc[x] = fmaf(dS, sK[jj * LD + ad + x], acc[x]);
                }
                if (i < len) {
                    float *dst = p.dq_acc + ((size_t)(ds + i) * p.Hq + h) * kD + ad;
#pragma unroll
                    for (int x = 0; x < 16; x += 2)
                        atomicAdd(reinterpret_cast<float2 *>(dst + x), make_float2(acc[x] * p.scale, acc[x + 1] * p.scale));
                }
            }
            if (DET) dq_turn_pass(turn, kbk);
        }
    }
    const int j = j0 + aj;
#pragma unroll
    for (int x = 0; x < 16; x++) dk[x] *= p.scale;
    if (p.hadamard) { /* dims ad..ad+15 here (in-thread stages 1..8), 8 lanes per key (16..64) */
#pragma unroll
        for (int st = 0; st < 4; st++) {
            const int len2 = 1 << st;
#pragma unroll
            for (int x = 0; x < 16; x++)
                if ((x & len2) == 0) {
                    const float a = dk[x], b = dk[x + len2];
                    dk[x] = a + b;
                    dk[x + len2] = a - b;
                }
        }
#pragma unroll
        for (int st = 0; st < 3; st++) {
            const int m = 1 << st;
            const bool upper = (tid & m) != 0;
#pragma unroll
            for (int x = 0; x < 16; x++) {
                const float o = __shfl_xor_sync(0xffffffffu, dk[x], m);
                dk[x] = upper ? o - dk[x] : dk[x] + o;
            }
        }
#pragma unroll
        for (int x = 0; x < 16; x++) dk[x] *= p.had_norm;
    }
    if (j < len) {
        const size_t r = ((size_t)(ds + j) * p.Hkv + hk) * kD + ad;
#pragma unroll
        for (int x = 0; x < 16; x += 2) {
            *reinterpret_cast<uint32_t *>(p.dk + r + x) = bf16x2(dk[x], dk[x + 1]);
            *reinterpret_cast<uint32_t *>(p.dv + r + x) = bf16x2(dv[x], dv[x + 1]);
        }
    }
}

/* ================================================================ 3b. FP8 wgmma kernel */
using namespace flamia_sm90; /* sm90_ptx.cuh */
__device__ __forceinline__ uint32_t f16x2(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
/* query held by row c of a permuted Q / dO tile (forward.cu's perm_key) */
__device__ __forceinline__ int perm_row(int c) {
    const int e = c & 1, t = (c >> 1) & 3, j = (c >> 3) & 3, b = c >> 5;
    return (b << 5) | ((j >> 1) << 4) | (t << 2) | ((j & 1) << 1) | e;
}

/* query (0..63 in a sub-step) of accumulator column pair j of lane quad tq (tq4 = 4 tq):
 * perm_row(8 j + 2 tq), written out so that it folds to adds for an unrolled j */
__device__ __forceinline__ int acc_query(int j, int tq4) {
    return ((j >> 2) << 5) + (((j & 3) >> 1) << 4) + tq4 + ((j & 1) << 1);
}

/* 2^e built from the bits, branch-free: 0 for e <= -127 (FP32 subnormal factors only
 * ever scale values whose E4M3 code is 0 anyway), e <= 127 by construction. */
__device__ __forceinline__ float pow2b(int e) { return __int_as_float(min(max(e + 127, 0), 254) << 23); }

/* this thread's cp.async copies so far arrive on mbarrier `bar` when they complete (no
 * pending-count increment: the barrier's expected count includes this thread) */
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/* TMA reduce-add of a shared-memory box into global memory (element-wise atomic adds),
 * tracked by the issuing thread's bulk groups */
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap *map, uint32_t src, int c0, int c1, int c2) {
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* this thread's bulk operations have read their shared-memory sources */
__device__ __forceinline__ void bulk_wait_read_all() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
/* ... and completed */
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
/* One step of a butterfly max-reduction of v[0 .. 2 HALF) over lane bit m: the upper lane
 * keeps columns HALF.., the lower 0..HALF-1 (both in v[0 .. HALF)); the exchanged value is
 * picked with bit selects (a ?: on the array elements made the compiler index local memory). */
template <int HALF> __device__ __forceinline__ void butterfly_max_step(float (&v)[16], int lane, int m) {
    const uint32_t sel = (lane & m) ? 0xffffffffu : 0u;
#pragma unroll
    for (int c = 0; c < HALF; c++) {
        const uint32_t lo = __float_as_uint(v[c]), hi = __float_as_uint(v[c + HALF]);
        const uint32_t send = hi ^ ((lo ^ hi) & sel), keep = lo ^ hi ^ send;
        v[c] = fmaxf(__uint_as_float(keep), __shfl_xor_sync(0xffffffffu, __uint_as_float(send), m));
    }
}

struct SmemF {
    static constexpr int kTile = 128 * 128;
    static constexpr int kK = 0, kV = kK + kTile, kKt = kV + kTile;
    static constexpr int kBuf = kKt + kTile;                 /* 2 x {Q, dO, Q^T} */
    static constexpr int kQ = 0, kDO = kTile, kQt = 2 * kTile, kBufBytes = 3 * kTile;
    static constexpr int kDOh = kBuf + 2 * kBufBytes;        /* dO codes as F16, [128 rows c][128 D], 2 panels */
    static constexpr int kDS = kDOh + 2 * kTile;             /* 2 x [64][128] dS codes (dQ operand) */
    static constexpr int kRow = kDS + kTile;                 /* 2 x per query of the tile (natural order): */
    /* float crow, 2^23+520-m, norm*2^-8, delta, 2^eDO, 2^(eDO-G); int qlim, eq : 8 x 128 x 4 */
    static constexpr int kRowBytes = 8 * 128 * 4;
    static constexpr int kAmax = kRow + 2 * kRowBytes;       /* float [8 warps][64]: |dS| max of a warp's 16 keys */
    static constexpr int kEds = kAmax + 8 * 64 * 4;          /* int [4][64] */
    static constexpr int kInv = kEds + 4 * 64 * 4;           /* float [4][64]: 2^-eDS */
    static constexpr int kDqf = kInv + 4 * 64 * 4;           /* float [2][4][64]: scale 2^(eDS + EKmax), dQ partial factor */
    static constexpr int kIek = kDqf + 2 * 4 * 64 * 4;       /* float [4][64]: 2^-EKmax (dQ operand fold, exact recipe) */
    static constexpr int kMk = kIek + 4 * 64 * 4;            /* int [4][2] (+pad): dK partial exponent per (key, query) block */
    static constexpr int kEKp = kMk + 16 * 4;                /* int [128] */
    static constexpr int kMisc = kEKp + 128 * 4;             /* int [8] */
    static constexpr int kPvf = kMisc + 8 * 4;               /* float [2 warpgroups][128]: dV operand factor */
    static constexpr int kBar = kPvf + 2 * 128 * 4;          /* uint64 [4] */
    static constexpr int kBytes = kBar + 32 + 1024;
};

/* The FP8 main kernel's body. DBG (flamia_cuda_debug_p_codes, kernel bwd_main_fp8_dbg):
 * also stores every evaluated pair's recomputed P code at dbg_codes[(h T + i) T + j]
 * (global token indices) and writes no dK, dV. */
template <int KIND, bool DBG, bool DET> /* 1 mxfp8, 2 mxfp8-exact; DET: deterministic dQ */
__device__ __forceinline__ void bwd_main_body(const CUtensorMap &tm_qt, const CUtensorMap &tm_kt,
                                              const CUtensorMap &tm_dq, const MainParams &p,
                                              uint8_t *dbg_codes) {
    using SM = SmemF;
    constexpr int NOEXP = -1000;
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    /* 1024-byte alignment by pointer arithmetic on the shared array itself (keeps the
     * shared state space visible to the compiler: LDS/STS/ATOMS, not generic accesses) */
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    float *sAmax = (float *)(smem + SM::kAmax);
    int *sEds = (int *)(smem + SM::kEds), *sMk = (int *)(smem + SM::kMk);
    float *sInv = (float *)(smem + SM::kInv), *sDqf = (float *)(smem + SM::kDqf), *sIek = (float *)(smem + SM::kIek);
    int *sEKp = (int *)(smem + SM::kEKp), *sMisc = (int *)(smem + SM::kMisc);
    uint64_t *sBar = (uint64_t *)(smem + SM::kBar);

    /* a 1-D grid over (key tile slot, kv head): kv head fastest, then key tile, then
     * document (sm90_tiles.cuh slots). A document's first key tiles, the CTAs that see the
     * most query tiles, start together for all heads early in that document's share of
     * the grid, so the run does not end waiting on a long CTA launched late (kv head
     * slowest, the order before, left the last head's first key tiles to the end: a
     * list-scheduling model of the Table A fit put that tail at 1.4-11 % of the backward,
     * dev/backward/v23_head_fastest.patch). The CTAs resident together still share one or
     * two documents' Q / dO tiles and dq_acc rows in L2. */
    const DocTile dt = doc_tile_of(p.cu, p.num_docs, (int)(blockIdx.x / p.Hkv));
    if (dt.doc < 0) return;
    const int doc = dt.doc, n = dt.tile, hk = (int)(blockIdx.x % p.Hkv);
    const int ds = p.cu[doc], len = p.cu[doc + 1] - ds;
    const int k0 = n * 128; /* doc-local first key of the tile */
    const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, wq = wtid >> 5, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3, tq4 = 4 * tq;
    const int rloc[2] = {wg * 64 + wq * 16 + g, wg * 64 + wq * 16 + g + 8}; /* tile-local keys of my rows */
    const int kbl = wg * 2 + (wq >> 1);                                      /* my rows' 32-key block */
    const int mt0 = p.causal ? n : 0, nqt = (len + 127) / 128, per_head = nqt - mt0;
    const int nit = per_head * p.group;
    /* the document's first position in Q^T / K^T (32-token aligned, bwd_transpose): the
     * transposed tiles' TMA boxes start there */
    const int tpos = vt_start(ds, doc);

    /* ---- prologue: K, V (natural order) by cp.async; K^T by TMA; key constants */
    if (tid == 0) {
        for (int b = 0; b < 3; b++) mbar_init(smem_u32(&sBar[b]), 1);
        mbar_init(smem_u32(&sBar[3]), 256); /* the F16 dO tile: every thread's cp.async */
        sMisc[0] = NOEXP;
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int ch = tid + i * 256, r = ch >> 3, q = ch & 7;
        const int tok = ds + k0 + r;
        const bool ok = tok < p.T;
        const size_t off = ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 16;
        cp_async16(smem_u32(smem + SM::kK + sw128(r, q)), p.k8 + off, ok);
        cp_async16(smem_u32(smem + SM::kV + sw128(r, q)), p.v8 + off, ok);
    }
    cp_async_commit();
    if (tid == 0) {
        const uint32_t bar = smem_u32(&sBar[2]);
        mbar_expect_tx(bar, 128 * 128);
        tma_load_3d(smem_u32(smem + SM::kKt), &tm_kt, tpos + k0, 0, hk, bar);
    }
    float kf[2], vf[2], ekf[2];
    int jkv[2];
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        const int j = k0 + rloc[hh];
        kf[hh] = vf[hh] = ekf[hh] = 0.f;
        jkv[hh] = 0x7fffffff; /* never <= a query limit */
        if (j < len) {
            const size_t r = (size_t)(ds + j) * p.Hkv + hk;
            const int ek = p.ke[r];
            kf[hh] = ekf[hh] = flamia_pow2f(ek);
            vf[hh] = flamia_pow2f(p.ve[r]);
            jkv[hh] = j;
        }
    }
    if (tid < 128) { /* prefix max of eK inside each 32-key block (valid keys only) */
        const int j = k0 + tid;
        int x = j < len ? (int)p.ke[(size_t)(ds + j) * p.Hkv + hk] : NOEXP;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(0xffffffffu, x, o);
            if (lane >= o) x = max(x, y);
        }
        sEKp[tid] = x;
    }
    { /* G = max eDO over the queries this key tile meets, all heads of the group */
        const int qs = mt0 * 128;
        int mx = NOEXP;
        for (int x = tid; x < (len - qs) * p.group; x += 256) {
            const int qi = qs + x / p.group, h = hk * p.group + x % p.group;
            mx = max(mx, (int)p.doe[(size_t)(ds + qi) * p.Hq + h]);
        }
#pragma unroll
        for (int o = 16; o; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        if (lane == 0) atomicMax(&sMisc[0], mx);
    }
    __syncthreads();
    const int G = sMisc[0];

    /* loads of query tile `it` (head, tile) into buffer it & 1: Q, dO rows permuted
     * (row c holds query perm_row(c)) by cp.async, Q^T and dO^T by TMA, row constants */
    auto load_tile = [&](int it) {
        const int b = it & 1, h = hk * p.group + it / per_head, q0 = (mt0 + it % per_head) * 128;
        uint8_t *buf = smem + SM::kBuf + b * SM::kBufBytes;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int ch = tid + i * 256, c = ch >> 3, q = ch & 7;
            const int tok = ds + q0 + perm_row(c);
            const bool ok = tok < p.T;
            const size_t off = ((size_t)(ok ? tok : 0) * p.Hq + h) * kD + q * 16;
            cp_async16(smem_u32(buf + SM::kQ + sw128(c, q)), p.q8 + off, ok);
            cp_async16(smem_u32(buf + SM::kDO + sw128(c, q)), p.do8 + off, ok);
        }
        if (tid == 0) {
            const uint32_t bar = smem_u32(&sBar[b]);
            mbar_expect_tx(bar, 128 * 128);
            tma_load_3d(smem_u32(buf + SM::kQt), &tm_qt, tpos + q0, 0, h, bar);
        }
        { /* row constants of query q0 + r, natural order (SoA: field w at w * 128 + r): the
             dO preprocessing's record by cp.async; the causal / document limit (field 6)
             here; rows past the document their neutral values (no P, no dS, eQ excluded from
             the dK block exponent) */
            float *row = (float *)(smem + SM::kRow + b * SM::kRowBytes);
            const int r = tid & 127, i = q0 + r;
            const bool ok = i < len;
            const float *src = p.rows + (size_t)h * 8 * p.T + ds + i;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int w = (tid >> 7) + 2 * k; /* warpgroup 0: fields 0 2 4 6, 1: 1 3 5 7 */
                if (w == 6) ((int *)row)[768 + r] = ok ? (p.causal ? i : len - 1) : -1;
                else if (ok) cp_async4(smem_u32(row + w * 128 + r), src + (size_t)w * p.T, true);
                else row[w * 128 + r] = w == 1 ? 256.f : w == 7 ? __int_as_float(NOEXP) : 0.f;
            }
        }
    };

    float dkacc[64], dvacc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) dkacc[i] = dvacc[i] = 0.f;

    const uint32_t aK = smem_u32(smem + SM::kK), aV = smem_u32(smem + SM::kV), aKt = smem_u32(smem + SM::kKt);
    load_tile(0);
    cp_async_commit();

    for (int it = 0; it < nit; it++) {
        const int b = it & 1, h = hk * p.group + it / per_head, q0 = (mt0 + it % per_head) * 128;
        asm volatile("cp.async.wait_group 0;\n" ::: "memory"); /* tile it (and K, V) landed: nothing newer in flight */
        if (!DET && !DBG && wtid == 0) bulk_wait_read_all(); /* dQ staging read before its regions are reloaded */
        fence_proxy_async();
        /* every thread's copies of tile it are visible, and every thread is done with tile
         * it-1, whose buffer ((it+1) & 1) now takes tile it+1 (a whole tile of lead). The
         * vote: every row of the tile has its direct exponential factor (field 1, staged by
         * warpgroup 1), so P takes the direct form (sm90_exp2.cuh) for the whole tile. */
        const bool p_direct = __syncthreads_and(
            wg == 0 || ((const float *)(smem + SM::kRow + b * SM::kRowBytes))[128 + wtid] != 0.f);
        { /* dV's B operand for this tile: the dO codes as exact F16 values (written by
             bwd_pre_do), rows in the staged (permuted) order, MN-major, two 64-dim panels of
             [128 rows][128 B], 128-byte swizzle; completion on sBar[3]. The buffer is free:
             the previous tile's dV MMAs and dQ staging reads finished before the barrier. */
            const uint32_t dh = smem_u32(smem + SM::kDOh);
            const int h = hk * p.group + it / per_head, q0 = (mt0 + it % per_head) * 128;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int ch = tid + i * 256, r = ch >> 4, cc = ch & 15; /* dims 8cc..8cc+7 */
                const int tok = ds + q0 + perm_row(r);
                const bool ok = tok < p.T;
                cp_async16(dh + (cc >> 3) * (128 * 128) + sw128(r, cc & 7),
                           p.dof16 + ((size_t)(ok ? tok : 0) * p.Hq + h) * kD + cc * 8, ok);
            }
            cp_async_mbar_arrive_noinc(smem_u32(&sBar[3]));
        }
        if (it + 1 < nit) {
            load_tile(it + 1);
            cp_async_commit();
        }
        mbar_wait(smem_u32(&sBar[b]), (uint32_t)((it >> 1) & 1));
        if (it == 0) mbar_wait(smem_u32(&sBar[2]), 0u);

        uint8_t *buf = smem + SM::kBuf + b * SM::kBufBytes;
        const uint32_t aQ = smem_u32(buf + SM::kQ), aDO = smem_u32(buf + SM::kDO);
        const uint32_t aQt = smem_u32(buf + SM::kQt), aDOh = smem_u32(smem + SM::kDOh);
        const float *row = (const float *)(smem + SM::kRow + b * SM::kRowBytes);
        const float *sRc = row, *sRsc = row + 128, *sRnr = row + 256, *sRdl = row + 384, *sRdof = row + 512;
        const int *sRqlim = (const int *)row + 768, *sReq = (const int *)row + 896;
        /* dV's operand factor 2^(eDO - G + 14) per query (<= 2^14 1.07 in F16), one copy per
         * warpgroup, so that only a warpgroup barrier orders it (the record keeps eDO) */
        float *sPvfW = (float *)(smem + SM::kPvf) + wg * 128;
        sPvfW[wtid] = q0 + wtid < len ? pow2z(__float_as_int(row[640 + wtid]) - G + 14) : 0.f;
        bar_named(1 + wg, 128);
        const float *sRpvf = sPvfW;

        for (int h2 = 0; h2 < 2; h2++) {
            const int qsub = q0 + h2 * 64;
            if (qsub >= len) break;
            float sacc[32], dpacc[32];
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < 4; k++)
                bwd_wgmma_e4m3_ss_n64(sacc, desc_sw128(aK + wg * 8192 + k * 32), desc_sw128(aQ + h2 * 8192 + k * 32), k);
#pragma unroll
            for (int k = 0; k < 4; k++)
                bwd_wgmma_e4m3_ss_n64(dpacc, desc_sw128(aV + wg * 8192 + k * 32), desc_sw128(aDO + h2 * 8192 + k * 32), k);
            wgmma_commit();
            if (h2 == 0) {
                mbar_wait(smem_u32(&sBar[3]), (uint32_t)(it & 1));
                fence_proxy_async();
            }
            wgmma_wait<0>();
            reg_fence(sacc);
            reg_fence(dpacc);

            /* ---- P (forward's codes, final frame), dS (kept in dpacc), dV operand.
             * Column pair (j, tq) holds queries qn, qn + 1 (qn = perm_row(8j + 2tq), even). */
            uint32_t pa[16]; /* F16 A fragments of P^T 2^(eDO - G + 14), 4 k-steps of 16 queries */
            auto p_codes = [&](auto direct_tag) {
            constexpr bool DIRECT = decltype(direct_tag)::value;
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int ql = h2 * 64 + acc_query(j, tq4);
                const float2 cr = *(const float2 *)(sRc + ql), sc = *(const float2 *)(sRsc + ql);
                const float2 nr = *(const float2 *)(sRnr + ql), dl = *(const float2 *)(sRdl + ql);
                const float2 dof = *(const float2 *)(sRdof + ql), pvf = *(const float2 *)(sRpvf + ql);
                const int2 qlim = *(const int2 *)(sRqlim + ql);
                float2 mfr = make_float2(0.f, 0.f); /* the final frames (split path only) */
                if (!DIRECT) {
                    const size_t r0 = (size_t)(ds + q0 + ql) * p.Hq + h;
                    if (q0 + ql < len) mfr.x = p.row_frame[r0];
                    if (q0 + ql + 1 < len) mfr.y = p.row_frame[r0 + p.Hq];
                }
                float pv[4];
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    float e256[2];
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        /* E(t, m) 2^8 of numerics.md 3.3 as the forward evaluates it (sm90_exp2.cuh):
                         * ex2(t) 2^(8 - m), or the split where a row's frame needs it; code 0 for
                         * pairs the causal / document limit excludes (then P = 0 and dS = +-0). */
                        const float t = (sacc[4 * j + 2 * hh + e] * kf[hh]) * (e ? cr.y : cr.x);
                        const float E = DIRECT ? exp_frame_direct(t, e ? sc.y : sc.x)
                                               : exp_frame_split_k63(t, (e ? mfr.y : mfr.x) - 8.f);
                        e256[e] = jkv[hh] <= (e ? qlim.y : qlim.x) ? E : 0.f;
                    }
                    const uint32_t pbc = flamia_cvt_e4m3x2(e256[0], e256[1]);
                    const float2 pb = e4m3x2_to_f2(pbc);
                    if (DBG) { /* row = key jkv[hh], column e = query q0 + ql + e */
#pragma unroll
                        for (int e = 0; e < 2; e++)
                            if (jkv[hh] <= (e ? qlim.y : qlim.x))
                                dbg_codes[((size_t)h * p.T + ds + q0 + ql + e) * p.T + ds + jkv[hh]] =
                                    (uint8_t)(pbc >> (8 * e));
                    }
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int idx = 4 * j + 2 * hh + e;
                        const float P = (e ? pb.y : pb.x) * (e ? nr.y : nr.x);
                        const float dP = (dpacc[idx] * vf[hh]) * (e ? dof.y : dof.x);
                        dpacc[idx] = P * (dP - (e ? dl.y : dl.x));
                        pv[2 * hh + e] = P * (e ? pvf.y : pvf.x);
                    }
                }
                /* k-step kk = j >> 1 (columns 16kk..16kk+15 = rows c of the F16 dO tile):
                 * regs (row g, cols 2tq..) (row g+8, ..) (row g, 8+2tq..) (row g+8, ..) */
                pa[4 * (j >> 1) + 2 * (j & 1)] = f16x2(pv[0], pv[1]);
                pa[4 * (j >> 1) + 2 * (j & 1) + 1] = f16x2(pv[2], pv[3]);
            }
            };
            if (p_direct)
                p_codes(std::true_type{});
            else
                p_codes(std::false_type{});
            /* ---- dS group maxima: per (query, 32-key block). Each warp reduces its 16 key
             * rows for its 16 query columns c = 2j + e by a butterfly over the 3 row bits of
             * the lane (xor 16, 8, 4: each step halves the columns a lane keeps), so lane
             * (g, tq) ends with columns 2g, 2g + 1 = queries qn(j = g) + {0, 1}; it stores them
             * in its warp's slot, and the two warps of a 32-key block meet in the reader. */
            {
                float v[16];
#pragma unroll
                for (int c = 0; c < 16; c++) {
                    const int j = c >> 1, e = c & 1;
                    v[c] = fmaxf(fabsf(dpacc[4 * j + e]), fabsf(dpacc[4 * j + 2 + e]));
                }
                butterfly_max_step<8>(v, lane, 16);
                butterfly_max_step<4>(v, lane, 8);
                butterfly_max_step<2>(v, lane, 4);
                const int qn = acc_query(g, tq4);
                *reinterpret_cast<float2 *>(sAmax + (wg * 4 + wq) * 64 + qn) = make_float2(v[0], v[1]);
            }
            bar_named(1 + wg, 128);
            { /* exponent of group (block kb, query ql): thread wtid of warpgroup wg; a warp is
                 one 32-query block of one key block. Everything here is the warpgroup's own key
                 blocks: only named (warpgroup) barriers until dQ. */
                const int kb = wg * 2 + (wtid >> 6), ql = wtid & 63;
                const float *slot = sAmax + (wg * 4 + 2 * (wtid >> 6)) * 64 + ql; /* its two warps */
                float a = fmaxf(slot[0], slot[64]);
                if (KIND == 1)
#pragma unroll
                    for (int o = 16; o; o >>= 1) a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, o));
                const int e = flamia_fmt_block_exponent(a, 0);
                const bool valid = a > 0.f;
                sEds[kb * 64 + ql] = valid ? e : NOEXP;
                sInv[kb * 64 + ql] = valid ? flamia_pow2f(-e) : 0.f;
                /* dK partial exponent of (key block kb, query block = this warp): max eDS + eQ */
                int f = valid ? e + sReq[h2 * 64 + ql] : NOEXP;
#pragma unroll
                for (int o = 16; o; o >>= 1) f = max(f, __shfl_xor_sync(0xffffffffu, f, o));
                if (lane == 0) sMk[kb * 2 + (ql >> 5)] = f;
                /* dQ partial factor of (query ql, block kb): 2^(eDS + EKmax) scale with EKmax the
                 * max eK over the row's valid keys of the block (a prefix max); the exact recipe's
                 * operand fold 2^-EKmax. sDqf per sub-step parity: the other warpgroup may still
                 * read the previous sub-step's while this one writes. */
                const int i = qsub + ql;
                const int last = (p.causal ? min(i, len - 1) : len - 1) - k0; /* last valid key, tile-local */
                float fq = 0.f, iek = 0.f;
                if (valid && last >= kb * 32) {
                    const int ekm = sEKp[min(last, kb * 32 + 31)];
                    fq = pow2z(e + ekm) * p.scale;
                    iek = pow2b(-ekm);
                }
                sDqf[(h2 * 4 + kb) * 64 + ql] = fq;
                sIek[kb * 64 + ql] = iek;
            }
            bar_named(1 + wg, 128); /* sEds, sInv, sIek, sMk of this warpgroup's key blocks */

            /* ---- dS codes: dK operand (registers), dQ operand (shared memory, [query][key]) */
            uint8_t *sDS = smem + SM::kDS + h2 * 8192;
            uint32_t pk[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int qn = acc_query(j, tq4); /* even */
                const float2 inv = *(const float2 *)(sInv + kbl * 64 + qn);
                const float2 iek = *(const float2 *)(sIek + kbl * 64 + qn);
                const int2 eds = *(const int2 *)(sEds + kbl * 64 + qn);
                const int2 eq = *(const int2 *)(sReq + h2 * 64 + qn);
                const int M = sMk[kbl * 2 + (j >> 2)]; /* this k-step's query block */
                uint32_t kc[2]; /* dK operand codes, rows hh */
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const int idx = 4 * j + 2 * hh;
                    const uint32_t code = flamia_cvt_e4m3x2(dpacc[idx] * inv.x, dpacc[idx + 1] * inv.y);
                    uint32_t qc = code; /* dQ operand */
                    kc[hh] = code;
                    if (KIND == 2) {
                        /* mxfp8-exact: dK operand dS^ 2^eQ relative to the block's 2^M, dQ operand
                         * dS^ 2^(eK_j - EKmax) (a fold within the block). mxfp8 skips both: with one
                         * exponent per 32x32 dS block and per 32-token Q / K block both factors are
                         * exactly 1, so both operands are the dS code itself. */
                        const float2 dsq = e4m3x2_to_f2(code);
                        const float sck0 = pow2b(eds.x + eq.x - M), sck1 = pow2b(eds.y + eq.y - M);
                        kc[hh] = flamia_cvt_e4m3x2(dsq.x * sck0, dsq.y * sck1);
                        qc = flamia_cvt_e4m3x2((dsq.x * ekf[hh]) * iek.x, (dsq.y * ekf[hh]) * iek.y);
                    }
                    const int r = rloc[hh];
                    const int col = (r & 15);
                    sDS[qn * 128 + (((r >> 4) ^ (qn & 7)) << 4) + col] = (uint8_t)qc;
                    sDS[(qn + 1) * 128 + (((r >> 4) ^ ((qn + 1) & 7)) << 4) + col] = (uint8_t)(qc >> 8);
                }
                const int bb = j >> 2, jj = j & 3;
                const int base = 4 * bb + ((jj >> 1) << 1);
                if ((jj & 1) == 0) {
                    pk[base] = kc[0];
                    pk[base + 1] = kc[1];
                } else {
                    pk[base] |= kc[0] << 16;
                    pk[base + 1] |= kc[1] << 16;
                }
            }
            fence_proxy_async(); /* sDS -> the async proxy (dQ's wgmma), before the barrier below */

            /* ---- dV += P^T dO; dK += sum over query blocks of 2^M (dS^T Q)_block;
             * dQ = sum over key blocks of 2^(eDS + EKmax) scale (dS K)_block, one k=32 wgmma
             * per block into a partial accumulator (numerics.md 4.6, exact option) */
            reg_fence(pa);
            reg_fence(pk);
            reg_fence(dkacc);
            reg_fence(dvacc);
            wgmma_fence();
            /* dK's first query-block partial is issued before dV's four F16 MMAs so that its
             * scaling runs under them (dV's was the longest wgmma wait); the second one after.
             * Not in the deterministic kernels: there the order made ptxas spill 164 bytes. */
            constexpr bool kDkFirst = !DET;
            float tk0[64];
            if (kDkFirst) {
                const uint32_t a[4] = {pk[0], pk[1], pk[2], pk[3]};
                bwd_wgmma_e4m3_rs_n128(tk0, a, desc_sw128(aQt + h2 * 64), 0);
                wgmma_commit();
            }
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
                bwd_wgmma_f16_rs_n128_tb(dvacc, a, desc_sw128(aDOh + (h2 * 4 + kk) * 2048, 128 * 128, 1024), 1);
            }
            wgmma_commit();
            if (kDkFirst) {
                wgmma_wait<1>(); /* dK's first partial landed; dV may still run */
                reg_fence(tk0);
                const float f = pow2z(sMk[kbl * 2]);
#pragma unroll
                for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk0[x], f, dkacc[x]);
            }
#pragma unroll
            for (int k = kDkFirst ? 1 : 0; k < 2; k++) {
                float tk[64];
                const uint32_t a[4] = {pk[4 * k], pk[4 * k + 1], pk[4 * k + 2], pk[4 * k + 3]};
                wgmma_fence();
                bwd_wgmma_e4m3_rs_n128(tk, a, desc_sw128(aQt + h2 * 64 + k * 32), 0);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(tk);
                const float f = pow2z(sMk[kbl * 2 + k]);
#pragma unroll
                for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk[x], f, dkacc[x]);
            }
            reg_fence(dvacc);
            /* dQ's operand holds both warpgroups' dS: the one CTA barrier of the sub-step, after
             * dV and dK (their operands are this warpgroup's own), so that the other warpgroup
             * has usually finished its stores by the time this one arrives */
            __syncthreads();
            const uint32_t aDS = smem_u32(sDS);
            float dqacc[32];
            float fq[2] = {0.f, 0.f};
#pragma unroll
            for (int kb = 0; kb < 4; kb++) {
                float tq32[32];
                wgmma_fence();
                bwd_wgmma_e4m3_ss_n64(tq32, desc_sw128(aDS + kb * 32), desc_sw128(aKt + wg * 8192 + kb * 32), 0);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(tq32);
#pragma unroll
                for (int hh = 0; hh < 2; hh++) fq[hh] = sDqf[(h2 * 4 + kb) * 64 + wq * 16 + g + 8 * hh];
#pragma unroll
                for (int x = 0; x < 32; x++) {
                    const float f = fq[(x >> 1) & 1];
                    dqacc[x] = kb == 0 ? tq32[x] * f : fmaf(tq32[x], f, dqacc[x]);
                }
            }

            /* ---- dQ partial: rows = queries (natural order), cols = dims 64 wg + 8j + 2tq */
            if (!DET && !DBG) {
                /* v7: staged in shared memory as two [64 queries][32 dims] FP32 boxes (128-byte
                 * swizzle) and added by two TMA reduce-adds (one thread), instead of 16 FP32x2
                 * REDs per thread. The staging reuses what sub-step h2 has finished with in both
                 * warpgroups (barrier C above): rows 64 h2.. of the F16 dO panel wg (dims 0-31)
                 * and of the Q (wg 0) / dO (wg 1) row tile (dims 32-63). Rows past the document
                 * add exact zeros (their dS codes are 0) to the next document's rows. */
                uint8_t *stA = smem + SM::kDOh + wg * (128 * 128) + h2 * 8192;
                uint8_t *stB = buf + (wg ? SM::kDO : SM::kQ) + h2 * 8192;
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const int row = wq * 16 + g + 8 * hh;
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const int c = 8 * (j & 3) + 2 * tq; /* column inside the 32-dim box */
                        uint8_t *dst = (j < 4 ? stA : stB) + row * 128 + ((((c >> 2) ^ (row & 7))) << 4) + (c & 3) * 4;
                        *reinterpret_cast<float2 *>(dst) = make_float2(dqacc[4 * j + 2 * hh], dqacc[4 * j + 2 * hh + 1]);
                    }
                }
                fence_proxy_async();
                bar_named(1 + wg, 128);
                if (wtid == 0) {
                    tma_reduce_add_3d(&tm_dq, smem_u32(stA), 64 * wg, h, ds + qsub);
                    tma_reduce_add_3d(&tm_dq, smem_u32(stB), 64 * wg + 32, h, ds + qsub);
                    bulk_commit_group();
                }
                continue;
            }
            int *turn = DET ? p.dq_turn + (size_t)(ds + qsub) * p.Hq + h : nullptr;
            if (DET) dq_turn_wait(turn, n);
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const int ql = wq * 16 + g + 8 * hh;
                const int i = qsub + ql;
                if (i >= len) continue;
                float *dst = p.dq_acc + ((size_t)(ds + i) * p.Hq + h) * kD + wg * 64 + 2 * tq;
#pragma unroll
                for (int j = 0; j < 8; j++)
                    atomicAdd(reinterpret_cast<float2 *>(dst + 8 * j),
                              make_float2(dqacc[4 * j + 2 * hh], dqacc[4 * j + 2 * hh + 1]));
            }
            if (DET) dq_turn_pass(turn, n);
        }
    }

    /* ---- epilogue: dK = scale acc (rotated back when hadamard), dV = 2^(G-14) acc (BF16).
     * Accumulator column c = 8 jn + 2 tq + e: Hadamard stage 1 is e (in the thread),
     * stages 2, 4 are tq (lanes xor 1, 2), stages 8..64 are jn (in the thread). */
#pragma unroll
    for (int x = 0; x < 64; x++) dkacc[x] *= p.scale;
    if (p.hadamard) {
#pragma unroll
        for (int jn = 0; jn < 16; jn++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const float a = dkacc[4 * jn + 2 * hh], b = dkacc[4 * jn + 2 * hh + 1];
                dkacc[4 * jn + 2 * hh] = a + b;
                dkacc[4 * jn + 2 * hh + 1] = a - b;
            }
#pragma unroll
        for (int st = 0; st < 2; st++) {
            const int m = 1 << st;
            const bool upper = (tq & m) != 0;
#pragma unroll
            for (int x = 0; x < 64; x++) {
                const float o = __shfl_xor_sync(0xffffffffu, dkacc[x], m);
                dkacc[x] = upper ? o - dkacc[x] : dkacc[x] + o;
            }
        }
#pragma unroll
        for (int st = 0; st < 4; st++) { /* jn stride ls: dims 8 ls */
            const int ls = 1 << st;
#pragma unroll
            for (int jn = 0; jn < 16; jn++)
                if ((jn & ls) == 0)
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        const float a = dkacc[4 * jn + q], b = dkacc[4 * (jn + ls) + q];
                        dkacc[4 * jn + q] = a + b;
                        dkacc[4 * (jn + ls) + q] = a - b;
                    }
        }
#pragma unroll
        for (int x = 0; x < 64; x++) dkacc[x] *= p.had_norm;
    }
    /* dV's factor 2^(G - 14) is the same for the whole CTA: flamia_ldexpf's multiplications
     * done once for every element (the same products, so the same bytes) rather than its
     * range checks and branches per element (SASS: ~4,300 instructions of unrolled ldexp,
     * the epilogue 31 % of the stall samples at 512x128, much of it instruction-cache misses) */
    {
        int e = G - 14;
        while (e > 127) {
#pragma unroll
            for (int x = 0; x < 64; x++) dvacc[x] *= flamia_pow2f(127);
            e -= 127;
        }
        while (e < -126) {
#pragma unroll
            for (int x = 0; x < 64; x++) dvacc[x] *= flamia_pow2f(-126);
            e += 126;
        }
        const float f = flamia_pow2f(e);
#pragma unroll
        for (int x = 0; x < 64; x++) dvacc[x] *= f;
    }
    /* dK and dV through shared memory (v15 in v28; dev/thirteenth_v28.sh: 512x128 -8 %,
     * 64x1024 -7 %, 16x4096 -3 %, rand65536:5 -10 % with the dV factor above): 8
     * stmatrix.x4 into a 16-byte-chunk swizzled 64 x 128 BF16 tile per warpgroup, then
     * 16-byte row stores (whole 256-byte rows per 16 threads) instead of 32 scattered 4-byte
     * stores per thread and matrix. The K and V tiles take the staging once both
     * warpgroups' last wgmmas have read them (the CTA barrier); the dQ staging (F16 dO
     * panel, Q / dO row tiles) is elsewhere. */
    if (!DBG) {
        __syncthreads();
        uint8_t *st = smem + SM::kK + wg * (64 * kD * 2);
        const int mk = lane >> 3, mrow = wq * 16 + (mk & 1) * 8 + (lane & 7);
#pragma unroll
        for (int mat = 0; mat < 2; mat++) {
            if (mat) bar_named(1 + wg, 128); /* this warpgroup's dK rows are out: the tile takes dV */
#pragma unroll
            for (int jn = 0; jn < 16; jn += 2) {
                uint32_t w[4];
#pragma unroll
                for (int q = 0; q < 4; q++) { /* matrices (jn, g), (jn, g + 8), (jn + 1, g), (jn + 1, g + 8) */
                    const int idx = 4 * (jn + (q >> 1)) + 2 * (q & 1);
                    w[q] = mat ? bf16x2(dvacc[idx], dvacc[idx + 1]) : bf16x2(dkacc[idx], dkacc[idx + 1]);
                }
                const int chunk = jn + (mk >> 1);
                stmatrix_x4(smem_u32(st + mrow * 256 + ((chunk ^ (mrow & 7)) << 4)), w[0], w[1], w[2], w[3]);
            }
            bar_named(1 + wg, 128);
            uint16_t *dst = mat ? p.dv : p.dk;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int id = wtid + 128 * i, r = id >> 4, c = id & 15, j = k0 + wg * 64 + r;
                if (j < len)
                    *(uint4 *)(dst + ((size_t)(ds + j) * p.Hkv + hk) * kD + c * 8) =
                        *(const uint4 *)(st + r * 256 + ((c ^ (r & 7)) << 4));
            }
        }
    }
    /* the dQ reduce-adds complete before the CTA exits (their shared-memory staging stays
     * valid); waited last, so the dK / dV stores go out meanwhile */
    if (!DET && !DBG && wtid == 0) bulk_wait_all();
}

template <int KIND, bool DET>
__global__ void __launch_bounds__(256, 1)
    bwd_main_fp8(const __grid_constant__ CUtensorMap tm_qt, const __grid_constant__ CUtensorMap tm_kt,
                 const __grid_constant__ CUtensorMap tm_dq, const MainParams p) {
    bwd_main_body<KIND, false, DET>(tm_qt, tm_kt, tm_dq, p, nullptr);
}
template <int KIND>
__global__ void __launch_bounds__(256, 1)
    bwd_main_fp8_dbg(const __grid_constant__ CUtensorMap tm_qt, const __grid_constant__ CUtensorMap tm_kt,
                     const MainParams p, uint8_t *dbg_codes) {
    bwd_main_body<KIND, true, false>(tm_qt, tm_kt, tm_qt /* unused: DBG adds dQ by REDs */, p, dbg_codes);
}

/* ================================================================ host */

static bool make_dq_map(CUtensorMap *map, float *dq_acc, int T, int Hq) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return false;
    const cuuint64_t dims[3] = {(cuuint64_t)kD, (cuuint64_t)Hq, (cuuint64_t)T};
    const cuuint64_t strides[2] = {(cuuint64_t)kD * 4, (cuuint64_t)Hq * kD * 4};
    const cuuint32_t box[3] = {32, 1, 64};
    const cuuint32_t estr[3] = {1, 1, 1};
    return enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, dq_acc, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int KIND, bool DET> static cudaError_t launch_simt(const MainParams &mp, int num_docs, int max_seqlen,
                                                             cudaStream_t stream) {
    const int bytes = (4 * 32 * (kD + 1) + 2 * 32 * 33 + 4 * 32) * 4;
    static bool attr = false;
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(bwd_simt<KIND, DET>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess) return e;
        attr = true;
    }
    dim3 grid(num_docs, mp.Hkv, (max_seqlen + 31) / 32);
    bwd_simt<KIND, DET><<<grid, 256, bytes, stream>>>(mp);
    return cudaGetLastError();
}

/* One CTA per (128-key tile, document, kv head) with the FP8 main kernel's shared memory;
 * `attr` remembers, per kernel instantiation, that the size limit was raised. */
template <typename... KernelArgs, typename... Args>
static cudaError_t launch_fp8_grid(void (*kernel)(KernelArgs...), bool &attr, const MainParams &mp,
                                   cudaStream_t stream, Args... args) {
    const int bytes = SmemF::kBytes;
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess) return e;
        attr = true;
    }
    const unsigned grid = (unsigned)tile_slots(mp.T, mp.num_docs) * (unsigned)mp.Hkv;
    kernel<<<grid, 256, bytes, stream>>>(args...);
    return cudaGetLastError();
}
template <int KIND, bool DET>
static cudaError_t launch_fp8(const MainParams &mp, const CUtensorMap &mq, const CUtensorMap &mk,
                              const CUtensorMap &mdq, cudaStream_t stream) {
    static bool attr = false;
    return launch_fp8_grid(bwd_main_fp8<KIND, DET>, attr, mp, stream, mq, mk, mdq, mp);
}
template <int KIND> static cudaError_t launch_fp8_dbg(const MainParams &mp, const CUtensorMap &mq, const CUtensorMap &mk,
                                                      uint8_t *codes, cudaStream_t stream) {
    static bool attr = false;
    return launch_fp8_grid(bwd_main_fp8_dbg<KIND>, attr, mp, stream, mq, mk, mp, codes);
}

} // namespace flamia_bwd

/* Which main kernel the FP8 kinds run.
 *   1 (default) the FP8 wgmma kernel bwd_main_fp8 (v6). Measured on the H200
 *     (2026-11-29, docs/perf-notes.md "Backward kernel"): 217 / 206 TFLOP/s causal at
 *     16x4096 / 4x4096; vs flamia_ref_backward relL2 1.0-1.4e-2 (cosine >= 0.99989), ten
 *     times below the recipe's own error vs FP64 (1.1-1.4e-1 on the same inputs): the
 *     difference is Hopper's FP8 wgmma accumulation moving P / dS codes across E4M3
 *     rounding boundaries (docs/numerics.md 8), not a defect of the kernel.
 *   0 the plain FP32 kernel bwd_simt: matches the reference to FP32 summation order
 *     (relL2 ~1e-5) on every layout, ~5 TFLOP/s; the debugging oracle on the GPU.
 * BF16 kind: always bwd_simt (the control path; no BF16 wgmma backward yet).
 * Set by the dev harness (BWD_VARIANT) or FLAMIA_SM90_BWD=plain|fp8 in the environment. */
int flamia_bwd_debug_variant = -1;

static int bwd_variant() {
    if (flamia_bwd_debug_variant < 0) {
        const char *e = getenv("FLAMIA_SM90_BWD");
        flamia_bwd_debug_variant = (e && !strcmp(e, "plain")) ? 0 : 1;
    }
    return flamia_bwd_debug_variant;
}

/* The backward's launches; dbg_codes != NULL: the debug run (FP8 kinds, always the FP8
 * main kernel, its debug instantiation; no dq/dk/dv written, no dq_out). */
static cudaError_t bwd_run(const struct flamia_sm90_problem *P, void *workspace, const uint16_t *o, const float *lse,
                           const uint16_t *dout, uint16_t *dq, uint16_t *dk, uint16_t *dv, uint8_t *dbg_codes,
                           cudaStream_t stream) {
    using namespace flamia_bwd;
    const flamia_sm90_layout L = flamia_sm90_layout_of(P);
    uint8_t *ws = (uint8_t *)workspace;
    const int T = P->total_tokens;
    const bool fp8 = P->kind != FLAMIA_SM90_BF16;
    cudaError_t e;

    /* 1. dO codes / exponents / D */
    PreParams pp;
    pp.dout = dout;
    pp.o = o;
    pp.do_codes = ws + L.do_codes;
    pp.do_exp = (int8_t *)(ws + L.do_exp);
    pp.do_bf16 = (uint16_t *)(ws + L.do_bf16);
    pp.delta = (float *)(ws + L.delta);
    pp.err = (int *)(ws + L.err_flag);
    pp.cu = P->cu_seqlens;
    pp.T = T;
    pp.Hq = P->heads_q;
    pp.num_docs = P->num_docs;
    pp.rows = (float *)(ws + L.bwd_rows);
    pp.row_frame = (const float *)(ws + L.row_frame);
    pp.lse = lse;
    pp.qe = (const int8_t *)(ws + L.q_exp);
    pp.c = P->softmax_scale * 1.44269504088896341f;
    float *dq_acc = (float *)(ws + L.dq_accum);
    int *dq_turn = P->deterministic && !dbg_codes ? (int *)(ws + L.dq_turn) : nullptr;
    pp.dq_acc = dq_acc;
    pp.dq_turn = dq_turn;
    const dim3 pgrid((T + 31) / 32, P->heads_q);
    if (P->kind == FLAMIA_SM90_MXFP8) bwd_pre_do<32><<<pgrid, 256, 0, stream>>>(pp);
    else if (P->kind == FLAMIA_SM90_MXFP8_EXACT) bwd_pre_do<1><<<pgrid, 256, 0, stream>>>(pp);
    else bwd_pre_do<0><<<pgrid, 256, 0, stream>>>(pp);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;

    /* 2. transposed codes */
    if (fp8) {
        TrParams tp;
        tp.src[0] = ws + L.q_codes;
        tp.src[1] = ws + L.k_codes;
        tp.dst[0] = ws + L.qt_codes;
        tp.dst[1] = ws + L.kt_codes;
        tp.heads[0] = P->heads_q;
        tp.heads[1] = P->heads_kv;
        tp.cu = P->cu_seqlens;
        tp.num_docs = P->num_docs;
        tp.t_vpad = L.t_vpad;
        /* Q^T and K^T (TMA sources of the FP8 kernel); dO needs no transposed copy: dV takes
         * the dO codes as F16 rows (do_bf16, MN-major) */
        bwd_transpose<<<dim3((L.t_vpad + 63) / 64, (P->heads_q + P->heads_kv + kTrSlots - 1) / kTrSlots), 256, 0, stream>>>(tp);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }

    /* 3. main kernel */
    MainParams mp;
    mp.q8 = ws + L.q_codes;
    mp.k8 = ws + L.k_codes;
    mp.v8 = ws + L.v_codes;
    mp.do8 = ws + L.do_codes;
    mp.qe = (const int8_t *)(ws + L.q_exp);
    mp.ke = (const int8_t *)(ws + L.k_exp);
    mp.ve = (const int8_t *)(ws + L.v_exp);
    mp.doe = (const int8_t *)(ws + L.do_exp);
    mp.qb = (const uint16_t *)(ws + L.q_bf16);
    mp.kb = (const uint16_t *)(ws + L.k_bf16);
    mp.vb = (const uint16_t *)(ws + L.v_bf16);
    mp.dob = (const uint16_t *)(ws + L.do_bf16);
    mp.row_frame = (const float *)(ws + L.row_frame);
    mp.lse = lse;
    mp.delta = (const float *)(ws + L.delta);
    mp.rows = (const float *)(ws + L.bwd_rows);
    mp.dof16 = (const uint16_t *)(ws + L.do_bf16);
    mp.dq_acc = dq_acc;
    mp.dq_turn = dq_turn;
    mp.dk = dk;
    mp.dv = dv;
    mp.cu = P->cu_seqlens;
    mp.T = T;
    mp.Hq = P->heads_q;
    mp.Hkv = P->heads_kv;
    mp.group = P->heads_q / P->heads_kv;
    mp.num_docs = P->num_docs;
    mp.causal = P->causal;
    mp.c = P->softmax_scale * 1.44269504088896341f;
    mp.scale = P->softmax_scale;
    mp.hadamard = P->hadamard;
    mp.had_norm = 1.0f / sqrtf((float)kD); /* as flamia_ref_hadamard */
    /* the FP8 main kernel (and its debug twin) read Q^T, K^T through these maps */
    const bool fp8_main = fp8 && (dbg_codes || bwd_variant() != 0);
    CUtensorMap mq, mk, mdq;
    memset(&mq, 0, sizeof mq);
    memset(&mk, 0, sizeof mk);
    memset(&mdq, 0, sizeof mdq);
    if (fp8_main && (!flamia_tma_transposed_codes(&mq, ws + L.qt_codes, L.t_vpad, kD, P->heads_q, 128) ||
                     !flamia_tma_transposed_codes(&mk, ws + L.kt_codes, L.t_vpad, kD, P->heads_kv, 128) ||
                     !make_dq_map(&mdq, dq_acc, T, P->heads_q)))
        return cudaErrorNotSupported;
    const int nd = P->num_docs, ms = P->max_seqlen;
    if (dbg_codes)
        return P->kind == FLAMIA_SM90_MXFP8 ? launch_fp8_dbg<1>(mp, mq, mk, dbg_codes, stream)
                                            : launch_fp8_dbg<2>(mp, mq, mk, dbg_codes, stream);
    const bool det = dq_turn != nullptr;
    if (!fp8) e = det ? launch_simt<0, true>(mp, nd, ms, stream) : launch_simt<0, false>(mp, nd, ms, stream);
    else if (!fp8_main)
        e = P->kind == FLAMIA_SM90_MXFP8
                ? (det ? launch_simt<1, true>(mp, nd, ms, stream) : launch_simt<1, false>(mp, nd, ms, stream))
                : (det ? launch_simt<2, true>(mp, nd, ms, stream) : launch_simt<2, false>(mp, nd, ms, stream));
    else
        e = P->kind == FLAMIA_SM90_MXFP8
                ? (det ? launch_fp8<1, true>(mp, mq, mk, mdq, stream) : launch_fp8<1, false>(mp, mq, mk, mdq, stream))
                : (det ? launch_fp8<2, true>(mp, mq, mk, mdq, stream) : launch_fp8<2, false>(mp, mq, mk, mdq, stream));
    if (e != cudaSuccess) return e;

    /* 4. dq -> BF16 */
    const size_t rows = (size_t)T * P->heads_q; /* one warp per row of 128 */
    const int blocks = (int)((rows + 7) / 8 < 132 * 32 ? (rows + 7) / 8 : 132 * 32);
    bwd_dq_out<<<blocks, 256, 0, stream>>>((const float4 *)dq_acc, (uint2 *)dq, rows, P->hadamard,
                                           1.0f / sqrtf((float)kD));
    return cudaGetLastError();
}

cudaError_t flamia_sm90_backward(const struct flamia_sm90_problem *P, void *workspace, const uint16_t *o,
                                 const float *lse, const uint16_t *dout, uint16_t *dq, uint16_t *dk, uint16_t *dv,
                                 cudaStream_t stream) {
    if (P->head_dim != flamia_bwd::kD) return cudaErrorNotSupported;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    return bwd_run(P, workspace, o, lse, dout, dq, dk, dv, nullptr, stream);
}

cudaError_t flamia_sm90_backward_debug(const struct flamia_sm90_problem *P, void *workspace, const uint16_t *o,
                                       const float *lse, const uint16_t *dout, uint8_t *codes, cudaStream_t stream) {
    if (P->head_dim != flamia_bwd::kD || P->kind == FLAMIA_SM90_BF16) return cudaErrorNotSupported;
    const size_t T = (size_t)P->total_tokens;
    cudaError_t e = cudaMemsetAsync(codes, 0xFF, (size_t)P->heads_q * T * T, stream);
    if (e != cudaSuccess) return e;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    return bwd_run(P, workspace, o, lse, dout, nullptr, nullptr, nullptr, codes, stream);
}
