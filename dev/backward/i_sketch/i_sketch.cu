/*
 * i_sketch.cu - the skeleton of hopper-port.md (i): a backward main kernel with FOUR consumer
 * warpgroups at 128 registers (512 threads, one CTA an SM). NOT a kernel of the library and
 * its results are meaningless: the loop of the planned kernel with its register-carrying parts
 * (mxfp8's unmasked direct path: no masking, no split exponential, no exact recipe), its tile
 * loads (TMA, double-buffered as today's), exchanges, barriers and dQ reduce-adds, on bounded
 * random codes, to read ptxas's counts (regs.sh) and to time the structure on the H200 over
 * 16x4096's causal grid (main() here; fortieth session).
 *
 * Warpgroup (kh, qh): keys 64 kh..64 kh + 63 of the 128-key tile; per 64-query sub-step it
 * computes S^T and dP^T for queries 32 qh..32 qh + 31 (m64n32, shared-memory operands), P, dS,
 * the dS block's maximum (one 32x32 block per warp pair, inside the warpgroup), its codes, and
 * accumulates dK and dV for head dims 64 qh..64 qh + 63 over all 64 queries: its partner
 * (kh, 1 - qh) hands over its P^T (F16) and dS^T (E4M3) fragments through a thread-private
 * shared-memory slot (both warpgroups have the same thread -> fragment map). dQ: warpgroup w
 * computes dims 32 w..32 w + 31 (m64n32) over the tile's 128 keys after the CTA barrier.
 * Accumulators a thread: dK 32 + dV 32 (today's kernel: 64 + 64).
 * Build (prints the counts): sh dev/backward/i_sketch/regs.sh; the timing binary with any of the
 * probe switches below, e.g. nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a
 * --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats -Ikernels/sm90 -DI_NO_MMA=1
 * dev/backward/i_sketch/i_sketch.cu -o dev/backward/bin/i_sketch_nomma, run on the device (~1 s).
 * Measured (fortieth session, docs/perf-notes.md "Backward kernel"): 7.62 ms at 16x4096, as long
 * as today's main kernel; the parts barely overlap; without barriers and fences 6.67 ms.
 */
#ifndef I_DV_WAIT
#define I_DV_WAIT 1
#endif
#ifndef I_NO_MMA /* probes (timing only): no wgmma / no element-wise phase / no dQ reduce-adds */
#define I_NO_MMA 0
#endif
#ifndef I_NO_EW
#define I_NO_EW 0
#endif
#ifndef I_NO_ADDS
#define I_NO_ADDS 0
#endif
#ifndef I_NO_LOADS /* probe: no tile loads (the operands stay as the prologue left them) */
#define I_NO_LOADS 0
#endif
#ifndef I_NO_STAGE /* probe: no dQ staging, fence or adds */
#define I_NO_STAGE 0
#endif
#ifndef I_PINGPONG /* probe: the key halves take turns issuing S^T / dP^T (implies I_DESYNC) */
#define I_PINGPONG 0
#endif
#ifndef I_DESYNC /* probe: dQ per key half after a pair barrier, no CTA barrier, no staging */
#define I_DESYNC I_PINGPONG
#endif
#ifndef I_NO_BAR /* floor probes: the sub-step's barriers, proxy fences, dK scaling FMAs out */
#define I_NO_BAR 0
#endif
#ifndef I_NO_FENCE
#define I_NO_FENCE 0
#endif
#ifndef I_NO_SCALE
#define I_NO_SCALE 0
#endif
#ifndef I_THREADS
#define I_THREADS 512
#endif
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <algorithm>

#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_ptx.cuh"
#include "../shape_bench/wgmma_shapes.cuh"
#include "../sketch_harness.cuh"

using namespace flamia_sm90;

struct SketchParams {
    const float *rows; /* per (head, token): ckq, sc, nr, pvf, dl, vdo (SoA over tokens, 6 fields a head) */
    float *dk, *dv;
    int T, H, tiles_per_doc;
};


/* shared memory (bytes) */
constexpr int kK = 0, kV = 16384, kKt = 32768, kBuf = 49152, kBufBytes = 49152; /* 2 x {Q, dO, Q^T} */
constexpr int kQ = 0, kDO = 16384, kQt = 32768;
constexpr int kDOh = kBuf + 2 * kBufBytes;  /* F16 dO panel: 2 x [128 rows][64 dims] */
constexpr int kDS = kDOh + 32768;           /* 2 x [64][128] dS codes, by sub-step parity */
constexpr int kX = kDS + 16384;             /* 512 x 48 B exchange slots */
constexpr int kAmax = kX + 512 * 48;        /* 16 floats of block maxima, 512 dK factors */
constexpr int kRow = kAmax + 2112;          /* 2 x 6 x 128 floats */
constexpr int kBar = kRow + 2 * 3072;       /* 3 mbarriers */
constexpr int kBytes = kBar + 64 + 1024;

__global__ void __launch_bounds__(I_THREADS, 1) i_sketch(const __grid_constant__ CUtensorMap tm_rows,
                                                         const __grid_constant__ CUtensorMap tm_dq, const SketchParams p) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    uint64_t *bar = (uint64_t *)(smem + kBar);
    const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, wq = wtid >> 5, lane = tid & 31;
    const int kh = wg >> 1, qh = wg & 1, g = lane >> 2, tq = lane & 3;
    /* CTA -> (document, key tile, head), head fastest as today's grid; causal: tiles n..last */
    const int h = blockIdx.x % p.H, n = (blockIdx.x / p.H) % p.tiles_per_doc, doc = blockIdx.x / (p.H * p.tiles_per_doc);
    const int ds = doc * p.tiles_per_doc * 128, nit = p.tiles_per_doc - n;
    if (tid == 0) {
        for (int b = 0; b < 3; b++) mbar_init(smem_u32(&bar[b]), 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto load_tile = [&](int it) { /* Q, dO, Q^T of query tile n + it, and its row constants */
        const int b = it & 1, tok = ds + (n + it) * 128;
        if (tid == 0 && !I_NO_LOADS) {
            const uint32_t bb = smem_u32(&bar[b]), dst = smem_u32(smem + kBuf + b * kBufBytes);
            mbar_expect_tx(bb, 3 * 16384);
            tma_load_2d(dst + kQ, &tm_rows, 128 * h, tok, bb);
            tma_load_2d(dst + kDO, &tm_rows, 128 * ((h + 1) % p.H), tok, bb);
            tma_load_2d(dst + kQt, &tm_rows, 128 * ((h + 2) % p.H), tok, bb);
        }
        float *row = (float *)(smem + kRow + b * 3072);
        for (int x = tid; x < 768; x += blockDim.x)
            cp_async4(smem_u32(row + x), p.rows + ((size_t)h * 6 + x / 128) * p.T + tok + x % 128, true);
        cp_async_commit();
    };
    if (tid == 0) { /* K, V, K^T of the key tile */
        const uint32_t bb = smem_u32(&bar[2]);
        mbar_expect_tx(bb, 3 * 16384);
        tma_load_2d(smem_u32(smem + kK), &tm_rows, 128 * h, ds + n * 128, bb);
        tma_load_2d(smem_u32(smem + kV), &tm_rows, 128 * ((h + 3) % p.H), ds + n * 128, bb);
        tma_load_2d(smem_u32(smem + kKt), &tm_rows, 128 * ((h + 4) % p.H), ds + n * 128, bb);
    }
    mbar_wait(smem_u32(&bar[2]), 0);
    __syncthreads();
    load_tile(0);
#if I_PINGPONG
    if (kh == 1) asm volatile("bar.arrive 7, 512;\n" ::: "memory"); /* pair 0 issues first */
#endif
    float dkacc[32], dvacc[32];
#pragma unroll
    for (int i = 0; i < 32; i++) dkacc[i] = dvacc[i] = 0.f;
    for (int it = 0; it < nit; it++) {
        const int b = it & 1, tok0 = ds + (n + it) * 128;
        cp_async_wait<0>();
        bulk_wait_read_all(); /* the staging regions are free */
        fence_proxy_async();
        __syncthreads();
        if (tid == 0 && !I_NO_LOADS) { /* this tile's F16 dO panel (single buffer, as today) */
            const uint32_t bb = smem_u32(&bar[2]);
            mbar_expect_tx(bb, 32768);
            tma_load_2d(smem_u32(smem + kDOh), &tm_rows, 128 * ((h + 5) % p.H), tok0, bb);
            tma_load_2d(smem_u32(smem + kDOh + 16384), &tm_rows, 128 * ((h + 6) % p.H), tok0, bb);
        }
        if (it + 1 < nit) load_tile(it + 1);
        if (!I_NO_LOADS) mbar_wait(smem_u32(&bar[b]), (it >> 1) & 1);
        uint8_t *buf = smem + kBuf + b * kBufBytes;
        const float *row = (const float *)(smem + kRow + b * 3072);
        for (int h2 = 0; h2 < 2; h2++) {
            float sacc[16], dpacc[16];
#if I_PINGPONG /* probe: the key halves' pairs take turns issuing S^T / dP^T (FA3's ping-pong) */
            asm volatile("bar.sync %0, 512;\n" ::"r"(7 + kh) : "memory");
#endif
            wgmma_fence();
            const uint64_t dK = desc_sw128(smem_u32(smem + kK + kh * 8192)), dQ = desc_sw128(smem_u32(buf + kQ + h2 * 8192 + qh * 4096));
            const uint64_t dV = desc_sw128(smem_u32(smem + kV + kh * 8192)), dDO = desc_sw128(smem_u32(buf + kDO + h2 * 8192 + qh * 4096));
#pragma unroll
            for (int k = 0; k < 4; k++) if (!I_NO_MMA) wg_e4m3_ss_n32(sacc, desc_advance(dK, k * 32), desc_advance(dQ, k * 32), k);
            wgmma_commit();
#pragma unroll
            for (int k = 0; k < 4; k++) if (!I_NO_MMA) wg_e4m3_ss_n32(dpacc, desc_advance(dV, k * 32), desc_advance(dDO, k * 32), k);
            wgmma_commit();
#if I_PINGPONG
            asm volatile("bar.arrive %0, 512;\n" ::"r"(8 - kh) : "memory");
#endif
            wgmma_wait<1>();
            reg_fence(sacc);
            /* P: my 32 queries (4 column pairs j), codes, P in FP32 (kept in sacc), P^T 2^(eDO-G) in F16 */
            uint32_t pa[8];
#pragma unroll
            for (int j = 0; j < 4 && I_NO_EW; j++) { /* probe: no element-wise phase, operands opaque */
                pa[2 * j] = __float_as_uint(sacc[4 * j]) ^ __float_as_uint(sacc[4 * j + 1]);
                pa[2 * j + 1] = __float_as_uint(sacc[4 * j + 2]) ^ __float_as_uint(sacc[4 * j + 3]);
            }
#pragma unroll
            for (int j = 0; j < 4 && !I_NO_EW; j++) {
                const int ql = h2 * 64 + qh * 32 + 8 * j + 2 * tq;
                const float2 ckq = *(const float2 *)(row + ql), sc = *(const float2 *)(row + 128 + ql);
                const float2 nr = *(const float2 *)(row + 256 + ql), pvf = *(const float2 *)(row + 384 + ql);
                sketch_p_quad(sacc + 4 * j, ckq, sc, nr, pvf, pa[2 * j], pa[2 * j + 1]);
            }
            wgmma_wait<0>();
            reg_fence(dpacc);
#pragma unroll
            for (int j = 0; j < 4 && !I_NO_EW; j++) {
                const int ql = h2 * 64 + qh * 32 + 8 * j + 2 * tq;
                const float2 dl = *(const float2 *)(row + 512 + ql), vdo = *(const float2 *)(row + 640 + ql);
                sketch_ds_quad(sacc + 4 * j, dpacc + 4 * j, dl, vdo);
            }
            /* the block maximum: one 32x32 block per warp pair (my 16 keys, my 32 queries) */
            float m = 0.f;
#pragma unroll
            for (int i = 0; i < 16 && !I_NO_EW; i++) m = fmaxf(m, fabsf(dpacc[i]));
            const unsigned u = __reduce_max_sync(0xffffffffu, __float_as_uint(m));
            float *sAmax = (float *)(smem + kAmax);
            if (lane == 0) sAmax[wg * 4 + wq] = __uint_as_float(u);
            if (!I_NO_BAR) bar_named(1 + wg, 128);
            const float a = fmaxf(sAmax[wg * 4 + (wq & 2)], sAmax[wg * 4 + (wq | 1)]);
            const int e = flamia_fmt_block_exponent(a, 0);
            const float inv = a > 0.f ? flamia_pow2f(-e) : 0.f;
            const float dkf = a > 0.f ? flamia_pow2f(e + ((const int *)row)[h2 * 64 + qh * 32]) : 0.f;
            const uint32_t dqs = flamia_f16x2_pow2_neg(e & 7);
            /* codes: dK operand (a k=32 step of 32 queries: 4 registers), dQ operand to [query][key] */
            uint32_t pk[4];
            uint8_t *sDS = smem + kDS + h2 * 8192;
#pragma unroll
            for (int j = 0; j < 4 && I_NO_EW; j++) pk[j] = __float_as_uint(dpacc[4 * j]) ^ __float_as_uint(dpacc[4 * j + 3]);
#pragma unroll
            for (int j = 0; j < 4 && !I_NO_EW; j++) {
                uint32_t kc[2], qc[2];
                sketch_ds_codes(dpacc + 4 * j, inv, dqs, kc, qc);
                const int qn = qh * 32 + 8 * j + 2 * tq, key = kh * 64 + wq * 16 + 2 * g;
                *(uint16_t *)(sDS + qn * 128 + ((key >> 4) ^ (qn & 7)) * 16 + (key & 15)) = (uint16_t)__byte_perm(qc[0], qc[1], 0x40);
                *(uint16_t *)(sDS + (qn + 1) * 128 + ((key >> 4) ^ ((qn + 1) & 7)) * 16 + (key & 15)) =
                    (uint16_t)__byte_perm(qc[0], qc[1], 0x51);
                if ((j & 1) == 0) {
                    pk[j] = kc[0];
                    pk[j + 1] = kc[1];
                } else {
                    pk[j - 1] |= kc[0] << 16;
                    pk[j] |= kc[1] << 16;
                }
            }
            /* hand P^T, dS^T and the dK factor to the partner (same thread of warpgroup wg ^ 1) */
            uint4 *slot = (uint4 *)(smem + kX + tid * 48), *peer = (uint4 *)(smem + kX + (tid ^ 128) * 48);
            slot[0] = make_uint4(pa[0], pa[1], pa[2], pa[3]);
            slot[1] = make_uint4(pa[4], pa[5], pa[6], pa[7]);
            slot[2] = make_uint4(pk[0], pk[1], pk[2], pk[3]);
            ((float *)(smem + kAmax))[512 + tid] = dkf;
            if (!I_NO_FENCE) fence_proxy_async();
            if (!I_NO_BAR) bar_named(5 + kh, 256);
            const uint4 ppa0 = peer[0], ppa1 = peer[1], ppk = peer[2];
            const float pdkf = ((const float *)(smem + kAmax))[512 + (tid ^ 128)];
            /* dV += P^T dO over the 64 queries (4 k=16 steps, mine and the partner's in query order) */
            if (h2 == 0 && !I_NO_LOADS) mbar_wait(smem_u32(&bar[2]), (it + 1) & 1); /* phase 0 was K, V, K^T */
            wgmma_fence();
            const uint64_t dDOh = desc_sw128(smem_u32(smem + kDOh + qh * 16384 + h2 * 8192));
            {
                const uint32_t a0[4] = {qh ? ppa0.x : pa[0], qh ? ppa0.y : pa[1], qh ? ppa0.z : pa[2], qh ? ppa0.w : pa[3]};
                const uint32_t a1[4] = {qh ? ppa1.x : pa[4], qh ? ppa1.y : pa[5], qh ? ppa1.z : pa[6], qh ? ppa1.w : pa[7]};
                const uint32_t a2[4] = {qh ? pa[0] : ppa0.x, qh ? pa[1] : ppa0.y, qh ? pa[2] : ppa0.z, qh ? pa[3] : ppa0.w};
                const uint32_t a3[4] = {qh ? pa[4] : ppa1.x, qh ? pa[5] : ppa1.y, qh ? pa[6] : ppa1.z, qh ? pa[7] : ppa1.w};
                if (!I_NO_MMA) wg_f16_rs_n64(dvacc, a0, desc_advance(dDOh, 0), 1);
                if (!I_NO_MMA) wg_f16_rs_n64(dvacc, a1, desc_advance(dDOh, 2048), 1);
                if (!I_NO_MMA) wg_f16_rs_n64(dvacc, a2, desc_advance(dDOh, 4096), 1);
                if (!I_NO_MMA) wg_f16_rs_n64(dvacc, a3, desc_advance(dDOh, 6144), 1);
            }
            wgmma_commit();
#if I_DV_WAIT /* dV's operand registers free before dK's partial takes 32 */
            wgmma_wait<0>();
            reg_fence(dvacc);
#endif
            /* dK += 2^M (dS^T Q) per 32-query block: mine, then the partner's */
#pragma unroll
            for (int b = 0; b < 2; b++) {
                float tk[32];
                const uint32_t a[4] = {b == qh ? pk[0] : ppk.x, b == qh ? pk[1] : ppk.y, b == qh ? pk[2] : ppk.z, b == qh ? pk[3] : ppk.w};
                wgmma_fence();
                if (!I_NO_MMA) wg_e4m3_rs_n64(tk, a, desc_advance(desc_sw128(smem_u32(buf + kQt + qh * 8192)), h2 * 64 + b * 32), 0);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(tk);
                const float f = b == qh ? dkf : pdkf;
#pragma unroll
                for (int x = 0; x < 32; x++) dkacc[x] = I_NO_SCALE ? dkacc[x] + tk[x] : fmaf(tk[x], f, dkacc[x]);
            }
            reg_fence(dvacc);
#if I_DESYNC /* probe: each key half's pair computes dQ over its own 64 keys (dims 64 qh..), no CTA barrier */
            bar_named(5 + kh, 256);
            {
                float t32[32];
                wgmma_fence();
                const uint64_t dDS = desc_sw128(smem_u32(sDS)), dKt = desc_sw128(smem_u32(smem + kKt + qh * 8192));
                if (!I_NO_MMA) wg_e4m3_ss_n64(t32, desc_advance(dDS, 2 * kh * 32), desc_advance(dKt, 2 * kh * 32), 0);
                if (!I_NO_MMA) wg_e4m3_ss_n64(t32, desc_advance(dDS, (2 * kh + 1) * 32), desc_advance(dKt, (2 * kh + 1) * 32), 1);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(t32);
                const float f0 = row[h2 * 64 + wq * 16 + g], f1 = row[h2 * 64 + wq * 16 + g + 8];
#pragma unroll
                for (int x = 0; x < 32; x++) t32[x] *= (x >> 1) & 1 ? f1 : f0;
                reg_fence(t32);
            }
            continue;
#endif
            if (!I_NO_BAR) __syncthreads(); /* dQ's operand holds all four warpgroups' dS */
            float dqacc[16];
#pragma unroll
            for (int c = 0; c < 2; c++) {
                float t16[16];
                wgmma_fence();
                const uint64_t dDS = desc_sw128(smem_u32(sDS)), dKt = desc_sw128(smem_u32(smem + kKt + wg * 4096));
                if (!I_NO_MMA) wg_e4m3_ss_n32(t16, desc_advance(dDS, 2 * c * 32), desc_advance(dKt, 2 * c * 32), 0);
                if (!I_NO_MMA) wg_e4m3_ss_n32(t16, desc_advance(dDS, (2 * c + 1) * 32), desc_advance(dKt, (2 * c + 1) * 32), 1);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(t16);
                const float f0 = row[h2 * 64 + wq * 16 + g + c], f1 = row[h2 * 64 + wq * 16 + g + 8 + c];
#pragma unroll
                for (int x = 0; x < 16; x++) dqacc[x] = c == 0 ? t16[x] * ((x >> 1) & 1 ? f1 : f0) : fmaf(t16[x], (x >> 1) & 1 ? f1 : f0, dqacc[x]);
            }
            if (I_NO_STAGE) { reg_fence(dqacc); continue; }
            /* staging: what all four warpgroups are done with after the CTA barrier (today's
             * scheme): the sub-step's Q rows, dO rows, and the two panels' rows */
            uint8_t *st = wg < 2 ? buf + (wg ? kDO : kQ) + h2 * 8192 : smem + kDOh + (wg - 2) * 16384 + h2 * 8192;
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const int r = wq * 16 + g + 8 * hh;
#pragma unroll
                for (int j = 0; j < 4; j++)
                    *(float2 *)(st + r * 128 + ((((8 * j + 2 * tq) >> 2) ^ (r & 7)) << 4) + ((2 * tq) & 3) * 4) =
                        make_float2(dqacc[4 * j + 2 * hh], dqacc[4 * j + 2 * hh + 1]);
            }
            if (!I_NO_FENCE) fence_proxy_async();
            __syncwarp();
            if (lane == 0 && !I_NO_ADDS) {
                tma_reduce_add_3d(&tm_dq, smem_u32(st + wq * 16 * 128), 32 * wg, h, tok0 + h2 * 64 + wq * 16);
                bulk_commit_group();
            }
        }
    }
    sketch_sink(dkacc, dvacc, p.dk + (size_t)blockIdx.x * blockDim.x + tid);
}

#ifndef I_NO_MAIN

int main() {
    SketchInputs in;
    if (!sketch_inputs(in, 16)) return 1;
    const int grid = in.B * in.H * in.tpd;
    float *out;
    cudaMalloc(&out, (size_t)grid * 512 * 4);
    SketchParams p{in.rows, out, out, in.T, in.H, in.tpd};
    cudaFuncSetAttribute(i_sketch, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
    float med, fast;
    cudaError_t err;
    sketch_time(in, [&] { i_sketch<<<grid, I_THREADS, kBytes>>>(in.tm_rows, in.tm_dq, p); }, med, fast, err);
    const double pairs = sketch_pairs(in);
    printf("i_sketch 16x4096 (16 heads, causal grid, %d CTAs, %.0f tile pairs): median %.3f ms (min %.3f), "
           "%.2f us a tile pair and SM; %s\n", grid, pairs, med, fast, med * 1e3 * 132 / pairs, cudaGetErrorString(err));
    return 0;
}
#endif
