/*
 * sketch_loop.cuh - the forward's consumer in outline for the timing skeletons (s256_sketch,
 * item_sketch): the tile shapes, the two products, the unmasked tile's element-wise body, and one
 * work item's key loop (the first tile's S alone, the steps, the last P V) over a K / V ring.
 */
#pragma once
#include <cuda.h>
#include <type_traits>
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

/* a K / V ring of S stages: K [BN][128 B] then V^T a stage, its full / empty mbarriers and each
 * stage's column factors */
template <int BN, int S> struct SketchRing {
    uint8_t *stg;
    uint64_t *full, *empty;
    float2 *col;
    __device__ uint32_t k(int g) const { return smem_u32(stg + (g % S) * Cfg<BN>::STAGE); }
    __device__ uint32_t v(int g) const { return smem_u32(stg + (g % S) * Cfg<BN>::STAGE + BN * 128); }
    __device__ void wait_full(int g) const { mbar_wait(smem_u32(&full[g % S]), (uint32_t)((g / S) & 1)); }
    __device__ void release(int g) const { mbar_arrive(smem_u32(&empty[g % S])); }
    __device__ const float2 *cols(int g) const { return col + (g % S) * Cfg<BN>::NB; }
    /* the producer thread's side: `total` stages by bulk copies from src, ring position g taking
     * source stage (first + g) % nsrc, each after the consumers released its slot; before(g) runs
     * first and returns a source offset (item_sketch: the producer's per-item latency) */
    template <class Before = int (*)(int)>
    __device__ void stream(const uint8_t *src, int nsrc, int total, int first, Before before = nullptr) const {
        for (int g = 0; g < total; g++) {
            const int s = g % S;
            if constexpr (!std::is_pointer_v<Before>) first += before(g);
            if (g >= S) mbar_wait(smem_u32(&empty[s]), (uint32_t)(((g / S) - 1) & 1));
            mbar_expect_tx(smem_u32(&full[s]), Cfg<BN>::STAGE);
            bulk_load(smem_u32(stg + s * Cfg<BN>::STAGE), src + (size_t)((first + g) % nsrc) * Cfg<BN>::STAGE,
                      Cfg<BN>::STAGE, smem_u32(&full[s]));
        }
    }
};

/* the inputs every skeleton's consumers read, written by the whole CTA: a 16 KB Q tile of E4M3
 * codes of +-0.5..0.94 and ncol column factors (factor, weight) */
__device__ __forceinline__ void sketch_fill_inputs(uint8_t *sQ, float2 *sCol, int ncol) {
    for (int i = threadIdx.x; i < 16384 / 4; i += blockDim.x)
        ((uint32_t *)sQ)[i] = 0x30303030u | ((i * 2654435761u) & 0x87078707u);
    for (int i = threadIdx.x; i < ncol; i += blockDim.x) sCol[i] = make_float2(0.25f + 0.001f * i, 0.5f);
}

/* an item's first S = Q K^T alone at ring position g, in its own ping-pong turn (PP); committed, not
 * waited for: sketch_item's first tile, and AHEAD's first item before the item loop */
template <int BN, int S, bool PP>
__device__ __forceinline__ void sketch_first_s(float (&sacc)[Cfg<BN>::NACC], const SketchRing<BN, S> &ring, int g,
                                               uint32_t sQa, int cw) {
    ring.wait_full(g);
    if (PP) bar_named(1 + cw, 256);
    wgmma_fence();
    issue_qk<BN>(sacc, sQa, ring.k(g));
    wgmma_commit();
    if (PP) bar_named_arrive(1 + (1 - cw), 256);
}

/* one work item of ntiles key tiles from ring position g, as forward.cu's consumer loop in outline:
 * O (oacc) and the rows' l (l_run) come back; with OVL S(n+1) = Q K^T is issued with O += P(n) V(n)
 * and the softmax of S(n+1) runs under that P V, without it P V(n) completes before S(n+1) is
 * issued; PP: the two consumer warpgroups take turns issuing (named barriers 1 + cw).
 * AHEAD (with OVL): the item's first S is already in flight in sacc (issued by the item before, or
 * by sketch_first_s before the first item), and the last turn issues the next item's first S with
 * the last P V, so that it runs under this item's epilogue (v31's order, seventy-seventh session);
 * after the last item it reads a stale stage without waiting (next = false) and is never read */
template <int BN, int S, bool OVL, bool PP, bool AHEAD = false>
__device__ __forceinline__ void sketch_item(float (&oacc)[64], float (&l_run)[2], float (&sacc)[Cfg<BN>::NACC],
                                            const SketchRing<BN, S> &ring, int g, int ntiles, uint32_t sQa, int cw,
                                            const float (&crow)[2], bool next = false) {
    static_assert(OVL || !AHEAD, "the next item's S goes with the last P V only in the overlapped loop");
    using C = Cfg<BN>;
    auto sched_wait = [&]() {
        if (PP) bar_named(1 + cw, 256);
    };
    auto sched_done = [&]() {
        if (PP) bar_named_arrive(1 + (1 - cw), 256);
    };
#pragma unroll
    for (int i = 0; i < 64; i++) oacc[i] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY}, fo[2];
    l_run[0] = l_run[1] = 0.f;
    uint32_t pa[C::NP], pb[C::NP];
    /* first tile: S alone (AHEAD: issued before) */
    if (!AHEAD) sketch_first_s<BN, S, PP>(sacc, ring, g, sQa, cw);
    wgmma_wait<0>();
    reg_fence(sacc);
    softmax<BN>(sacc, pa, m_run, l_run, fo, crow, ring.cols(g));
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
        ring.wait_full(gt);
        reg_fence(pc);
        reg_fence(oacc);
        sched_wait();
        wgmma_fence();
        if (OVL) {
            issue_qk<BN>(sacc, sQa, ring.k(gt));
            wgmma_commit();
            issue_pv<BN>(oacc, pc, ring.v(gt - 1));
            wgmma_commit();
            sched_done();
            wgmma_wait<1>();
            reg_fence(sacc);
            softmax<BN>(sacc, pn, m_run, l_run, fo, crow, ring.cols(gt));
            wgmma_wait<0>();
            reg_fence(oacc);
            reg_fence(pc);
        } else {
            /* P V(it-1) completes before S(it) is issued: S's, O's and P's registers are never
             * all in flight at once (224 of them at 256 keys) */
            issue_pv<BN>(oacc, pc, ring.v(gt - 1));
            wgmma_commit();
            wgmma_wait<0>();
            reg_fence(oacc);
            reg_fence(pc);
            wgmma_fence();
            issue_qk<BN>(sacc, sQa, ring.k(gt));
            wgmma_commit();
            sched_done();
            wgmma_wait<0>();
            reg_fence(sacc);
            softmax<BN>(sacc, pn, m_run, l_run, fo, crow, ring.cols(gt));
        }
        ring.release(gt - 1);
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
        issue_pv<BN>(oacc, pl, ring.v(g + ntiles - 1));
        wgmma_commit();
        if (AHEAD) { /* the next item's first S, under this item's epilogue */
            if (next) ring.wait_full(g + ntiles);
            issue_qk<BN>(sacc, sQa, ring.k(g + ntiles));
            wgmma_commit();
            sched_done();
            wgmma_wait<1>();
        } else {
            sched_done();
            wgmma_wait<0>();
        }
        reg_fence(oacc);
        ring.release(g + ntiles - 1);
    };
    if (OVL && (ntiles & 1) == 0) /* the last tile's P: odd tiles' in pb */
        last_pv(pb);
    else
        last_pv(pa);
}
