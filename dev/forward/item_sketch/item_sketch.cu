/*
 * item_sketch.cu - timing skeleton (seventy-sixth session): does giving each consumer warpgroup its
 * own work items hide the forward's item boundary?
 *
 * Today both consumer warpgroups of a CTA take the same item (64 query rows each of one 128-row
 * tile), so their item boundaries (the first tile's S alone and its softmax with nothing under it,
 * the last P V's wait, the epilogue) fall together and the tensor cores idle through both. ncu put
 * that boundary at ~18 % of the consumers' stall samples at 16x4096 and ~49 % at 64x1024 (perf-notes
 * "Forward kernel", seventy-sixth session), and taking instructions off it (v129, v132) bought
 * nothing. With items of their own (FA3's arrangement), one warpgroup's boundary could run under the
 * other's key loop, at the price of a K / V ring a warpgroup (twice the shared memory a stage, so
 * fewer stages) and, with the ping-pong's strict turns kept, a partner that still waits a turn.
 *
 * The loop and its element-wise body are dev/forward/s256_sketch's (sketch_loop.cuh) at 128 keys a
 * tile (S(n+1) issued with P(n) V(n), the softmax under that P V); this adds the item boundary in outline: items of
 * varying length (1 .. NT tiles of 128 keys, the causal triangle's mix), the first tile's S alone,
 * the last P V waited for, then the epilogue: the rows' l by two shuffles, 1 / l, O as BF16 pairs
 * into the warpgroup's 16 KB tile in shared memory, a warpgroup barrier, the tile to global memory
 * by 16-byte stores, and the barrier again. Left out: the mask, Q's loads, the O sum, the frames'
 * checks. The inputs are bounded random E4M3 codes and the results are meaningless; only the times
 * are read.
 *
 * Variants: shared items (today: one ring, both warpgroups release each stage) or own items (a ring
 * a warpgroup, streamed by its own producer thread; warpgroup 1's item lengths are warpgroup 0's
 * shifted by half a period, so the boundaries do not coincide), 2 or 3 stages a ring, the ping-pong
 * on or off (3 stages a ring do not fit beside the O tiles when each warpgroup has its own: 240
 * KB); today's with the epilogue left out (a probe) or in the seventy-sixth session's plain-store
 * form; and v31's order (seventy-seventh session): the next item's first S issued in the last turn
 * with the last P V, so that it runs under the epilogue, with and without the epilogue. Every variant
 * does the same tiles: each length of the period, periods times, a warpgroup.
 *
 * Usage: item_sketch [NT = 32] [periods = 2] [chain = 0]: chain dependent L2 loads in the producer
 * before each item's first tile (the real producer's per-item latency in outline: ~4 round trips);
 * each CTA's warpgroups take periods x NT items each of
 * lengths 1 .. NT tiles (NT = 32: 4,096-token documents' mix; 8: 1,024), on one CTA an SM; 2 warm-up
 * launches, the median of 10; TFLOP/s counted as the forward does (4 x 64 rows x 128 keys x 128 a
 * warpgroup's tile). Registers without a GPU: sh dev/forward/item_sketch/regs.sh.
 */
#include <cuda_bf16.h>

#include "sketch_loop.cuh"
#include "sketch_timing.h"

constexpr int kTileBytes = Cfg<128>::STAGE; /* K [128][128 B] then V^T [128][128 B] */
constexpr int kOTile = 64 * 128 * 2;        /* a warpgroup's O tile, BF16 */

/* item i's length in tiles for warpgroup cw: 1 .. NT over each period of NT items (13 is prime to
 * 8 and 32); own items shift warpgroup 1 by half a period */
__host__ __device__ inline int item_len(int i, int cw, int nt, bool own) {
    return 1 + ((i + (own && cw == 1 ? nt / 2 : 0)) * 13) % nt;
}
/* the tiles of a warpgroup's items (the same for both: each takes every length of the period) */
__host__ __device__ inline int item_tiles(int items, int nt, bool own) {
    int total = 0;
    for (int i = 0; i < items; i++) total += item_len(i, 0, nt, own);
    return total;
}

/* the epilogue's forms: none (a probe), plain (O as BF16 pairs into the tile, 4-byte stores, 8-way
 * bank conflicts; the seventy-sixth session's rows), tma (forward.cu's since v131: stmatrix into a
 * tile of two 128-byte-swizzled panels, then one thread's bulk store of the tile) */
enum Epi { EPI_NONE, EPI_PLAIN, EPI_TMA };

/* a thread's O as BF16 pairs, scaled by its rows' 1 / l */
__device__ __forceinline__ uint32_t o_pair(const float (&oacc)[64], int i, float inv) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(oacc[i] * inv, oacc[i + 1] * inv);
    return *(const uint32_t *)&v;
}

template <bool OWN, int S, bool PP, int EPI = EPI_TMA, bool AHEAD = false>
__global__ void __launch_bounds__(384, 1) item_sketch(const uint8_t *__restrict__ src, int nsrc, int nt, int items,
                                                      uint8_t *out, const int *hops, int chain) {
    using C = Cfg<128>;
    constexpr int RINGS = OWN ? 2 : 1;
    extern __shared__ __align__(1024) uint8_t smem[];
    uint8_t *const sQ = smem, *const sStg = smem + 16384;
    uint8_t *const sO = sStg + RINGS * S * kTileBytes;
    float2 *const sCol = (float2 *)(sO + 2 * kOTile);
    uint64_t *const sFull = (uint64_t *)(sCol + RINGS * S * C::NB), *const sEmpty = sFull + RINGS * S;
    const int wg = threadIdx.x / 128, tid = threadIdx.x & 127;
    if (threadIdx.x == 0)
        for (int s = 0; s < RINGS * S; s++) {
            mbar_init(smem_u32(&sFull[s]), 1);
            mbar_init(smem_u32(&sEmpty[s]), OWN ? 128 : 256);
        }
    sketch_fill_inputs(sQ, sCol, RINGS * S * C::NB);
    fence_proxy_async();
    __syncthreads();
    auto ring_of = [&](int r) {
        return SketchRing<128, S>{sStg + r * S * kTileBytes, sFull + r * S, sEmpty + r * S, sCol + r * S * C::NB};
    };
    if (wg == 0) {
        setmaxnreg_dec<24>();
        const int r = tid / 32; /* warp r streams ring r */
        /* before an item's first tile: `chain` dependent loads from L2 (hops[] holds zeros), the
         * real producer's per-item chain in outline (the document search, its bounds, the row
         * constants: ~4 global round trips before the item's first tile and record are out) */
        int item = 0, next_start = 0;
        auto item_chain = [&](int g) {
            int idx = 0;
            if (g == next_start) {
                for (int c = 0; c < chain; c++) idx = __ldcg(hops + idx + c);
                next_start += item_len(item++, r, nt, OWN);
            }
            return idx;
        };
        if ((tid & 31) == 0 && r < RINGS)
            ring_of(r).stream(src, nsrc, item_tiles(items, nt, OWN), blockIdx.x * 7 + 3 * r, item_chain);
        return;
    }
    setmaxnreg_inc<240>();
    const int cw = wg - 1;
    const int warp = tid / 32, lane = tid & 31, gq = lane >> 2, tq = lane & 3;
    const uint32_t sQa = smem_u32(sQ) + cw * 8192;
    const SketchRing<128, S> kv = ring_of(OWN ? cw : 0);
    uint8_t *const oTile = sO + cw * kOTile;
    uint8_t *const oOut = out + (size_t)(blockIdx.x * 2 + cw) * kOTile;
    if (PP && cw == 1) bar_named_arrive(1, 256);
    const float crow[2] = {0.1275f * (1.f + 0.01f * (tid & 7)), 0.1275f};
    int g = 0;
    float sink = 0.f, sacc[C::NACC];
    if (AHEAD) sketch_first_s<128, S, PP>(sacc, kv, 0, sQa, cw);
    for (int item = 0; item < items; item++) {
        const int ntiles = item_len(item, cw, nt, OWN);
        float oacc[64], l_run[2];
        sketch_item<128, S, true, PP, AHEAD>(oacc, l_run, sacc, kv, g, ntiles, sQa, cw, crow, item + 1 < items);
        g += ntiles;
        if constexpr (EPI == EPI_NONE) { /* a probe: no epilogue, only a sum that keeps O live */
            float t = l_run[0] + l_run[1];
#pragma unroll
            for (int i = 0; i < 64; i++) t += oacc[i];
            sink += t;
        } else {
            /* epilogue: the rows' l over the quad, 1 / l, O as BF16 into the tile, the tile out */
            float inv[2];
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                float l = l_run[hh];
                l += __shfl_xor_sync(0xffffffffu, l, 1);
                l += __shfl_xor_sync(0xffffffffu, l, 2);
                inv[hh] = 1.f / l;
            }
            if constexpr (EPI == EPI_PLAIN) {
                bar_named(4 + cw, 128); /* the previous item's tile has been read */
#pragma unroll
                for (int j = 0; j < 16; j++)
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        const int row = warp * 16 + gq + 8 * hh, c = 8 * j + 2 * tq;
                        *(uint32_t *)(oTile + (row * 128 + c) * 2) = o_pair(oacc, 4 * j + 2 * hh, inv[hh]);
                    }
                bar_named(4 + cw, 128);
#pragma unroll
                for (int i = 0; i < 8; i++) ((int4 *)oOut)[i * 128 + tid] = ((const int4 *)oTile)[i * 128 + tid];
            } else {
                if (tid == 0) bulk_wait_read_all(); /* the previous item's store has read the tile */
                bar_named(4 + cw, 128);
                const int mk = lane >> 3, mrow = warp * 16 + (mk & 1) * 8 + (lane & 7);
#pragma unroll
                for (int j = 0; j < 16; j += 2) {
                    const int chunk = j + (mk >> 1);
                    stmatrix_x4(smem_u32(oTile + (chunk >> 3) * 8192 + mrow * 128 + (((chunk & 7) ^ (mrow & 7)) << 4)),
                                o_pair(oacc, 4 * j, inv[0]), o_pair(oacc, 4 * j + 2, inv[1]), o_pair(oacc, 4 * j + 4, inv[0]),
                                o_pair(oacc, 4 * j + 6, inv[1]));
                }
                fence_proxy_async(); /* stmatrix's writes -> the bulk store's reads */
                bar_named(4 + cw, 128);
                if (tid == 0) {
                    bulk_store(oOut, smem_u32(oTile), kOTile);
                    bulk_commit_group();
                }
            }
        }
    }
    if (AHEAD) wgmma_wait<0>(); /* the stale S after the last item */
    if (EPI == EPI_TMA && tid == 0) bulk_wait_all();
    if (EPI == EPI_NONE) ((float *)oOut)[tid] = sink;
}

template <bool OWN, int S, bool PP, int EPI = EPI_TMA, bool AHEAD = false>
static void run_items(const char *name, const uint8_t *src, int nsrc, int nt, int items, uint8_t *out, int sms,
                      const int *hops, int chain) {
    constexpr int RINGS = OWN ? 2 : 1;
    const size_t smem = 16384 + (size_t)RINGS * S * kTileBytes + 2 * kOTile + RINGS * S * Cfg<128>::NB * 8 +
                        2 * RINGS * S * 8;
    auto k = item_sketch<OWN, S, PP, EPI, AHEAD>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const double med = sketch_median_ms([&]() { k<<<sms, 384, smem>>>(src, nsrc, nt, items, out, hops, chain); });
    const double flop = 4.0 * 64 * 128 * 128 * (double)item_tiles(items, nt, OWN) * 2 * sms;
    printf("| %-34s | %2d | %s | %d | %3s | %6.1f KB | %8.3f | %6.0f |\n", name, nt, OWN ? "own   " : "shared", S,
           PP ? "on" : "off", smem / 1024.0, med, flop / med * 1e-9);
}

int main(int argc, char **argv) {
    const int nt = argc > 1 ? atoi(argv[1]) : 32, periods = argc > 2 ? atoi(argv[2]) : 2;
    const int chain = argc > 3 ? atoi(argv[3]) : 0;
    if (nt < 2 || nt % 2 || periods < 1 || chain < 0 || chain > 64) {
        printf("usage: item_sketch [NT: an even count >= 2] [periods >= 1] [chain: 0 .. 64]\n");
        return 2;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9) {
        printf("item_sketch: no sm_90 GPU\n");
        return 77;
    }
    const int sms = prop.multiProcessorCount, items = periods * nt;
    const int nsrc = 128; /* source tiles of 32 KB, 4 MB: L2-resident, as the forward's K / V mostly are */
    const size_t bytes = (size_t)nsrc * kTileBytes;
    std::vector<uint8_t> h(bytes);
    for (size_t i = 0; i < bytes; i++) h[i] = (uint8_t)((((i * 2654435761u) >> 13) & 0x37) | ((i * 40503u) & 0x80));
    uint8_t *src, *out;
    CK(cudaMalloc(&src, bytes));
    CK(cudaMalloc(&out, (size_t)sms * 2 * kOTile));
    CK(cudaMemcpy(src, h.data(), bytes, cudaMemcpyHostToDevice));
    int *hops; /* zeros: the producer's dependent loads before each item (chain) */
    CK(cudaMalloc(&hops, 128 * sizeof(int)));
    CK(cudaMemset(hops, 0, 128 * sizeof(int)));
    printf("%s, %d SMs; %d items a warpgroup of 1..%d tiles of 128 keys, %d dependent loads before each item's first "
           "tile (ms: median of 10 launches)\n",
           prop.name, sms, items, nt, chain);
    printf("| variant | NT | items | stages | ping-pong | smem | ms | TFLOP/s |\n|---|---|---|---|---|---|---|---|\n");
    run_items<false, 3, true>("today: shared items, 3 stages", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 2, true>("shared items, 2 stages", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 3, false>("shared items, free-running", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<true, 2, true>("own items, 2 stages a ring", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<true, 2, false>("own items, free-running", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 3, true, EPI_NONE>("today without the epilogue (probe)", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 3, true, EPI_PLAIN>("today, plain-store epilogue (76th)", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 3, true, EPI_TMA, true>("next S ahead, under the epilogue", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 3, true, EPI_NONE, true>("next S ahead, no epilogue (probe)", src, nsrc, nt, items, out, sms, hops, chain);
    run_items<false, 3, true>("today again (drift check)", src, nsrc, nt, items, out, sms, hops, chain);
    return 0;
}
