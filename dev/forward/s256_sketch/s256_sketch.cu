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
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

#include "forward_wgmma.cuh"
#include "s256_wgmma.cuh"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_ptx.cuh"

using namespace flamia_sm90;

template <int BN> struct Cfg {
    static constexpr int NACC = BN / 2; /* S accumulators a thread: 64 rows x BN over 128 threads */
    static constexpr int NP = BN / 8;   /* P registers a thread: 64 x BN bytes over 128 threads */
    static constexpr int NB = BN / 32;  /* 32-key blocks (column factors) */
    static constexpr int STAGE = 2 * BN * 128; /* K [BN][128 B], then V^T as BN / 128 panels [128][128 B] */
};


template <int BN>
__device__ __forceinline__ void issue_qk(float (&sacc)[Cfg<BN>::NACC], uint32_t sQa, uint32_t sKa) {
    const uint64_t dq = desc_sw128(sQa), dk = desc_sw128(sKa);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if constexpr (BN == 256)
            wgmma_e4m3_ss_n256(sacc, desc_advance(dq, k * 32), desc_advance(dk, k * 32), k);
        else
            wgmma_e4m3_ss(sacc, desc_advance(dq, k * 32), desc_advance(dk, k * 32), k);
    }
}
template <int BN>
__device__ __forceinline__ void issue_pv(float (&oacc)[64], const uint32_t (&p)[Cfg<BN>::NP], uint32_t sVa) {
#pragma unroll
    for (int b = 0; b < Cfg<BN>::NB; b++) {
        const uint32_t a[4] = {p[4 * b], p[4 * b + 1], p[4 * b + 2], p[4 * b + 3]};
        wgmma_e4m3_rs(oacc, a, desc_advance(desc_sw128(sVa + (b >> 2) * 16384), (b & 3) * 32), 1);
    }
}

/* the forward's unmasked tile in outline (forward.cu softmax_tile, mxfp8, FAST frames). The block's
 * factors are read from shared memory where they are used (a broadcast LDS), not held in registers
 * across the tile: at 256 keys, S's 128 registers leave no room for them */
template <int BN>
__device__ __forceinline__ void softmax(float (&sacc)[Cfg<BN>::NACC], uint32_t (&pa)[Cfg<BN>::NP], float (&m_run)[2],
                                        float (&l_run)[2], float (&fo)[2], const float (&crow)[2], const float2 *col) {
    constexpr int NB = Cfg<BN>::NB;
    float tmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int b = 0; b < NB; b++) {
        const float kf = col[b].x;
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            float m = -INFINITY;
#pragma unroll
            for (int j = 4 * b; j < 4 * b + 4; j++) m = fmaxf(m, fmaxf(sacc[4 * j + 2 * hh], sacc[4 * j + 2 * hh + 1]));
            tmax[hh] = fmaxf(tmax[hh], m * (kf * crow[hh]));
        }
    }
    float sc[2];
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        float t = tmax[hh];
        t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, 1));
        t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, 2));
        const float mnew = fmaxf(m_run[hh], ceilf(t));
        const float f = m_run[hh] == -INFINITY ? 0.f : __uint_as_float((uint32_t)(127 + int_of_integral(m_run[hh] - mnew)) << 23);
        fo[hh] = f;
        l_run[hh] *= f;
        m_run[hh] = mnew;
        sc[hh] = __uint_as_float((uint32_t)(127 - int_of_integral(mnew - 8.f)) << 23);
    }
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const float2 v = col[j >> 2];
        float pv[4];
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const float cc = v.x * crow[hh];
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float ev = exp_frame_direct(__fmul_rn(sacc[4 * j + 2 * hh + e], cc), sc[hh]);
                l_run[hh] = fmaf(ev, v.y, l_run[hh]);
                pv[2 * hh + e] = ev;
            }
        }
        flamia_p_fragment_put(pa, j, flamia_cvt_e4m3x2(pv[0], pv[1]), flamia_cvt_e4m3x2(pv[2], pv[3]));
    }
}

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
    for (int i = threadIdx.x; i < 16384 / 4; i += blockDim.x) /* E4M3 codes of +-0.5..0.94 */
        ((uint32_t *)sQ)[i] = 0x30303030u | ((i * 2654435761u) & 0x87078707u);
    for (int i = threadIdx.x; i < S * C::NB; i += blockDim.x) sCol[i] = make_float2(0.25f + 0.001f * i, 0.5f);
    fence_proxy_async();
    __syncthreads();
    const int total = items * ntiles;
    if (wg == 0) {
        setmaxnreg_dec<24>();
        if (tid == 0)
            for (int g = 0; g < total; g++) {
                const int s = g % S;
                if (g >= S) mbar_wait(smem_u32(&sEmpty[s]), (uint32_t)(((g / S) - 1) & 1));
                mbar_expect_tx(smem_u32(&sFull[s]), C::STAGE);
                bulk_load(smem_u32(sStg + s * C::STAGE), src + (size_t)((blockIdx.x * 7 + g) % nsrc) * C::STAGE, C::STAGE,
                          smem_u32(&sFull[s]));
            }
        return;
    }
    setmaxnreg_inc<240>();
    const int cw = wg - 1;
    const uint32_t sQa = smem_u32(sQ) + cw * 8192;
    auto stageK = [&](int s) { return smem_u32(sStg + s * C::STAGE); };
    auto stageV = [&](int s) { return smem_u32(sStg + s * C::STAGE + BN * 128); };
    auto full_wait = [&](int g) { mbar_wait(smem_u32(&sFull[g % S]), (uint32_t)((g / S) & 1)); };
    auto release = [&](int g) { mbar_arrive(smem_u32(&sEmpty[g % S])); };
    auto sched_wait = [&]() {
        if (PP) bar_named(1 + cw, 256);
    };
    auto sched_done = [&]() {
        if (PP) bar_named_arrive(1 + (1 - cw), 256);
    };
    if (PP && cw == 1) bar_named_arrive(1, 256);
    const float crow[2] = {0.1275f * (1.f + 0.01f * (tid & 7)), 0.1275f};
    float sink = 0.f;
    int g = 0;
    for (int item = 0; item < items; item++) {
        float oacc[64];
#pragma unroll
        for (int i = 0; i < 64; i++) oacc[i] = 0.f;
        float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f}, fo[2];
        float sacc[C::NACC];
        uint32_t pa[C::NP], pb[C::NP];
        /* first tile: S alone */
        full_wait(g);
        sched_wait();
        wgmma_fence();
        issue_qk<BN>(sacc, sQa, stageK(g % S));
        wgmma_commit();
        sched_done();
        wgmma_wait<0>();
        reg_fence(sacc);
        softmax<BN>(sacc, pa, m_run, l_run, fo, crow, sCol + (g % S) * C::NB);
        auto rescale = [&]() {
#pragma unroll
            for (int hh = 0; hh < 2; hh++)
                if (fo[hh] != 1.f)
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        oacc[4 * j + 2 * hh] *= fo[hh];
                        oacc[4 * j + 2 * hh + 1] *= fo[hh];
                    }
        };
        /* tile it: S(it) with O += P(it-1) V(it-1) */
        auto step = [&](int it, uint32_t(&pc)[C::NP], uint32_t(&pn)[C::NP]) {
            const int gt = g + it;
            full_wait(gt);
            reg_fence(pc);
            reg_fence(oacc);
            sched_wait();
            wgmma_fence();
            if (OVL) {
                issue_qk<BN>(sacc, sQa, stageK(gt % S));
                wgmma_commit();
                issue_pv<BN>(oacc, pc, stageV((gt - 1) % S));
                wgmma_commit();
                sched_done();
                wgmma_wait<1>();
                reg_fence(sacc);
                softmax<BN>(sacc, pn, m_run, l_run, fo, crow, sCol + (gt % S) * C::NB);
                wgmma_wait<0>();
                reg_fence(oacc);
                reg_fence(pc);
            } else {
                /* P V(it-1) completes before S(it) is issued: S's, O's and P's registers are never
                 * all in flight at once (224 of them at 256 keys) */
                issue_pv<BN>(oacc, pc, stageV((gt - 1) % S));
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(oacc);
                reg_fence(pc);
                wgmma_fence();
                issue_qk<BN>(sacc, sQa, stageK(gt % S));
                wgmma_commit();
                sched_done();
                wgmma_wait<0>();
                reg_fence(sacc);
                softmax<BN>(sacc, pn, m_run, l_run, fo, crow, sCol + (gt % S) * C::NB);
            }
            release(gt - 1);
            rescale();
        };
        int it = 1;
        if (OVL) {
            for (; it + 1 < ntiles; it += 2) {
                step(it, pa, pb);
                step(it + 1, pb, pa);
            }
            if (it < ntiles) step(it++, pa, pb);
        } else {
            for (; it < ntiles; it++) step(it, pa, pa);
        }
        auto last_pv = [&](uint32_t(&pl)[C::NP]) {
            reg_fence(pl);
            reg_fence(oacc);
            sched_wait();
            wgmma_fence();
            issue_pv<BN>(oacc, pl, stageV((g + ntiles - 1) % S));
            wgmma_commit();
            sched_done();
            wgmma_wait<0>();
            reg_fence(oacc);
            release(g + ntiles - 1);
        };
        if (OVL && (ntiles & 1) == 0) /* the last tile's P: odd tiles' in pb */
            last_pv(pb);
        else
            last_pv(pa);
        g += ntiles;
        float s = l_run[0] + l_run[1];
#pragma unroll
        for (int i = 0; i < 64; i++) s += oacc[i];
        sink += s;
    }
    out[blockIdx.x * 256 + cw * 128 + tid] = sink;
}

#ifndef S256_NO_MAIN
#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));           \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

template <int BN, int S, bool OVL, bool PP>
static void run(const char *name, const uint8_t *src, int nsrc, int ntiles128, int items, float *out, int sms) {
    using C = Cfg<BN>;
    const int ntiles = ntiles128 * 128 / BN;
    const size_t smem = 16384 + (size_t)S * C::STAGE + S * C::NB * 8 + 2 * S * 8;
    auto k = s256_sketch<BN, S, OVL, PP>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < 12; r++) {
        CK(cudaEventRecord(a));
        k<<<sms, 384, smem>>>(src, nsrc, ntiles, items, out);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        if (r >= 2) ms.push_back(t);
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    const double med = 0.5 * (ms[4] + ms[5]);
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
#endif
