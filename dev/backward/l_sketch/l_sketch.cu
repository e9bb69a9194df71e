/*
 * l_sketch.cu - the skeleton of the dQ half of a split backward (sixty-fourth session): the main
 * kernel computes S, P, dP, dS, dK and dV as today but writes each warpgroup's dQ operand (its
 * dS codes, [64 queries][64 keys], the pair fold as today) and the 64 row factors 2^F scale to
 * global memory (probe dev/backward/v119_ds_out.patch) instead of computing dQ; this kernel then
 * streams them back per query tile and computes dQ = sum over key pairs of 2^F (dS' K)_pair in
 * registers, with no FP32 accumulator in global memory, no reduce-adds and no bwd_dq_out pass:
 * FlashAttention-2's split without its recomputation of S, P, dP and dS, paid in bytes instead.
 * NOT a kernel of the library and its results are meaningless: the loop of the planned kernel on
 * bounded random codes, to time it over 16x4096's causal grid.
 *
 * CTA = (query tile m of 128 queries, head, document), (document, head) slowest, m descending (L_LPT=1: longest first over all; 384
 * threads: warpgroup 0 a producer (one thread: TMA), warpgroups 1 and 2 consume 64 queries each.
 * Step s = 0 .. 2 (m + 1) - 1 covers key pair s (keys 64 s .. 64 s + 63 of the document): a stage
 * holds the dS tile [128 queries][64 B] (8 KB, 64-byte swizzle), the K^T tile [128 dims][64 B]
 * (8 KB) and the 128 row factors (512 B). A consumer: m64n128k32 x 2 (k = the pair's 64 keys)
 * into a partial, then acc += partial x factor(row) (64 FFMA), the stage released.
 * Bytes from DRAM a step and CTA: 8.5 KB (the K^T tile is shared by every query tile of the
 * document and comes from L2). At 16x4096, 16 heads: 2.2 GB of dS codes and 0.14 GB of
 * factors, so the kernel is bound by DRAM (~0.65 ms at 3.35 TB/s, ~0.55 ms at 4.2).
 * The workspace here is a dense [doc][head][m][n][pair] square (4.3 GB at 16x4096; only the
 * causal half is read); a real one would be the triangle (2.2 GB), or chunks of it.
 * Measured (sixty-fourth session, H100, dev/sessions/sixty-fourth_split*.sh; docs/perf-notes.md "Backward
 * kernel"): 16x4096 1.63 ms longest first (L_LPT=1: K^T re-read from DRAM, 4.61 GB read), 1.054 with
 * (document, head) slowest (2.49 GB, the minimum), 1.25 round-robin persistent, 1.02 counter-claimed,
 * 0.905-0.915 with L_ROW128 (2.57 TB/s, 77 % of the card's 3.35); 64x1024 0.360 and 16x1024 0.104 ms
 * (L_ROW128 + L_PERSIST=2). With the main kernel's half (v119 @two): 0.867x of today's main kernel +
 * bwd_dq_out at 16x4096, 0.858x at 64x1024; the rule asked 0.85: not built as the default dQ.
 * Build (device or here): nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a
 *   --expt-relaxed-constexpr -Ikernels/include -Ikernels/formats -Ikernels/sm90 -Xptxas -v
 *   dev/backward/l_sketch/l_sketch.cu -o dev/backward/bin/l_sketch -lcuda [-DL_NO_MMA=1]
 * Run: dev/backward/bin/l_sketch [B L] (default 16 4096).
 */
#ifndef L_STAGES
#define L_STAGES 6
#endif
#ifndef L_LPT /* 1: the grid longest first over every (document, head); 0: (document, head) slowest, so
                 that the CTAs resident together share a few K^T tiles in L2 */
#define L_LPT 0
#endif
#ifndef L_PERSIST /* 1: a persistent grid, one CTA an SM, the stages running on across items, items
                     round-robin; 2: the same with items claimed from a global counter (in list order) */
#define L_PERSIST 0
#endif
#ifndef L_ROW128 /* 1: a step is a whole 128-key tile: dS [128 queries][128 B] and K^T [128 dims][128 B],
                    128-byte swizzle (the main kernel's two warpgroups' stores side by side in one
                    128-byte row), two chains of two k=32 products a step; 0: a 64-key pair, 64-byte rows */
#define L_ROW128 0
#endif
#ifndef L_NO_MMA /* probe: no wgmma (the stream of bytes alone) */
#define L_NO_MMA 0
#endif
#include <cuda.h>
#include <cuda_bf16.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sm90_ptx.cuh"
#include "sm90_tma_host.cuh"
#include "../shape_bench/wgmma_shapes.cuh"

using namespace flamia_sm90;

struct LParams {
    const float *fac;  /* [tile][128] row factors */
    __nv_bfloat16 *dq; /* [T][H][128] */
    int *counter;      /* L_PERSIST 2: the next item of the list, zero before the launch */
    int docs, H, nt, L;
    float scale;
};

/* a stage: dS, K^T, the row factors (+ (L_PERSIST 2) the item), rounded to 1 KB */
constexpr int kDsB = L_ROW128 ? 16384 : 8192, kFacB = L_ROW128 ? 1024 : 512;
constexpr int kStageBytes = L_ROW128 ? 34816 : 17408;
constexpr int kHdr = 2 * kDsB + kFacB; /* L_PERSIST 2: the stage's item (-1: no more) */
constexpr int kBarOff = L_STAGES * kStageBytes;
constexpr int kSmem = kBarOff + 2 * L_STAGES * 8 + 1024;

/* item i of the grid's list -> query tile m, head, document (L_LPT's order or (document, head) slowest) */
struct LItem {
    int m, h, doc;
};
__device__ __forceinline__ LItem item_of(int i, const LParams &p) {
    const int per_m = p.docs * p.H;
    const int m = L_LPT ? p.nt - 1 - i / per_m : p.nt - 1 - i % p.nt;
    const int r = L_LPT ? i % per_m : i / p.nt;
    return {m, r % p.H, r / p.H};
}

__global__ void __launch_bounds__(384, 1) l_sketch(const __grid_constant__ CUtensorMap tm_ds,
                                                   const __grid_constant__ CUtensorMap tm_kt, const LParams p) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    uint64_t *full = (uint64_t *)(smem + kBarOff), *empty = full + L_STAGES;
    const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, wq = wtid >> 5, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3;
    /* L_PERSIST: one CTA an SM takes items blockIdx.x, + gridDim.x, ...; the stages run on across
     * items (a global step count gs), so the next item's loads go out under this one's end */
    const int nitems = p.docs * p.H * p.nt, stride = L_PERSIST ? (int)gridDim.x : nitems;
    if (tid == 0) {
        for (int s = 0; s < L_STAGES; s++) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), 8); /* lane 0 of each consumer warp */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) {
        if (tid == 0) {
            int gs = 0;
            for (int i = L_PERSIST == 2 ? atomicAdd(p.counter, 1) : (int)blockIdx.x; i < nitems;
                 i = L_PERSIST == 2 ? atomicAdd(p.counter, 1) : i + stride) {
                const LItem it = item_of(i, p);
                /* step s: tile0 + s (L_ROW128: 128-key tiles, else 64-key pairs) */
                const size_t tile0 = ((size_t)(it.doc * p.H + it.h) * p.nt + it.m) * p.nt * (L_ROW128 ? 1 : 2);
                for (int s = 0; s < (L_ROW128 ? 1 : 2) * (it.m + 1); s++, gs++) {
                    const int st = gs % L_STAGES;
                    if (gs >= L_STAGES) mbar_wait(smem_u32(&empty[st]), ((gs / L_STAGES) & 1) ^ 1);
                    uint8_t *b = smem + st * kStageBytes;
                    const uint32_t fb = smem_u32(&full[st]);
                    if (L_PERSIST == 2) *(int *)(b + kHdr) = i; /* released by the arrive below */
                    mbar_expect_tx(fb, 2 * kDsB + kFacB);
                    tma_load_2d(smem_u32(b), &tm_ds, 0, (int)((tile0 + s) * 128), fb);
                    tma_load_3d(smem_u32(b + kDsB), &tm_kt, it.doc * p.L + s * (L_ROW128 ? 128 : 64), 0, it.h, fb);
                    bulk_load(smem_u32(b + 2 * kDsB), p.fac + (tile0 + s) * (kFacB / 4), kFacB, fb);
                }
            }
            if (L_PERSIST == 2) { /* the end, as a stage of its own */
                const int st = gs % L_STAGES;
                if (gs >= L_STAGES) mbar_wait(smem_u32(&empty[st]), ((gs / L_STAGES) & 1) ^ 1);
                *(int *)(smem + st * kStageBytes + kHdr) = -1;
                mbar_arrive(smem_u32(&full[st]));
            }
        }
        return;
    }
    const int c = wg - 1;
    int gs = 0;
    for (int i = blockIdx.x;; i += stride) {
        if (L_PERSIST == 2) { /* the item the producer put in this stage */
            mbar_wait(smem_u32(&full[gs % L_STAGES]), (gs / L_STAGES) & 1);
            i = *(volatile int *)(smem + (gs % L_STAGES) * kStageBytes + kHdr);
            if (i < 0) break;
        } else if (i >= nitems) {
            break;
        }
        const LItem it = item_of(i, p);
        float acc[64];
#pragma unroll
        for (int x = 0; x < 64; x++) acc[x] = 0.f;
        for (int s = 0; s < (L_ROW128 ? 1 : 2) * (it.m + 1); s++, gs++) {
            const int st = gs % L_STAGES;
            mbar_wait(smem_u32(&full[st]), (gs / L_STAGES) & 1);
            uint8_t *b = smem + st * kStageBytes;
            if (L_ROW128) { /* two chains (the two key pairs, each its own row factors) */
#pragma unroll
                for (int x = 0; x < 2; x++) {
                    float part[64];
#pragma unroll
                    for (int y = 0; y < 64; y++) part[y] = 0.f;
                    wgmma_fence();
                    const uint64_t da = desc_sw128(smem_u32(b + c * 8192)), db = desc_sw128(smem_u32(b + kDsB));
                    if (!L_NO_MMA) {
                        wg_e4m3_ss_n128(part, desc_advance(da, 64 * x), desc_advance(db, 64 * x), 0);
                        wg_e4m3_ss_n128(part, desc_advance(da, 64 * x + 32), desc_advance(db, 64 * x + 32), 1);
                    }
                    wgmma_commit();
                    wgmma_wait<0>();
                    reg_fence(part);
                    const float *f = (const float *)(b + 2 * kDsB) + x * 128 + c * 64;
                    const float f0 = f[wq * 16 + g], f1 = f[wq * 16 + g + 8];
                    if (x == 1) {
                        __syncwarp();
                        if (lane == 0) mbar_arrive(smem_u32(&empty[st]));
                    }
#pragma unroll
                    for (int y = 0; y < 64; y++) acc[y] = fmaf(part[y], (y >> 1) & 1 ? f1 : f0, acc[y]);
                }
                continue;
            }
            float part[64];
#pragma unroll
            for (int x = 0; x < 64; x++) part[x] = 0.f;
            wgmma_fence();
            const uint64_t da = desc_sw64(smem_u32(b + c * 4096)), db = desc_sw64(smem_u32(b + 8192));
            if (!L_NO_MMA) {
                wg_e4m3_ss_n128(part, da, db, 0);
                wg_e4m3_ss_n128(part, desc_advance(da, 32), desc_advance(db, 32), 1);
            }
            wgmma_commit();
            wgmma_wait<0>();
            reg_fence(part);
            const float *f = (const float *)(b + 16384) + c * 64;
            const float f0 = f[wq * 16 + g], f1 = f[wq * 16 + g + 8];
            __syncwarp();
            if (lane == 0) mbar_arrive(smem_u32(&empty[st]));
#pragma unroll
            for (int x = 0; x < 64; x++) acc[x] = fmaf(part[x], (x >> 1) & 1 ? f1 : f0, acc[x]);
        }
        /* BF16 dQ out: rows g, g + 8 of the warp's 16, columns 8 j + 2 tq */
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const int tok = it.doc * p.L + it.m * 128 + c * 64 + wq * 16 + g + 8 * hh;
            __nv_bfloat16 *dst = p.dq + ((size_t)tok * p.H + it.h) * 128 + 2 * tq;
#pragma unroll
            for (int j = 0; j < 16; j++)
                *(__nv_bfloat162 *)(dst + 8 * j) =
                    __floats2bfloat162_rn(acc[4 * j + 2 * hh] * p.scale, acc[4 * j + 2 * hh + 1] * p.scale);
        }
    }
}

#ifndef L_NO_MAIN
__global__ void fill_codes(uint8_t *a, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        a[i] = (uint8_t)(((i * 2654435761u) >> 13) & 0x37); /* bounded E4M3 codes, no NaN */
}
__global__ void fill_factors(float *a, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        a[i] = (i & 7) ? 0.5f : 0.25f;
}

static bool map_tiled(CUtensorMap *m, CUtensorMapDataType t, int rank, void *base, const cuuint64_t *dims,
                      const cuuint64_t *strides, const cuuint32_t *box, CUtensorMapSwizzle sw) {
    const cuuint32_t estr[3] = {1, 1, 1};
    return flamia_encode_tiled() && flamia_encode_tiled()(m, t, rank, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* l_sketch [B L]: B documents of L tokens (default 16 x 4096), 16 heads, causal */
int main(int argc, char **argv) {
    const int B = argc > 2 ? atoi(argv[1]) : 16, L = argc > 2 ? atoi(argv[2]) : 4096, H = 16, nt = L / 128, T = B * L;
    const size_t tiles = (size_t)B * H * nt * nt * 2, ds_bytes = tiles * 8192;
    uint8_t *ds, *kt;
    float *fac;
    __nv_bfloat16 *dq;
    if (cudaMalloc(&ds, ds_bytes) != cudaSuccess || cudaMalloc(&fac, tiles * 512) != cudaSuccess ||
        cudaMalloc(&kt, (size_t)H * 128 * T) != cudaSuccess || cudaMalloc(&dq, (size_t)T * H * 128 * 2) != cudaSuccess) {
        printf("l_sketch: allocation failed (%.1f GB of dS codes)\n", ds_bytes / 1e9);
        return 1;
    }
    fill_codes<<<1024, 256>>>(ds, ds_bytes);
    fill_codes<<<1024, 256>>>(kt, (size_t)H * 128 * T);
    fill_factors<<<1024, 256>>>(fac, tiles * 128);
    CUtensorMap tm_ds, tm_kt;
    const int row = L_ROW128 ? 128 : 64; /* bytes a dS row: a 128-key tile or a 64-key pair */
    const cuuint64_t dd[2] = {(cuuint64_t)row, (cuuint64_t)tiles * 128 * 64 / row}, ds_str[1] = {(cuuint64_t)row};
    const cuuint32_t dbox[2] = {(cuuint32_t)row, 128};
    const cuuint64_t kd[3] = {(cuuint64_t)T, 128, (cuuint64_t)H}, k_str[2] = {(cuuint64_t)T, (cuuint64_t)T * 128};
    const cuuint32_t kbox[3] = {(cuuint32_t)row, 128, 1};
    const CUtensorMapSwizzle sw = L_ROW128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    if (!map_tiled(&tm_ds, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, ds, dd, ds_str, dbox, sw) ||
        !map_tiled(&tm_kt, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, kt, kd, k_str, kbox, sw)) {
        printf("l_sketch: tensor map failed\n");
        return 1;
    }
    int *counters;
    cudaMalloc(&counters, 16 * sizeof(int));
    cudaMemset(counters, 0, 16 * sizeof(int));
    LParams p{fac, dq, counters, B, H, nt, L, 0.0883883f};
    cudaFuncSetAttribute(l_sketch, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int grid = L_PERSIST ? sms : B * H * nt;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> t;
    for (int r = 0; r < 12; r++) {
        p.counter = counters + r;
        cudaEventRecord(e0);
        l_sketch<<<grid, 384, kSmem>>>(tm_ds, tm_kt, p);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0.f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= 2) t.push_back(ms);
    }
    const cudaError_t err = cudaGetLastError();
    std::sort(t.begin(), t.end());
    /* the layouts checked (not the timing): CTA (document 0, head 0, last query tile) against the
     * host's sum over its key pairs of factor x (dS K), from the same buffers */
    double worst = 0.0;
    if (err == cudaSuccess) {
        const int m = nt - 1, ns = 2 * nt;
        const size_t t0 = (size_t)m * nt * 2; /* 64-key pair tile of (doc 0, head 0, m, n = 0, pair 0); the same
                                                 bytes are L_ROW128's 128-key tiles from (size_t)m * nt */
        std::vector<uint8_t> hds((size_t)ns * 8192), hkt((size_t)128 * T);
        std::vector<float> hf((size_t)ns * 128);
        std::vector<__nv_bfloat16> hq((size_t)128 * H * 128);
        cudaMemcpy(hds.data(), ds + t0 * 8192, hds.size(), cudaMemcpyDeviceToHost);
        cudaMemcpy(hkt.data(), kt, hkt.size(), cudaMemcpyDeviceToHost); /* head 0: [128 dims][T] */
        cudaMemcpy(hf.data(), fac + t0 * 128, hf.size() * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(hq.data(), dq + (size_t)m * 128 * H * 128, hq.size() * 2, cudaMemcpyDeviceToHost);
        auto dec = [](uint8_t c) { /* E4M3 */
            const int e = (c >> 3) & 15, mt = c & 7;
            const float v = e ? ldexpf(1.f + mt / 8.f, e - 7) : ldexpf(mt / 8.f, -6);
            return c & 0x80 ? -v : v;
        };
        for (int r = 0; r < 128; r++)
            for (int d = 0; d < 128; d++) {
                double acc = 0.0;
                for (int s = 0; s < ns; s++) {
                    double part = 0.0;
                    /* pair s: keys 64 s.. of the document; L_ROW128: row r of tile s / 2 holds pair s in bytes 64 (s & 1).. */
                    const size_t dsb = L_ROW128 ? (size_t)(s >> 1) * 16384 + r * 128 + 64 * (s & 1) : (size_t)s * 8192 + r * 64;
                    const size_t fi = L_ROW128 ? (size_t)(s >> 1) * 256 + (s & 1) * 128 + r : (size_t)s * 128 + r;
                    for (int k = 0; k < 64; k++) part += (double)dec(hds[dsb + k]) * dec(hkt[(size_t)d * T + s * 64 + k]);
                    acc += part * hf[fi];
                }
                const double got = __bfloat162float(hq[((size_t)r * H) * 128 + d]), want = acc * p.scale;
                worst = std::max(worst, fabs(got - want) / std::max(fabs(want), 1e-30));
            }
    }
    const double steps = (double)B * H * nt * (nt + 1); /* sum over CTAs of 2 (m + 1) */
    const double dram = steps * (8192 + 512), flops = steps * 2.0 * 128 * 128 * 64;
    printf("l_sketch%s%s%s%s %dx%d (16 heads, causal, %d CTAs, %d stages, %d B shared): median %.3f ms (min %.3f); dS + factors "
           "%.2f GB = %.2f TB/s; dQ product %.0f TFLOP/s; layout check max rel err %.2e (%s); %s\n",
           L_NO_MMA ? " L_NO_MMA" : "", L_LPT ? " L_LPT" : "", L_PERSIST == 2 ? " L_PERSIST=2" : L_PERSIST ? " L_PERSIST" : "",
           L_ROW128 ? " L_ROW128" : "", B, L, grid, L_STAGES, kSmem, t[t.size() / 2], t[0], dram / 1e9,
           dram / (t[t.size() / 2] * 1e-3) / 1e12, flops / (t[t.size() / 2] * 1e-3) / 1e12, worst,
           L_NO_MMA ? "no MMA: not meaningful" : worst < 1e-2 ? "ok" : "FAIL", cudaGetErrorString(err));
    return err == cudaSuccess && (L_NO_MMA || worst < 1e-2) ? 0 : 1;
}
#endif
