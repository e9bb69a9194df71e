/*
 * backward_prep.cu - the backward's per-token passes around the main kernel (backward.cu
 * has the overview): 1. bwd_pre_do (dO codes, D, the FP8 main kernel's row constants;
 * zeroes dq_accum unless the training call's forward did), 2. bwd_transpose (Q^T, K^T
 * codes), 4. bwd_dq_out (dq_accum -> BF16 dq).
 */
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "backward_common.cuh"
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_launch.h"
#include "sm90_ptx.cuh"
#include "sm90_tiles.cuh"

namespace flamia_bwd {

/* ================================================================ 1. dO */
/* GRAN: 32 token blocks (mxfp8), 1 per token (exact), 0 BF16. A 1-D grid over (window of 32
 * tokens, head), head fastest (v118): the CTAs resident together read and write every head of
 * the same tokens, whole [Hq][D] rows of 4 KB (Hq = 16) instead of 256-byte pieces 4 KB apart. */
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
    const int h = (int)(blockIdx.x % (unsigned)p.Hq), T = p.T, w0 = (int)(blockIdx.x / (unsigned)p.Hq) * 32;
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
     * the whole region (537 MB at 16x4096); null: the training call's forward did it */
    if (p.dq_acc) {
        for (int ch = tid; ch < n * (kD / 4); ch += 256) {
            const int r = ch / (kD / 4), q = ch % (kD / 4);
            reinterpret_cast<float4 *>(p.dq_acc + ((size_t)(a + r) * p.Hq + h) * kD)[q] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
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
        if (any && lane == 0) atomicOr(p.err, FLAMIA_SM90_BAD_DOUT);
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
    for (int st = 0; st < 5; st++) hadamard_lane_stage(x, 1 << st, (lane >> st) & 1);
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

/* ================================================================ 3a. launch order */
/* The main kernel's CTAs differ in length: key tile t of a document of n tiles meets n - t
 * query tiles (causal; n without causal) of every query head of its GQA group. In the grid's
 * own order (document by document, sm90_tiles.cuh) a late document's longest CTAs start at
 * the end of the run and leave the other SMs idle: a list-scheduling model of 132 SMs puts
 * that tail at +25 % of gqa-16x1024's main kernel (4 kv heads: 512 CTAs of 4-32 tile pairs)
 * and at +0.4..+1.9 % for the MHA workloads (docs/perf-notes.md, "Backward kernel",
 * forty-seventh session). This writes the longest-first order: CTA p of the main kernel
 * takes order[p] = slot Hkv + kv head, items sorted by the query tiles they meet (w),
 * descending, ties in the grid's own order (document, tile, kv head). One thread per slot
 * finds its place by counting, over every document, the items with a larger w and the
 * earlier items with the same w: no sort, the same order on every call. Entries past the
 * last item stay -1 (the caller fills the table with -1 first): those CTAs exit. */
__device__ __forceinline__ int order_work(int n, int t, int causal) { return causal ? n - t : n; }

__global__ void __launch_bounds__(256) bwd_order(const int32_t *cu, int num_docs, int slots, int Hkv, int causal,
                                                 int *order) {
    __shared__ int s_n[256]; /* tiles of a chunk of documents */
    const int slot = blockIdx.x * 256 + threadIdx.x;
    int d = -1, t = 0, n = 0;
    if (slot < slots) {
        const flamia_sm90::DocTile dt = flamia_sm90::doc_tile_of_thread(cu, num_docs, slot);
        d = dt.doc, t = dt.tile, n = dt.ntiles;
    }
    const int w = order_work(n, t, causal);
    long long before = 0; /* items that come before this one */
    for (int c0 = 0; c0 < num_docs; c0 += 256) {
        __syncthreads();
        if (c0 + (int)threadIdx.x < num_docs) {
            const int e = c0 + threadIdx.x;
            s_n[threadIdx.x] = (__ldg(cu + e + 1) - __ldg(cu + e) + flamia_sm90::kTileTokens - 1) / flamia_sm90::kTileTokens;
        }
        __syncthreads();
        if (d < 0) continue;
        const int m = min(256, num_docs - c0);
        for (int i = 0; i < m; i++) {
            const int e = c0 + i, ne = s_n[i];
            if (causal) { /* tiles of e with work > w, then e's tile of work w if e is earlier */
                before += max(0, ne - w) + (e < d && ne >= w);
            } else { /* every tile of e has work ne; same work: earlier documents' tiles first */
                before += ne > w || (ne == w && e < d) ? ne : 0;
            }
        }
    }
    if (d < 0) return;
    if (!causal) before += t;
    for (int h = 0; h < Hkv; h++) order[before * Hkv + h] = slot * Hkv + h;
}

/* ================================================================ host */

cudaError_t launch_pre_do(enum flamia_sm90_kind kind, const PreParams &pp, cudaStream_t stream) {
    /* (T / 32) Hq blocks, far below 2^31: a workspace that fits holds dq_accum, T Hq 512 bytes */
    const unsigned pgrid = (unsigned)((pp.T + 31) / 32) * (unsigned)pp.Hq;
    if (kind == FLAMIA_SM90_MXFP8) bwd_pre_do<32><<<pgrid, 256, 0, stream>>>(pp);
    else if (kind == FLAMIA_SM90_MXFP8_EXACT) bwd_pre_do<1><<<pgrid, 256, 0, stream>>>(pp);
    else bwd_pre_do<0><<<pgrid, 256, 0, stream>>>(pp);
    return cudaGetLastError();
}

cudaError_t launch_transpose(const TrParams &tp, cudaStream_t stream) {
    bwd_transpose<<<dim3((tp.t_vpad + 63) / 64, (tp.heads[0] + tp.heads[1] + kTrSlots - 1) / kTrSlots), 256, 0, stream>>>(tp);
    return cudaGetLastError();
}

/* rows = tokens x query heads, one warp per row of 128 */
cudaError_t launch_dq_out(const float *dq_acc, uint16_t *dq, size_t rows, int hadamard, cudaStream_t stream) {
    const int blocks = (int)((rows + 7) / 8 < 132 * 32 ? (rows + 7) / 8 : 132 * 32);
    bwd_dq_out<<<blocks, 256, 0, stream>>>((const float4 *)dq_acc, (uint2 *)dq, rows, hadamard, 1.0f / sqrtf((float)kD));
    return cudaGetLastError();
}

cudaError_t launch_order(const int32_t *cu, int num_docs, int T, int Hkv, int causal, int *order,
                         cudaStream_t stream) {
    const int slots = flamia_sm90::tile_slots(T, num_docs);
    cudaError_t e = cudaMemsetAsync(order, 0xFF, (size_t)slots * Hkv * sizeof(int), stream);
    if (e != cudaSuccess) return e;
    bwd_order<<<(slots + 255) / 256, 256, 0, stream>>>(cu, num_docs, slots, Hkv, causal, order);
    return cudaGetLastError();
}

} // namespace flamia_bwd
