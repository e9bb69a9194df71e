/*
 * k_sketch.cu - the skeleton of a backward main kernel with TWO CTAs an SM: each CTA one
 * warpgroup (128 threads, up to 255 registers) that owns a 64-key tile and walks its 64-query
 * sub-steps alone, so that the SM's two instruction streams are not held in lockstep by CTA
 * barriers (today's kernel: one CTA of two warpgroups sharing each sub-step, a CTA barrier
 * before dQ and at every tile start). NOT a kernel of the library and its results are
 * meaningless: the loop of the planned kernel with its register-carrying parts (mxfp8's
 * unmasked direct path: no masking, no split exponential, no exact recipe), its tile loads
 * (TMA, double-buffered), barriers and dQ reduce-adds, on bounded random codes, to time the
 * structure over 16x4096's causal grid (fifty-eighth session; i_sketch shows the form).
 *
 * Per 64-query sub-step: S^T = K Q^T and dP^T = V dO^T (m64n64k32, shared-memory operands),
 * P's codes and dV's F16 operand (registers), dS, its four 32x32 blocks' maxima (two warps a
 * key block, one barrier of the CTA = its warpgroup), the codes (dK's operand in registers,
 * dQ's to shared memory [query][key], 64-byte swizzle), dV += P^T dO (F16 m64n128k16 x 4), dK's
 * two query-block partials (m64n128k32, FFMA into dK), then dQ = dS K over the tile's 64 keys
 * for all 128 dims (per 64-dim half a chain of two m64n64k32: mxfp8's pair fold; halves so that
 * ptxas needs no spills), staged as FP32 in the
 * sub-step's own Q / dO / panel region and added by each warp's TMA reduce-adds. So dQ's adds
 * per FLOP double against today's (a 64-key partial each), and so do the Q / dO / Q^T / panel
 * loads (each 64-key CTA loads them).
 * Shared memory 112 KB a CTA (two fit an SM's 228 KB). K_ONE=1 asks for 120 KB so that one CTA
 * runs an SM: the same code without the second stream.
 * Measured (fifty-eighth session, H100, docs/perf-notes.md "Backward kernel"): 7.14-7.27 ms at
 * 16x4096, 0.97-0.99x today's main kernel; one CTA an SM 12.1 ms; without dQ's adds 6.0 ms. Not
 * pursued: the doubled dQ adds and tile loads take back what the second stream gains.
 * Build (device or here): nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a
 *   --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats -Ikernels/sm90 -Xptxas -v
 *   dev/backward/k_sketch/k_sketch.cu -o dev/backward/bin/k_sketch [-DK_ONE=1]
 */
#ifndef K_ONE /* probe: one CTA an SM (shared memory request raised past half the SM's) */
#define K_ONE 0
#endif
#ifndef K_NO_ADDS /* probe: no dQ reduce-adds (staging kept) */
#define K_NO_ADDS 0
#endif
#ifndef K_ADDS64 /* dQ's adds by thread 0 as 4 [64 rows][32 dims] boxes after a barrier, not per warp */
#define K_ADDS64 0
#endif
#ifndef K_NO_MMA /* probe: no wgmma */
#define K_NO_MMA 0
#endif
#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include <algorithm>
#include <cstdlib>

#include "backward_common.cuh" /* put_dk_operand: the dK operand packed as the kernel packs it */
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_ptx.cuh"
#include "../shape_bench/wgmma_shapes.cuh"
#include "../sketch_harness.cuh"

using namespace flamia_sm90;

struct KParams {
    const float *rows; /* per (head, token): ckq, sc, nr, pvf, dl, vdo (SoA over tokens, 6 fields a head) */
    float *out;
    int T, H, ktiles; /* ktiles: 64-token tiles a document */
};


/* shared memory (bytes) */
constexpr int kK = 0, kV = 8192, kKt = 16384;            /* [64 keys][128 B]; K^T [128 dims][64 B] */
constexpr int kBuf = 24576, kBufBytes = 40960;           /* 2 x {Q, dO, Q^T, F16 dO panel} */
constexpr int kQ = 0, kDO = 8192, kQt = 16384, kDOh = 24576; /* Q, dO [64][128 B]; Q^T [128][64 B]; panel [128][128 B] */
constexpr int kDS = kBuf + 2 * kBufBytes;                /* [64 queries][64 keys] dS codes, 64-byte swizzle */
constexpr int kAmax = kDS + 4096;                        /* 8 floats of block maxima */
constexpr int kRow = kAmax + 64;                         /* 2 x 6 x 64 floats */
constexpr int kBar = kRow + 2 * 1536;                    /* 3 mbarriers */
constexpr int kBytes = kBar + 64 + 1024;
constexpr int kLaunchBytes = K_ONE ? 120 * 1024 : kBytes;

__global__ void __launch_bounds__(128, 2) k_sketch(const __grid_constant__ CUtensorMap tm_rows64,
                                                   const __grid_constant__ CUtensorMap tm_t64,
                                                   const __grid_constant__ CUtensorMap tm_dq,
                                                   const __grid_constant__ CUtensorMap tm_dq64, const KParams p) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    uint64_t *bar = (uint64_t *)(smem + kBar);
    const int tid = threadIdx.x, wq = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
    /* CTA -> (document, 64-key tile, head), head fastest; causal: 64-query sub-steps n..last */
    const int h = blockIdx.x % p.H, n = (blockIdx.x / p.H) % p.ktiles, doc = blockIdx.x / (p.H * p.ktiles);
    const int ds = doc * p.ktiles * 64, nit = p.ktiles - n;
    if (tid == 0) {
        for (int b = 0; b < 3; b++) mbar_init(smem_u32(&bar[b]), 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    auto load_step = [&](int it) { /* Q, dO, Q^T, the F16 panel of sub-step n + it, its row constants */
        const int b = it & 1, tok = ds + (n + it) * 64;
        if (tid == 0) {
            const uint32_t bb = smem_u32(&bar[b]), dst = smem_u32(smem + kBuf + b * kBufBytes);
            mbar_expect_tx(bb, kBufBytes);
            tma_load_2d(dst + kQ, &tm_rows64, 128 * h, tok, bb);
            tma_load_2d(dst + kDO, &tm_rows64, 128 * ((h + 1) % p.H), tok, bb);
            tma_load_2d(dst + kQt, &tm_t64, 128 * ((h + 2) % p.H), tok, bb);
            tma_load_2d(dst + kDOh, &tm_rows64, 128 * ((h + 5) % p.H), tok, bb);
            tma_load_2d(dst + kDOh + 8192, &tm_rows64, 128 * ((h + 6) % p.H), tok, bb);
        }
        float *row = (float *)(smem + kRow + b * 1536);
        for (int x = tid; x < 384; x += 128)
            cp_async4(smem_u32(row + x), p.rows + ((size_t)h * 6 + x / 64) * p.T + tok + x % 64, true);
        cp_async_commit();
    };
    if (tid == 0) { /* K, V, K^T of the key tile */
        const uint32_t bb = smem_u32(&bar[2]);
        mbar_expect_tx(bb, 3 * 8192);
        tma_load_2d(smem_u32(smem + kK), &tm_rows64, 128 * h, ds + n * 64, bb);
        tma_load_2d(smem_u32(smem + kV), &tm_rows64, 128 * ((h + 3) % p.H), ds + n * 64, bb);
        tma_load_2d(smem_u32(smem + kKt), &tm_t64, 128 * ((h + 4) % p.H), ds + n * 64, bb);
    }
    load_step(0);
    mbar_wait(smem_u32(&bar[2]), 0);
    float dkacc[64], dvacc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) dkacc[i] = dvacc[i] = 0.f;
    for (int it = 0; it < nit; it++) {
        const int b = it & 1, tok0 = ds + (n + it) * 64;
        cp_async_wait<0>();
        bulk_wait_read_all(); /* sub-step it-1's staging is read */
        fence_proxy_async();
        __syncthreads();
        if (it + 1 < nit) load_step(it + 1);
        mbar_wait(smem_u32(&bar[b]), (it >> 1) & 1);
        uint8_t *buf = smem + kBuf + b * kBufBytes;
        const float *row = (const float *)(smem + kRow + b * 1536);
        float sacc[32], dpacc[32];
        wgmma_fence();
        {
            const uint64_t dK = desc_sw128(smem_u32(smem + kK)), dQ = desc_sw128(smem_u32(buf + kQ));
            const uint64_t dV = desc_sw128(smem_u32(smem + kV)), dDO = desc_sw128(smem_u32(buf + kDO));
#pragma unroll
            for (int k = 0; k < 4; k++) if (!K_NO_MMA) wg_e4m3_ss_n64(sacc, desc_advance(dK, k * 32), desc_advance(dQ, k * 32), k);
            wgmma_commit();
#pragma unroll
            for (int k = 0; k < 4; k++) if (!K_NO_MMA) wg_e4m3_ss_n64(dpacc, desc_advance(dV, k * 32), desc_advance(dDO, k * 32), k);
            wgmma_commit();
        }
        wgmma_wait<1>();
        reg_fence(sacc);
        /* P: 8 column pairs j (queries 8 j + 2 tq, + 1), codes, P in FP32 (kept in sacc), P^T in F16 */
        uint32_t pa[16];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int ql = 8 * j + 2 * tq;
            const float2 ckq = *(const float2 *)(row + ql), sc = *(const float2 *)(row + 64 + ql);
            const float2 nr = *(const float2 *)(row + 128 + ql), pvf = *(const float2 *)(row + 192 + ql);
            sketch_p_quad(sacc + 4 * j, ckq, sc, nr, pvf, pa[2 * j], pa[2 * j + 1]);
        }
        wgmma_wait<0>();
        reg_fence(dpacc);
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int ql = 8 * j + 2 * tq;
            const float2 dl = *(const float2 *)(row + 256 + ql), vdo = *(const float2 *)(row + 320 + ql);
            sketch_ds_quad(sacc + 4 * j, dpacc + 4 * j, dl, vdo);
        }
        /* block maxima: warp wq holds keys 16 wq.. of key block wq >> 1, query blocks j < 4, j >= 4 */
        float *sAmax = (float *)(smem + kAmax);
#pragma unroll
        for (int qb = 0; qb < 2; qb++) {
            float m = 0.f;
#pragma unroll
            for (int i = 0; i < 16; i++) m = fmaxf(m, fabsf(dpacc[16 * qb + i]));
            const unsigned u = __reduce_max_sync(0xffffffffu, __float_as_uint(m));
            if (lane == 0) sAmax[wq * 2 + qb] = __uint_as_float(u);
        }
        bar_named(1, 128);
        float inv[2], dkf[2];
        uint32_t dqs[2]; /* dQ's operand fold factor per query block (meaningless here) */
#pragma unroll
        for (int qb = 0; qb < 2; qb++) {
            const float a = fmaxf(sAmax[(wq & 2) * 2 + qb], sAmax[((wq & 2) | 1) * 2 + qb]);
            const int e = flamia_fmt_block_exponent(a, 0);
            inv[qb] = a > 0.f ? flamia_pow2f(-e) : 0.f;
            dkf[qb] = a > 0.f ? flamia_pow2f(e + ((const int *)row)[32 * qb]) : 0.f;
            dqs[qb] = flamia_f16x2_pow2_neg(e & 1);
        }
        /* codes: dK operand (2 k=32 steps x 4 registers), dQ operand to [query][key] (64-byte swizzle) */
        uint32_t pk[8];
#pragma unroll
        for (int j = 0; j < 8; j++) {
            uint32_t kc[2], qc[2];
            sketch_ds_codes(dpacc + 4 * j, inv[j >> 2], dqs[j >> 2], kc, qc);
            const int qn = 8 * j + 2 * tq, key = wq * 16 + 2 * g;
            *(uint16_t *)(smem + kDS + qn * 64 + (((key >> 4) ^ ((qn >> 1) & 3)) << 4) + (key & 15)) =
                (uint16_t)__byte_perm(qc[0], qc[1], 0x40);
            *(uint16_t *)(smem + kDS + (qn + 1) * 64 + (((key >> 4) ^ (((qn + 1) >> 1) & 3)) << 4) + (key & 15)) =
                (uint16_t)__byte_perm(qc[0], qc[1], 0x51);
            flamia_bwd::put_dk_operand(pk, j, kc);
        }
        fence_proxy_async(); /* sDS -> dQ's wgmma */
        /* dV += P^T dO (4 k=16 steps); dK += 2^M (dS^T Q) per 32-query block, the first under dV */
        reg_fence(pa);
        reg_fence(pk);
        reg_fence(dkacc);
        reg_fence(dvacc);
        wgmma_fence();
        float tk0[64];
        {
            const uint32_t a[4] = {pk[0], pk[1], pk[2], pk[3]};
            if (!K_NO_MMA) wg_e4m3_rs_n128(tk0, a, desc_sw64(smem_u32(buf + kQt)), 0);
            wgmma_commit();
        }
        const uint64_t dDOh = desc_sw128(smem_u32(buf + kDOh));
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
            if (!K_NO_MMA) wg_f16_rs_n128(dvacc, a, desc_advance(dDOh, kk * 32), 1);
        }
        wgmma_commit();
        wgmma_wait<1>();
        reg_fence(tk0);
#pragma unroll
        for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk0[x], dkf[0], dkacc[x]);
        {
            float tk[64];
            const uint32_t a[4] = {pk[4], pk[5], pk[6], pk[7]};
            wgmma_fence();
            if (!K_NO_MMA) wg_e4m3_rs_n128(tk, a, desc_advance(desc_sw64(smem_u32(buf + kQt)), 32), 0);
            wgmma_commit();
            wgmma_wait<0>();
            reg_fence(tk);
#pragma unroll
            for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk[x], dkf[1], dkacc[x]);
        }
        reg_fence(dvacc);
        __syncthreads(); /* dQ's operand holds the four warps' dS */
        /* dQ = dS K over the tile's 64 keys: one chain of two k=32 products per 64-dim half (K^T
         * rows 64 hf..), each half scaled and staged as 2 [64 rows][32 dims] FP32 boxes (128-byte
         * swizzle) in this sub-step's Q, dO and panel regions, which every product has finished
         * reading (dK and dV waited above) */
        const float f0 = row[wq * 16 + g], f1 = row[wq * 16 + g + 8];
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            float dq[32];
            wgmma_fence();
            const uint64_t dDS = desc_sw64(smem_u32(smem + kDS)), dKt = desc_sw64(smem_u32(smem + kKt + hf * 4096));
            if (!K_NO_MMA) wg_e4m3_ss_n64(dq, dDS, dKt, 0);
            if (!K_NO_MMA) wg_e4m3_ss_n64(dq, desc_advance(dDS, 32), desc_advance(dKt, 32), 1);
            wgmma_commit();
            wgmma_wait<0>();
            reg_fence(dq);
#pragma unroll
            for (int x = 0; x < 32; x++) dq[x] *= (x >> 1) & 1 ? f1 : f0;
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const int r = wq * 16 + g + 8 * hh;
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const int c = 8 * (j & 3) + 2 * tq;
                    uint8_t *st = buf + (2 * hf + (j >> 2)) * 8192;
                    *(float2 *)(st + r * 128 + (((c >> 2) ^ (r & 7)) << 4) + (c & 3) * 4) =
                        make_float2(dq[4 * j + 2 * hh], dq[4 * j + 2 * hh + 1]);
                }
            }
        }
        fence_proxy_async();
        if (K_ADDS64) {
            bar_named(1, 128);
            if (tid == 0 && !K_NO_ADDS) {
#pragma unroll
                for (int q = 0; q < 4; q++) tma_reduce_add_3d(&tm_dq64, smem_u32(buf + q * 8192), 32 * q, h, tok0);
                bulk_commit_group();
            }
            continue;
        }
        __syncwarp();
        if (lane == 0 && !K_NO_ADDS) {
#pragma unroll
            for (int q = 0; q < 4; q++) tma_reduce_add_3d(&tm_dq, smem_u32(buf + q * 8192 + wq * 16 * 128), 32 * q, h, tok0 + wq * 16);
            bulk_commit_group();
        }
    }
    sketch_sink(dkacc, dvacc, p.out + (size_t)blockIdx.x * blockDim.x + tid);
}

#ifndef K_NO_MAIN

/* 2-D maps over the codes [T][H 128]: 128 B x 64 rows (128-byte swizzle) and 64 B x 128 rows
 * (64-byte swizzle; the transposed tiles' shape, meaningless data) */
static bool map2d(CUtensorMap *m, const void *base, int T, int row_bytes, int bw, int bh, CUtensorMapSwizzle sw) {
    const cuuint64_t dims[2] = {(cuuint64_t)row_bytes, (cuuint64_t)T};
    const cuuint64_t strides[1] = {(cuuint64_t)row_bytes};
    const cuuint32_t box[2] = {(cuuint32_t)bw, (cuuint32_t)bh}, estr[2] = {1, 1};
    return flamia_encode_tiled()(m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void *>(base), dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* k_sketch [B L]: B documents of L tokens (default 16 x 4096), 16 heads */
int main(int argc, char **argv) {
    const int B = argc > 2 ? atoi(argv[1]) : 16, L = argc > 2 ? atoi(argv[2]) : 4096;
    SketchInputs in;
    if (!sketch_inputs(in, B, 16, L)) return 1;
    CUtensorMap tm64, tmt;
    if (!map2d(&tm64, in.codes, in.T, in.H * 128, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B) ||
        !map2d(&tmt, in.codes, in.T, in.H * 128, 64, 128, CU_TENSOR_MAP_SWIZZLE_64B)) {
        printf("k_sketch: map failed\n");
        return 1;
    }
    CUtensorMap tm_dq64; /* the harness's dQ map with 64-row boxes (K_ADDS64) */
    if (!sketch_dq_map(&tm_dq64, in, 64)) {
        printf("k_sketch: dq64 map failed\n");
        return 1;
    }
    const int ktiles = in.L / 64, grid = in.B * in.H * ktiles;
    float *out;
    cudaMalloc(&out, (size_t)grid * 128 * 4);
    KParams p{in.rows, out, in.T, in.H, ktiles};
    cudaFuncSetAttribute(k_sketch, cudaFuncAttributeMaxDynamicSharedMemorySize, kLaunchBytes);
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_sketch, 128, kLaunchBytes);
    float med, fast;
    cudaError_t err;
    sketch_time(in, [&] { k_sketch<<<grid, 128, kLaunchBytes>>>(tm64, tmt, in.tm_dq, tm_dq64, p); }, med, fast, err);
    const double pairs = sketch_pairs(in); /* 128 x 128 pairs of today's grid: the same problem */
    printf("k_sketch%s%s%s%s %dx%d (16 heads, causal grid of 64-key tiles, %d CTAs, %d an SM, %d B shared): median %.3f ms "
           "(min %.3f), %.2f us a 128x128 tile pair and SM; %s\n",
           K_ONE ? " K_ONE" : "", K_ADDS64 ? " K_ADDS64" : "", K_NO_ADDS ? " K_NO_ADDS" : "", K_NO_MMA ? " K_NO_MMA" : "", B, L, grid, per_sm, kLaunchBytes, med, fast, med * 1e3 * 132 / pairs, cudaGetErrorString(err));
    return 0;
}
#endif
