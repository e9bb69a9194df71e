/*
 * j_sketch.cu - a timing skeleton of a backward main kernel whose two consumer warpgroups split
 * the sub-step BY PRODUCT instead of by keys, so that they work on different sub-steps at once
 * (fiftieth session; prepared, not run: no device was lent). NOT a kernel of the library and its
 * results are meaningless: the loop with its register-carrying parts (mxfp8's unmasked direct
 * path: no masking, no split exponential, no exact recipe), tile loads, exchanges, barriers and
 * dQ reduce-adds, on bounded random codes, to read ptxas's counts (regs.sh) and to time the
 * structure on the H200 over 16x4096's causal grid (main() here), as i_sketch did for four
 * warpgroups (fortieth session: 7.62 ms, as long as today's main kernel).
 *
 * Why: today's warpgroups each own 64 keys and run the same chain in lockstep (S, dP -> P ->
 * dS -> block maxima -> codes -> dV, dK -> CTA barrier -> dQ -> staging -> adds), so their MMAs
 * wait at the same moments and their element-wise phases run at the same moments. Turns inside
 * that chain (v33) cost 16 %: the element-wise phase is latency-bound and needs both warpgroups
 * in it. Here both are always in an element-wise phase, but in different ones, and each one's
 * MMAs run under the other's element-wise work:
 *   CTA: one 64-key tile of one head (twice today's CTAs), query tiles of 128 in 2 sub-steps of
 *   64, double-buffered as today (Q, dO, Q^T and the row constants; the F16 dO panel per
 *   sub-step in two slots, so that s + 2's rows load while dV(s + 1) runs).
 *   warpgroup A (0): S^T = K Q^T -> P (codes to a thread-private slot) -> dV += P^T dO (F16, RS)
 *                    -> after B's dS: dQ = dS K (64 queries x 128 dims, one chain of two k=32)
 *                    -> dQ's staging and per-warp TMA reduce-adds. Holds dV (64 registers).
 *   warpgroup B (1): dP^T = V dO^T -> (A's P) -> dS -> block maxima -> codes (dK operand in
 *                    registers, dQ operand and dQ's row factors to shared memory)
 *                    -> dK += 2^M dS^T Q per 32-query block. Holds dK (64 registers).
 *   A runs one sub-step ahead (J_PREFETCH=1): it issues S(s+1) with dV(s) and builds P(s+1)
 *   while dQ(s) runs; B issues dP(s+1) between dK(s)'s two partials (J_BPREFETCH=1), so that
 *   its wait runs under the first partial's scaling. Hand-offs are named barriers, arrive on one side and sync on the other
 *   (P full / empty, dS full / empty, by sub-step parity); no CTA barrier in the loop.
 * Counted against today's kernel per 128x128 tile pair: the same products (dQ over 64 keys
 * twice instead of 128 once), the same instructions of element-wise work spread over the same
 * 8 warps, twice the K / V / K^T loads and twice the Q / dO / Q^T / panel loads per key (64-key
 * tiles: each query tile is read by twice the CTAs), and TWICE dQ's staging and reduce-adds (a
 * 64 x 128 partial per 64 keys instead of per 128; v109 priced twice the adds at +12 %), no
 * CTA barrier in the loop. So the structure can only win by overlap: each warpgroup's wgmma
 * waits under the other's element-wise work (the fortieth session's skeleton: the waits' chain
 * alone holds the lockstep kernel at 6.5 us a tile pair; ncu: issue slots 49 % busy).
 * Prediction: between -20 % and +15 % against i_sketch's 7.62 ms, the adds' +12 % included.
 * Registers (ptxas, regs.sh, nvcc 13.0): 203 with both prefetches, 205 with A's alone, 172
 * with neither; no spills.
 * The two warpgroups' registers are one allocation: A holds dV 64 + S 32 + P^T 16 + dQ 64,
 * B holds dK 64 + dP 32 + the dK partial 64 + its codes 8.
 *
 * The hand-off protocol (named barriers by parity, the buffers' mbarriers) is checked without a GPU
 * by protocol_model.py: every first sub-step 0..63, all four prefetch settings, no deadlock, no
 * warpgroup contributing twice to one barrier generation, nothing left open (and it reports the
 * four protocol bugs it was tried on, e.g. the dS-empty pre-arrival on the wrong parity).
 * Build the timing binary: sh dev/backward/j_sketch/regs.sh prints the counts; on the device
 * nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr
 * -Ikernels/include -Ikernels/formats -Ikernels/sm90 dev/backward/j_sketch/j_sketch.cu -lcuda
 * -o j_sketch (dev/sessions/fiftieth_j_sketch.sh builds the switches and i_sketch beside it, and runs
 * compute-sanitizer's synccheck and memcheck on one document).
 */
#ifndef J_PREFETCH /* 1: A issues S(s+1) with dV(s) and builds P(s+1) under dQ(s) */
#define J_PREFETCH 1
#endif
#ifndef J_BPREFETCH /* 1: B issues dP(s+1) between dK(s)'s two partials */
#define J_BPREFETCH 1
#endif
#ifndef J_NO_ADDS /* probe: dQ staged, not added */
#define J_NO_ADDS 0
#endif
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <algorithm>
#include <type_traits>

#include "backward_common.cuh" /* put_dk_operand: the dK operand packed as the kernel packs it */
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_ptx.cuh"
#include "../shape_bench/wgmma_shapes.cuh"
#include "../sketch_harness.cuh"

using namespace flamia_sm90;

struct SketchParams {
    const float *rows; /* per (head, token): ckq, sc, nr, pvf, dl, vdo (SoA over tokens, 6 fields a head) */
    float *out;        /* per thread: a sum of its accumulators (keeps them live) */
    int T, H, tiles_per_doc; /* 128-token query tiles a document */
};

__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
/* 1-D bulk copy global -> shared, completing on mbarrier `bar` */
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* shared memory (bytes); TMA destinations 1024-aligned */
constexpr int kK = 0, kV = 8192, kKt = 16384;           /* K, V: 64 keys x 128 dims; K^T: 128 dims x 128 B (64 keys used) */
constexpr int kBuf = 32768, kBufBytes = 52224;          /* 2 x {Q, dO, Q^T: 128 rows x 128 B; rows: 6 x 128 floats} */
constexpr int kQ = 0, kDO = 16384, kQt = 32768, kRows = 49152;
constexpr int kDOh = kBuf + 2 * kBufBytes;              /* F16 dO panel: 2 slots (sub-step parity) x [64 queries][128 dims] */
constexpr int kDS = kDOh + 32768;                       /* 2 x [64 queries][128 B] dS codes (64 keys used), by parity */
constexpr int kStage = kDS + 16384;                     /* dQ staging: 4 boxes [64][32] FP32 */
constexpr int kSlot = kStage + 32768;                   /* 2 x 128 threads x 32 B: P codes, by parity */
constexpr int kDqf = kSlot + 8192;                      /* 2 x 64 floats: dQ's row factor, by parity */
constexpr int kAmax = kDqf + 512;                       /* 8 floats: B's warp maxima */
constexpr int kBar = kAmax + 64;                        /* mbarriers: full[2], empty[2], kv, panel[2] */
constexpr int kBytes = kBar + 64 + 1024;
/* named barriers: 1 A, 2 B (warpgroup-local); by parity: P full 3/4, P empty 5/6, dS full 7/8, dS empty 9/10 */
enum { kBarA = 1, kBarB = 2, kPFull = 3, kPEmpty = 5, kDsFull = 7, kDsEmpty = 9 };

__global__ void __launch_bounds__(256, 1) j_sketch(const __grid_constant__ CUtensorMap tm_rows,
                                                   const __grid_constant__ CUtensorMap tm_rows64,
                                                   const __grid_constant__ CUtensorMap tm_dq, const SketchParams p) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    uint64_t *bar = (uint64_t *)(smem + kBar);
    const uint32_t full0 = smem_u32(&bar[0]), empty0 = smem_u32(&bar[2]), kvbar = smem_u32(&bar[4]),
                   panel0 = smem_u32(&bar[5]);
    const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, wq = wtid >> 5, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3;
    /* CTA -> (document, 64-key tile n, head), head fastest as today's grid. Causal: sub-steps of 64
     * queries s = n .. 2 tpd - 1 (the diagonal one first), tiles of 128 from n / 2 */
    const int ktiles = 2 * p.tiles_per_doc;
    const int h = blockIdx.x % p.H, n = (blockIdx.x / p.H) % ktiles, doc = blockIdx.x / (p.H * ktiles);
    const int ds = doc * p.tiles_per_doc * 128, s0 = n, s_end = ktiles, r0 = n >> 1;
    if (tid == 0) {
        for (int b = 0; b < 2; b++) {
            mbar_init(full0 + 8 * b, 1);
            mbar_init(empty0 + 8 * b, 2); /* one elected thread a warpgroup */
        }
        mbar_init(kvbar, 1);
        mbar_init(panel0, 1);
        mbar_init(panel0 + 8, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    /* tile r (absolute query tile) into buffer (r - r0) & 1: Q, dO, Q^T and the row constants */
    auto load_tile = [&](int r) {
        const int b = (r - r0) & 1, tok = ds + r * 128;
        const uint32_t fb = full0 + 8 * b, dst = smem_u32(smem + kBuf + b * kBufBytes);
        mbar_expect_tx(fb, 3 * 16384 + 6 * 512);
        tma_load_2d(dst + kQ, &tm_rows, 128 * h, tok, fb);
        tma_load_2d(dst + kDO, &tm_rows, 128 * ((h + 1) % p.H), tok, fb);
        tma_load_2d(dst + kQt, &tm_rows, 128 * ((h + 2) % p.H), tok, fb);
        for (int f = 0; f < 6; f++) bulk_load(dst + kRows + f * 512, p.rows + ((size_t)h * 6 + f) * p.T + tok, 512, fb);
    };
    /* the F16 dO rows of sub-step s (64 queries x 256 B) into panel slot s & 1: dV(s)'s B operand.
     * Per sub-step, so that the slot of s + 2 reloads while dV(s + 1) runs from the other */
    auto load_panel = [&](int s) {
        const int tok = ds + (s >> 1) * 128 + (s & 1) * 64;
        const uint32_t pb = panel0 + 8 * (s & 1), dst = smem_u32(smem + kDOh + (s & 1) * 16384);
        mbar_expect_tx(pb, 16384);
        tma_load_2d(dst, &tm_rows64, 128 * ((h + 5) % p.H), tok, pb);
        tma_load_2d(dst + 8192, &tm_rows64, 128 * ((h + 6) % p.H), tok, pb);
    };
    if (tid == 0) { /* K, V (64 rows), K^T (128 rows, 64 used) of the key tile; the first two query tiles; the panel */
        mbar_expect_tx(kvbar, 2 * 8192 + 16384);
        tma_load_2d(smem_u32(smem + kK), &tm_rows64, 128 * h, ds + n * 64, kvbar);
        tma_load_2d(smem_u32(smem + kV), &tm_rows64, 128 * ((h + 3) % p.H), ds + n * 64, kvbar);
        tma_load_2d(smem_u32(smem + kKt), &tm_rows, 128 * ((h + 4) % p.H), ds + (n >> 1) * 128, kvbar);
        load_tile(r0);
        if (r0 + 1 < p.tiles_per_doc) load_tile(r0 + 1);
        load_panel(s0);
        if (s0 + 1 < s_end) load_panel(s0 + 1);
    }
    mbar_wait(kvbar, 0);
    /* buffer of sub-step s, and its full-barrier phase */
    auto buf_of = [&](int s) { return ((s >> 1) - r0) & 1; };
    auto full_phase = [&](int s) { return (uint32_t)((((s >> 1) - r0) >> 1) & 1); };
    /* acc = (64 keys of the tile at key_off) x (sub-step s's 64 rows of the query-tile operand at
     * buf_off)^T over 128 dims: S^T (K, Q) for A, dP^T (V, dO) for B; issued and committed once
     * the sub-step's tile has landed */
    auto issue_key_product = [&](float(&acc)[32], int key_off, int buf_off, int s) {
        if ((s & 1) == 0 || s == s0) mbar_wait(full0 + 8 * buf_of(s), full_phase(s));
        const uint8_t *buf = smem + kBuf + buf_of(s) * kBufBytes;
        wgmma_fence();
        const uint64_t da = desc_sw128(smem_u32(smem + key_off)), db = desc_sw128(smem_u32(buf + buf_off + (s & 1) * 8192));
#pragma unroll
        for (int k = 0; k < 4; k++) wg_e4m3_ss_n64(acc, desc_advance(da, k * 32), desc_advance(db, k * 32), k);
        wgmma_commit();
    };
    float *sAmax = (float *)(smem + kAmax);
    float *sDqf = (float *)(smem + kDqf);

    if (wg == 0) { /* ================= warpgroup A: S -> P -> dV; dQ; staging and adds */
        float dvacc[64];
#pragma unroll
        for (int i = 0; i < 64; i++) dvacc[i] = 0.f;
        float sacc[32];
        uint32_t pa[16];
        auto issue_s = [&](int s) { issue_key_product(sacc, kK, kQ, s); }; /* S^T(s) = K Q^T */
        /* P(s) from sacc: codes to the slot (B builds dS from them), P^T 2^(eDO - G) as F16 in pa */
        auto make_p = [&](int s) {
            reg_fence(sacc);
            const int b = buf_of(s);
            const float *row = (const float *)(smem + kBuf + b * kBufBytes + kRows);
            uint32_t codes[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int ql = (s & 1) * 64 + 8 * j + 2 * tq;
                const float2 ckq = *(const float2 *)(row + ql), sc = *(const float2 *)(row + 128 + ql);
                const float2 nr = *(const float2 *)(row + 256 + ql), pvf = *(const float2 *)(row + 384 + ql);
                float pv[4];
                uint32_t c[2];
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const float e0 = exp_frame_direct(sacc[4 * j + 2 * hh] * ckq.x, sc.x);
                    const float e1 = exp_frame_direct(sacc[4 * j + 2 * hh + 1] * ckq.y, sc.y);
                    c[hh] = flamia_cvt_e4m3x2(e0, e1);
                    const float2 pb = dec2(c[hh]);
                    pv[2 * hh] = pb.x * nr.x * pvf.x;
                    pv[2 * hh + 1] = pb.y * nr.y * pvf.y;
                }
                codes[j] = (c[0] & 0xffffu) | (c[1] << 16);
                pa[4 * (j >> 1) + 2 * (j & 1)] = f16x2(pv[0], pv[1]);
                pa[4 * (j >> 1) + 2 * (j & 1) + 1] = f16x2(pv[2], pv[3]);
            }
            if (((s & 1) == 1 || s == s_end - 1) && wtid == 0) mbar_arrive(empty0 + 8 * b); /* A is done with the buffer */
            bar_named(kPEmpty + (s & 1), 256); /* B has read P(s - 2) */
            uint4 *slot = (uint4 *)(smem + kSlot + (s & 1) * 4096 + wtid * 32);
            slot[0] = make_uint4(codes[0], codes[1], codes[2], codes[3]);
            slot[1] = make_uint4(codes[4], codes[5], codes[6], codes[7]);
            bar_arrive(kPFull + (s & 1), 256);
        };
        if (s0 + 1 < s_end) bar_arrive(kDsEmpty + ((s0 + 1) & 1), 256); /* dS buffers start empty */
        bar_arrive(kDsEmpty + (s0 & 1), 256);
        issue_s(s0);
        wgmma_wait<0>();
        make_p(s0);
        /* one sub-step; MORE (a later sub-step follows) as a template argument, so that each
         * instantiation's wgmma sequence is unconditional (with a run-time test ptxas serialized
         * the wgmmas: C7514, a read of S(s + 1)'s accumulator under dQ(s)) */
        auto step = [&](int s, auto more_tag) {
            constexpr bool more = decltype(more_tag)::value;
            mbar_wait(panel0 + 8 * (s & 1), (uint32_t)(((s - s0) >> 1) & 1));
            wgmma_fence();
            const uint64_t dDOh = desc_sw128(smem_u32(smem + kDOh + (s & 1) * 16384));
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
                wg_f16_rs_n128(dvacc, a, desc_advance(dDOh, kk * 2048), 1);
            }
            wgmma_commit();
            if (J_PREFETCH && more) issue_s(s + 1);
            bar_named(kDsFull + (s & 1), 256); /* B's dS(s) and its row factors */
            const float f0 = sDqf[(s & 1) * 64 + wq * 16 + g], f1 = sDqf[(s & 1) * 64 + wq * 16 + g + 8];
            float tq64[64];
            wgmma_fence();
            {
                const uint64_t dDS = desc_sw128(smem_u32(smem + kDS + (s & 1) * 8192)), dKt = desc_sw128(smem_u32(smem + kKt));
                wg_e4m3_ss_n128(tq64, dDS, dKt, 0);
                wg_e4m3_ss_n128(tq64, desc_advance(dDS, 32), desc_advance(dKt, 32), 1);
            }
            wgmma_commit();
            if (J_PREFETCH && more) {
                wgmma_wait<1>(); /* dV(s) and S(s + 1) landed, dQ(s) may still run */
                make_p(s + 1);
            }
            wgmma_wait<0>();
            reg_fence(tq64);
            reg_fence(dvacc);
            if (s + 2 < s_end) bar_arrive(kDsEmpty + (s & 1), 256);
            if (s + 2 < s_end) { /* panel slot s & 1 is free (dV(s) done in every warp): sub-step s + 2's rows */
                bar_named(kBarA, 128);
                if (wtid == 0) load_panel(s + 2);
            }
            /* dQ(s): rows = queries (wq 16 + g, + 8), cols = dims 8 j + 2 tq; staged as 4 boxes [64][32] */
            if (lane == 0) bulk_wait_read_all();
            __syncwarp();
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const int r = wq * 16 + g + 8 * hh;
                const float f = hh ? f1 : f0;
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    const int c = 8 * (j & 3) + 2 * tq;
                    *(float2 *)(smem + kStage + (j >> 2) * 8192 + r * 128 + (((c >> 2) ^ (r & 7)) << 4) + (c & 3) * 4) =
                        make_float2(tq64[4 * j + 2 * hh] * f, tq64[4 * j + 2 * hh + 1] * f);
                }
            }
            fence_proxy_async();
            __syncwarp();
            if (lane == 0 && !J_NO_ADDS) {
                const int tok = ds + (s >> 1) * 128 + (s & 1) * 64 + wq * 16;
#pragma unroll
                for (int x = 0; x < 4; x++) tma_reduce_add_3d(&tm_dq, smem_u32(smem + kStage + x * 8192 + wq * 16 * 128), 32 * x, h, tok);
                bulk_commit_group();
            }
            if (!J_PREFETCH && more) {
                issue_s(s + 1);
                wgmma_wait<0>();
                make_p(s + 1);
            }
        };
        for (int s = s0; s + 1 < s_end; s++) step(s, std::true_type{});
        step(s_end - 1, std::false_type{});
        bulk_wait_all();
        float sum = 0.f;
#pragma unroll
        for (int x = 0; x < 64; x++) sum += dvacc[x];
        p.out[(size_t)blockIdx.x * 256 + tid] = sum;
    } else { /* ================= warpgroup B: dP -> dS -> maxima -> codes -> dK */
        float dkacc[64];
#pragma unroll
        for (int i = 0; i < 64; i++) dkacc[i] = 0.f;
        if (s0 + 1 < s_end) bar_arrive(kPEmpty + ((s0 + 1) & 1), 256); /* P slots start empty */
        bar_arrive(kPEmpty + (s0 & 1), 256);
        float dpacc[32];
        auto issue_dp = [&](int s) { issue_key_product(dpacc, kV, kDO, s); }; /* dP^T(s) = V dO^T */
        if (J_BPREFETCH) {
            issue_dp(s0);
            wgmma_wait<0>();
        }
        /* one sub-step, MORE a template argument as in A's */
        auto step = [&](int s, auto more_tag) {
            constexpr bool more = decltype(more_tag)::value;
            const int b = buf_of(s);
            const bool tile_end = (s & 1) == 1 || !more;
            const uint8_t *buf = smem + kBuf + b * kBufBytes;
            const float *row = (const float *)(buf + kRows);
            if (!J_BPREFETCH) {
                issue_dp(s);
                wgmma_wait<0>();
            }
            reg_fence(dpacc);
            float dsv[32]; /* dS(s) is built here, so that dpacc can take dP(s + 1) */
#pragma unroll
            for (int i = 0; i < 32; i++) dsv[i] = dpacc[i];
            bar_named(kPFull + (s & 1), 256); /* A's P(s) */
            const uint4 *slot = (const uint4 *)(smem + kSlot + (s & 1) * 4096 + wtid * 32);
            const uint4 c0 = slot[0], c1 = slot[1];
            if (s + 2 < s_end) bar_arrive(kPEmpty + (s & 1), 256);
            const uint32_t codes[8] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w};
            /* dS = P (dP 2^eV 2^eDO - D), P = dec(code) nr */
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int ql = (s & 1) * 64 + 8 * j + 2 * tq;
                const float2 nr = *(const float2 *)(row + 256 + ql);
                const float2 dl = *(const float2 *)(row + 512 + ql), vdo = *(const float2 *)(row + 640 + ql);
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const float2 pb = dec2(codes[j] >> (16 * hh));
                    const int idx = 4 * j + 2 * hh;
                    dsv[idx] = pb.x * nr.x * (dsv[idx] * vdo.x - dl.x);
                    dsv[idx + 1] = pb.y * nr.y * (dsv[idx + 1] * vdo.y - dl.y);
                }
            }
            /* block maxima per (32-key block kb = wq >> 1, 32-query block qb = j >> 2) */
            unsigned u[2];
#pragma unroll
            for (int qb = 0; qb < 2; qb++) {
                float m = 0.f;
#pragma unroll
                for (int i = 0; i < 16; i++) m = fmaxf(m, fabsf(dsv[16 * qb + i]));
                u[qb] = __reduce_max_sync(0xffffffffu, __float_as_uint(m));
            }
            if (lane < 2) sAmax[wq * 2 + lane] = __uint_as_float(lane ? u[1] : u[0]);
            bar_named(kBarB, 128);
            float inv[2], dkf[2];
            uint32_t dqs[2];
#pragma unroll
            for (int qb = 0; qb < 2; qb++) {
                const float a = fmaxf(sAmax[(wq & 2) * 2 + qb], sAmax[((wq & 2) | 1) * 2 + qb]);
                const int e = flamia_fmt_block_exponent(a, 0);
                inv[qb] = a > 0.f ? flamia_pow2f(-e) : 0.f;
                dkf[qb] = a > 0.f ? flamia_pow2f(e + ((const int *)row)[(s & 1) * 64 + 32 * qb]) : 0.f;
                dqs[qb] = flamia_f16x2_pow2_neg(e & 7);
            }
            /* codes: dK operand (registers, 2 k-steps of 32 queries), dQ operand to [query][key] */
            bar_named(kDsEmpty + (s & 1), 256); /* A's dQ(s - 2) has read the buffer */
            uint8_t *sDS = smem + kDS + (s & 1) * 8192;
            uint32_t pk[8];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                uint32_t kc[2], qc[2];
                sketch_ds_codes(dsv + 4 * j, inv[j >> 2], dqs[j >> 2], kc, qc);
                const int qn = 8 * j + 2 * tq, key = wq * 16 + 2 * g;
                *(uint16_t *)(sDS + qn * 128 + ((key >> 4) ^ (qn & 7)) * 16 + (key & 15)) = (uint16_t)__byte_perm(qc[0], qc[1], 0x40);
                *(uint16_t *)(sDS + (qn + 1) * 128 + ((key >> 4) ^ ((qn + 1) & 7)) * 16 + (key & 15)) =
                    (uint16_t)__byte_perm(qc[0], qc[1], 0x51);
                flamia_bwd::put_dk_operand(pk, j, kc);
            }
            if (wtid < 64) sDqf[(s & 1) * 64 + wtid] = row[128 + (s & 1) * 64 + wtid]; /* dQ's row factor (a stand-in) */
            fence_proxy_async(); /* dS codes -> A's wgmma */
            bar_arrive(kDsFull + (s & 1), 256);
            /* dK += 2^M (dS^T Q) per 32-query block; J_BPREFETCH: dP(s + 1) issued between the two,
             * so that its wait is under the first one's scaling */
#pragma unroll
            for (int qb = 0; qb < 2; qb++) {
                float tk[64];
                const uint32_t a[4] = {pk[4 * qb], pk[4 * qb + 1], pk[4 * qb + 2], pk[4 * qb + 3]};
                wgmma_fence();
                wg_e4m3_rs_n128(tk, a, desc_advance(desc_sw128(smem_u32(buf + kQt)), (s & 1) * 64 + qb * 32), 0);
                wgmma_commit();
                if (J_BPREFETCH && more && qb == 0) {
                    issue_dp(s + 1);
                    wgmma_wait<1>();
                } else {
                    wgmma_wait<0>();
                }
                reg_fence(tk);
#pragma unroll
                for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk[x], dkf[qb], dkacc[x]);
            }
            if (tile_end) { /* B is done with the buffer; its thread 0 refills it with tile r + 2 */
                const int r = s >> 1;
                if (wtid == 0) {
                    mbar_arrive(empty0 + 8 * b);
                    if (r + 2 < p.tiles_per_doc) {
                        mbar_wait(empty0 + 8 * b, (uint32_t)(((r - r0) >> 1) & 1));
                        load_tile(r + 2);
                    }
                }
            }
                };
        for (int s = s0; s + 1 < s_end; s++) step(s, std::true_type{});
        step(s_end - 1, std::false_type{});
        float sum = 0.f;
#pragma unroll
        for (int x = 0; x < 64; x++) sum += dkacc[x];
        p.out[(size_t)blockIdx.x * 256 + tid] = sum;
    }
}

#ifndef J_NO_MAIN
#include <cstdlib>


int main(int argc, char **argv) { /* argv[1]: documents of 4096 tokens (default 16; 1 for the sanitizers) */
    SketchInputs in;
    if (!sketch_inputs(in, argc > 1 ? atoi(argv[1]) : 16)) return 1;
    CUtensorMap tm_rows64; /* K and V: 64-row boxes */
    {
        const cuuint64_t dims[2] = {(cuuint64_t)in.H * 128, (cuuint64_t)in.T}, strides[1] = {(cuuint64_t)in.H * 128};
        const cuuint32_t box[2] = {128, 64}, estr[2] = {1, 1};
        if (!flamia_encode_tiled() || flamia_encode_tiled()(&tm_rows64, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, in.codes, dims, strides, box, estr,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
            printf("64-row map failed\n");
            return 1;
        }
    }
    const int grid = in.B * in.H * 2 * in.tpd;
    float *out;
    cudaMalloc(&out, (size_t)grid * 256 * 4);
    SketchParams p{in.rows, out, in.T, in.H, in.tpd};
    cudaFuncSetAttribute(j_sketch, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
    float med, fast;
    cudaError_t err;
    sketch_time(in, [&] { j_sketch<<<grid, 256, kBytes>>>(in.tm_rows, tm_rows64, in.tm_dq, p); }, med, fast, err);
    const double pairs = sketch_pairs(in);
    printf("j_sketch (J_PREFETCH=%d, J_BPREFETCH=%d, J_NO_ADDS=%d) %dx4096 (16 heads, causal grid, %d CTAs of 64 keys, %.0f 128x128 tile "
           "pairs): median %.3f ms (min %.3f), %.2f us a tile pair and SM; %s\n",
           J_PREFETCH, J_BPREFETCH, J_NO_ADDS, in.B, grid, pairs, med, fast, med * 1e3 * 132 / pairs, cudaGetErrorString(err));
    return err != cudaSuccess;
}
#endif
