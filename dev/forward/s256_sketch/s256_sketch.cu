/*
 * s256_sketch.cu - timing skeleton (seventy-first session): the forward's consumer loop at 128 keys
 * a tile (today's shape: S in 64 registers a thread) against 256 keys a tile (S = Q K^T as
 * m64n256k32 products, 128 registers), each with or without the overlap inside a warpgroup (OVL:
 * S(n+1) = Q K^T issued with O += P(n) V(n) and the softmax of S(n+1) under that P V, as
 * forward.cu; without it P V(n) is issued and completes before S(n+1) is issued, so one set of P
 * registers serves and S, O and P are never in flight together) and with or without the warpgroups' ping-pong (PP: named barriers order the two
 * consumers' wgmma issue, as forward.cu's sched_wait / sched_done).
 *
 * Warp-specialized as forward.cu: warpgroup 0 is the producer (one thread streams K and V^T tiles
 * into an S-stage ring by bulk copies on full / empty mbarriers), warpgroups 1 and 2 consume 64
 * query rows each. The element-wise body is the forward's unmasked mxfp8 tile in outline, the same
 * code at both widths: a column factor per 32-key block folded into the row's factor, block maxima,
 * an integer frame per tile (ceil of the row maximum), ex2(t) 2^-M, l by FFMA, E4M3 pairs packed as
 * the P V A fragment, O rescaled where the frame moved. Left out at both widths: the mask, the item
 * boundary (Q loads, masked first tile, epilogue), the O sum, the permuted K rows. The inputs are
 * bounded random E4M3 codes and the results are meaningless; only the times are read.
 *
 * Usage: s256_sketch [ntiles128 = 32] [items a CTA = 16]: every variant on 132 x 1 CTAs, each CTA
 * `items` items of ntiles128 x 128 keys (equal multiply-adds at both widths), 2 warm-up launches,
 * the median of 10; TFLOP/s as the forward counts them (4 x 128 rows x keys x 128 a tile).
 * Registers without a GPU: sh dev/forward/s256_sketch/regs.sh.
 */
#include "sketch_loop.cuh"
#include "sketch_timing.h"

template <int BN, int S, bool OVL, bool PP>
__global__ void __launch_bounds__(384, 1) s256_sketch(const uint8_t *__restrict__ src, int nsrc, int ntiles, int items,
                                                      float *out) {
    using C = Cfg<BN>;
    extern __shared__ __align__(1024) uint8_t smem[];
    uint8_t *const sQ = smem, *const sStg = smem + 16384;
    float2 *const sCol = (float2 *)(sStg + S * C::STAGE);
    uint64_t *const sFull = (uint64_t *)(sCol + S * C::NB), *const sEmpty = sFull + S;
    const int wg = threadIdx.x / 128, tid = threadIdx.x & 127;
    if (threadIdx.x == 0)
        for (int s = 0; s < S; s++) {
            mbar_init(smem_u32(&sFull[s]), 1);
            mbar_init(smem_u32(&sEmpty[s]), 256);
        }
    sketch_fill_inputs(sQ, sCol, S * C::NB);
    fence_proxy_async();
    __syncthreads();
    const SketchRing<BN, S> ring = {sStg, sFull, sEmpty, sCol};
    if (wg == 0) {
        setmaxnreg_dec<24>();
        if (tid == 0) ring.stream(src, nsrc, items * ntiles, blockIdx.x * 7);
        return;
    }
    setmaxnreg_inc<240>();
    const int cw = wg - 1;
    const uint32_t sQa = smem_u32(sQ) + cw * 8192;
    if (PP && cw == 1) bar_named_arrive(1, 256);
    const float crow[2] = {0.1275f * (1.f + 0.01f * (tid & 7)), 0.1275f};
    float sink = 0.f;
    for (int item = 0; item < items; item++) {
        float oacc[64], l_run[2], sacc[Cfg<BN>::NACC];
        sketch_item<BN, S, OVL, PP>(oacc, l_run, sacc, ring, item * ntiles, ntiles, sQa, cw, crow);
        float s = l_run[0] + l_run[1];
#pragma unroll
        for (int i = 0; i < 64; i++) s += oacc[i];
        sink += s;
    }
    out[blockIdx.x * 256 + cw * 128 + tid] = sink;
}

template <int BN, int S, bool OVL, bool PP>
static void run(const char *name, const uint8_t *src, int nsrc, int ntiles128, int items, float *out, int sms) {
    using C = Cfg<BN>;
    const int ntiles = ntiles128 * 128 / BN;
    const size_t smem = 16384 + (size_t)S * C::STAGE + S * C::NB * 8 + 2 * S * 8;
    auto k = s256_sketch<BN, S, OVL, PP>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    const double med = sketch_median_ms([&]() { k<<<sms, 384, smem>>>(src, nsrc, ntiles, items, out); });
    const double flop = 4.0 * 128 * 128 * 128 * (double)ntiles128 * items * sms;
    printf("| %-28s | %3d | %d | %3s | %3s | %8.3f | %6.0f |\n", name, BN, S, OVL ? "on" : "off", PP ? "on" : "off", med,
           flop / med * 1e-9);
}

int main(int argc, char **argv) {
    const int ntiles128 = argc > 1 ? atoi(argv[1]) : 32, items = argc > 2 ? atoi(argv[2]) : 16;
    if (ntiles128 < 2 || ntiles128 % 2) {
        printf("ntiles128: an even count >= 2\n");
        return 2;
    }
    int dev = 0, sms = 0;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess || prop.major != 9) {
        printf("s256_sketch: no sm_90 GPU\n");
        return 77;
    }
    sms = prop.multiProcessorCount;
    const int nsrc = 64; /* source tiles of 2 x 256 x 128 B, 4 MB: L2-resident, as the forward's K / V mostly are */
    const size_t bytes = (size_t)nsrc * 2 * 256 * 128;
    std::vector<uint8_t> h(bytes);
    for (size_t i = 0; i < bytes; i++) h[i] = (uint8_t)((((i * 2654435761u) >> 13) & 0x37) | ((i * 40503u) & 0x80));
    uint8_t *src;
    float *out;
    CK(cudaMalloc(&src, bytes));
    CK(cudaMalloc(&out, (size_t)sms * 256 * 4));
    CK(cudaMemcpy(src, h.data(), bytes, cudaMemcpyHostToDevice));
    printf("%s, %d SMs; %d items a CTA of %d keys (ms: median of 10 launches)\n", prop.name, sms, items, ntiles128 * 128);
    printf("| variant | keys a tile | stages | overlap in a warpgroup | ping-pong | ms | TFLOP/s |\n|---|---|---|---|---|---|---|\n");
    run<128, 3, true, false>("today's shape", src, nsrc, ntiles128, items, out, sms);
    run<128, 3, true, true>("today's shape, ping-pong", src, nsrc, ntiles128, items, out, sms);
    run<128, 3, false, true>("128, ping-pong only", src, nsrc, ntiles128, items, out, sms);
    run<256, 2, false, true>("256, ping-pong only", src, nsrc, ntiles128, items, out, sms);
    run<256, 2, false, false>("256, neither", src, nsrc, ntiles128, items, out, sms);
    run<256, 2, true, false>("256, overlap", src, nsrc, ntiles128, items, out, sms);
    run<256, 2, true, true>("256, overlap and ping-pong", src, nsrc, ntiles128, items, out, sms);
    run<256, 3, false, true>("256, ping-pong only, 3 stages", src, nsrc, ntiles128, items, out, sms);
    return 0;
}
