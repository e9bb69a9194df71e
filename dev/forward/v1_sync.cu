/* dev/forward/v1_sync.cu - variant 1 (frozen copy): all 256 threads load (cp.async K, TMA V^T), 2 consumer
 * warpgroups in lockstep (two __syncthreads per tile), S wgmma -> wait -> softmax -> PV wgmma -> wait.
 * Measured 2026-11-29, H200 (1980 MHz): mxfp8 16x4096 causal 3.823 ms = 287.6 TFLOP/s; 4x4096 0.917 ms = 300.0;
 * bf16 16x4096 3.233 ms = 340.2 (bf16 O was wrong in that run: V descriptor). */
/*
 * forward.cu - the Hopper (sm_90a) attention forward of FLAMIA-H.
 *
 * Computes docs/numerics.md section 3 on the quantized operands that
 * quantize.cu left in the workspace (layout: sm90_launch.h):
 *   S = Q K^T     FP8 wgmma (QGMMA) on the E4M3 codes, m64n128k32, FP32 accumulate;
 *                 row factor 2^eQ folded into c = softmax_scale*log2(e), column
 *                 factor 2^eK applied to the accumulator (exact powers of two);
 *   frames        per key tile of 128 (document aligned), diagonal tile first, down
 *                 to tile 0: m <- max(m, ceil(max t)), an integer, so every rescale
 *                 of O and l is an exact power of two;
 *   P             E4M3 codes of exp2(t - m + 8) with V's per-token exponent folded in
 *                 (GPU latitude of numerics.md 3.5, see below);
 *   O += P V      FP8 wgmma with P from registers, V^T (vt_codes) from shared memory.
 * The BF16 kind (control path) runs the same loop with BF16 wgmma (m64n128k16) on
 * q_bf16/k_bf16/v_bf16 and P = bf16(exp2(t - m)).
 *
 * V's exponent (GPU latitude): for row i let E_i = max eV_j over the keys the row
 * may see (a prefix max over the document: causal, so O_i never depends on later
 * tokens). P is encoded as e4m3(exp2(t - m + 8) * 2^(eV_j - E_i)) (<= 256, never
 * clamps), i.e. exp2 is evaluated at t - (m - 8 + E_i) and multiplied by 2^eV_j;
 * l accumulates the same unquantized exponentials in the same frame, so
 * O = O_acc / l_acc and lse = ln2 (m - 8 + E_i + log2 l_acc). This differs from
 * the definition only where the folded P value is an E4M3 subnormal.
 *
 * P layout. FP8 wgmma takes A (P) from registers in the layout of its k = 32
 * fragment (thread t of a quad holds keys 4t..4t+3 and 16+4t..16+4t+3), while the
 * S accumulator gives thread t the columns 8j+2t, 8j+2t+1. Instead of a byte
 * shuffle, the K tile is staged with its rows permuted: shared-memory row c holds
 * key pi(c), pi(32b + 8j + 2t + e) = 32b + 16(j>>1) + 4t + 2(j&1) + e, so the
 * accumulator's columns are already the A fragment's keys. (BF16: identity.)
 *
 * Work: one CTA per (document, 128-query tile, query head), heaviest tiles first;
 * two consumer warpgroups of 64 query rows each. K (and Q) are staged by cp.async
 * (the row permutation is free there); V^T by TMA (its tiles start at arbitrary
 * token offsets, which TMA handles and 16-byte cp.async cannot).
 */
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "flamia_formats.h"
#include "forward_wgmma.cuh"
#include "sm90_e4m3.cuh"
#include "sm90_launch.h"

namespace flamia_fwd {

constexpr int kThreads = 256; /* two consumer warpgroups */
constexpr int kBM = 128;      /* queries per CTA */
constexpr int kBN = 128;      /* keys per tile (recipe tile_k) */
constexpr int kD = 128;

struct Params {
    const uint8_t *q8, *k8;
    const int8_t *qe, *ke, *ve;
    const uint16_t *qb, *kb, *vb;
    float *row_frame;
    uint16_t *o;
    float *lse;
    const int32_t *cu;
    int T, Hq, Hkv, group, causal;
    float c; /* softmax_scale * log2(e), FP32 */
    uint32_t bv_lbo, bv_sbo; /* BF16 V (MN-major B) descriptor strides */
};

/* ---------------------------------------------------------------- PTX helpers */
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    while (!done) {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    }
}
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, int c0, int c1, int c2,
                                            uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void reg_fence(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void reg_fence(uint32_t (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+r"(r[i])::"memory");
}

/* Shared-memory matrix descriptor, 128-byte swizzle (rows of 128 bytes, 8-row atoms). */
__device__ __forceinline__ uint64_t desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    uint64_t d = (uint64_t)((saddr & 0x3FFFFu) >> 4);
    d |= (uint64_t)((lbo >> 4) & 0x3FFFu) << 16;
    d |= (uint64_t)((sbo >> 4) & 0x3FFFu) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}
/* byte offset of 16-byte chunk q of row r in a 128B-swizzled [rows][128 B] tile */
__device__ __forceinline__ uint32_t sw128(int r, int q) { return (uint32_t)(r * 128 + ((q ^ (r & 7)) << 4)); }

__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ uint32_t bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
/* key held by shared-memory row c of an FP8 K tile (see the header comment) */
__device__ __forceinline__ int perm_key(int c) {
    const int e = c & 1, t = (c >> 1) & 3, j = (c >> 3) & 3, b = c >> 5;
    return (b << 5) | ((j >> 1) << 4) | (t << 2) | ((j & 1) << 1) | e;
}

/* ------------------------------------------------------------ shared memory */
template <bool FP8, int S> struct Smem {
    static constexpr int kTileBytes = FP8 ? kBN * kD : kBN * kD * 2; /* K or V tile */
    static constexpr int kQBytes = FP8 ? kBM * kD : kBM * kD * 2;
    static constexpr int kQ = 0;
    static constexpr int kK = kQ + kQBytes;
    static constexpr int kV = kK + S * kTileBytes;
    static constexpr int kCol = kV + S * kTileBytes;       /* float2 [S][128]: 2^eK, 2^eV by column */
    static constexpr int kBar = kCol + S * kBN * 8;        /* uint64 [S] */
    static constexpr int kE = kBar + 8 * S;                /* int [128] row E; int [128] prefix */
    static constexpr int kMisc = kE + 2 * 128 * 4;         /* int [8] */
    static constexpr int kBytes = kMisc + 64 + 1024;       /* + alignment slack */
};

/* ------------------------------------------------------------------ kernel */
template <bool FP8, int S>
__global__ void __launch_bounds__(kThreads, 1)
    fwd_kernel(const __grid_constant__ CUtensorMap tmap_vt, const Params p) {
    using SM = Smem<FP8, S>;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);

    const int doc = blockIdx.x, h = blockIdx.y;
    const int mt = (int)gridDim.z - 1 - (int)blockIdx.z; /* heaviest tiles launch first */
    const int ds = p.cu[doc], len = p.cu[doc + 1] - ds;
    if (mt * kBM >= len) return;
    const int hk = h / p.group;
    const int tid = threadIdx.x, wg = tid >> 7, warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3;
    const int q0 = mt * kBM;                 /* doc-local first query of the tile */
    const int ndiag = p.causal ? mt : (len - 1) / kBN;
    const int nvis = ndiag + 1;              /* tiles visited: ndiag, ndiag-1, ..., 0 */
    const int rr[2] = {wg * 64 + (warp & 3) * 16 + g, wg * 64 + (warp & 3) * 16 + g + 8};

    uint8_t *sQ = smem + SM::kQ;
    float2 *sCol = (float2 *)(smem + SM::kCol);
    uint64_t *sBar = (uint64_t *)(smem + SM::kBar);
    int *sE = (int *)(smem + SM::kE);
    int *sPre = sE + 128;
    int *sMisc = (int *)(smem + SM::kMisc);

    if (FP8 && tid == 0) {
        for (int s = 0; s < S; s++) mbar_init(smem_u32(&sBar[s]), 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    if (tid == 0) sMisc[0] = -1000;

    /* ---- Q tile (cp.async, group 0 together with the first K tile) */
    if (FP8) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int ch = tid + i * kThreads, r = ch >> 3, q = ch & 7;
            const int tok = ds + q0 + r;
            const bool ok = tok < p.T;
            const uint8_t *src = p.q8 + ((size_t)(ok ? tok : 0) * p.Hq + h) * kD + q * 16;
            cp_async16(smem_u32(sQ + sw128(r, q)), src, ok);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int ch = tid + i * kThreads, r = ch >> 4, q = ch & 15;
            const int tok = ds + q0 + r;
            const bool ok = tok < p.T;
            const uint16_t *src = p.qb + ((size_t)(ok ? tok : 0) * p.Hq + h) * kD + q * 8;
            cp_async16(smem_u32(sQ + (q >> 3) * (kBM * 128) + sw128(r, q & 7)), src, ok);
        }
    }

    /* tile loads: K by cp.async (FP8: rows permuted), V^T by TMA (FP8) or V by cp.async (BF16) */
    auto load_tile = [&](int n, int s) {
        const int kbase = ds + n * kBN; /* absolute token of the tile's key 0 */
        uint8_t *sK = smem + SM::kK + s * SM::kTileBytes;
        uint8_t *sV = smem + SM::kV + s * SM::kTileBytes;
        if (FP8) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int ch = tid + i * kThreads, c = ch >> 3, q = ch & 7;
                const int tok = kbase + perm_key(c);
                const bool ok = tok < p.T;
                const uint8_t *src = p.k8 + ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 16;
                cp_async16(smem_u32(sK + sw128(c, q)), src, ok);
            }
            if (tid == 0) {
                const uint32_t bar = smem_u32(&sBar[s]);
                mbar_expect_tx(bar, kBN * kD);
                tma_load_3d(smem_u32(sV), &tmap_vt, kbase, 0, hk, bar);
            }
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int ch = tid + i * kThreads, r = ch >> 4, q = ch & 15;
                const int tok = kbase + r;
                const bool ok = tok < p.T;
                const size_t off = ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 8;
                const uint32_t so = (q >> 3) * (kBN * 128) + sw128(r, q & 7);
                cp_async16(smem_u32(sK + so), p.kb + off, ok);
                cp_async16(smem_u32(sV + so), p.vb + off, ok);
            }
        }
    };
    /* column factors of tile n (FP8): thread c < 128 reads key pi(c) */
    auto load_cols = [&](int n) -> float2 {
        float2 f = make_float2(0.f, 0.f);
        const int tok = ds + n * kBN + perm_key(tid);
        if (tok < p.T) {
            f.x = flamia_pow2f(p.ke[(size_t)tok * p.Hkv + hk]);
            f.y = flamia_pow2f(p.ve[(size_t)tok * p.Hkv + hk]);
        }
        return f;
    };

    if (FP8) __syncthreads(); /* barrier init visible before any TMA */
#pragma unroll
    for (int s = 0; s < S - 1; s++) {
        if (s < nvis) {
            load_tile(ndiag - s, s);
            if (FP8 && tid < kBN) sCol[s * kBN + tid] = load_cols(ndiag - s);
        }
        cp_async_commit();
    }

    /* ---- per-row constants: c_i = c * 2^eQ_i, E_i = max eV over the keys row i sees */
    float crow[2];
    int Erow[2] = {8, 8};
    if (FP8) {
        const int kb_end = p.causal ? q0 : len; /* keys every row of the tile sees */
        int mx = -1000;
        for (int k = tid; k < kb_end; k += kThreads) mx = max(mx, (int)p.ve[(size_t)(ds + k) * p.Hkv + hk]);
#pragma unroll
        for (int o = 16; o; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        __syncthreads(); /* sMisc[0] initialised */
        if (lane == 0) atomicMax(&sMisc[0], mx);
        if (p.causal && tid < 128) {
            const int key = q0 + tid;
            int x = key < len ? (int)p.ve[(size_t)(ds + key) * p.Hkv + hk] : -1000;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const int y = __shfl_up_sync(0xffffffffu, x, o);
                if (lane >= o) x = max(x, y);
            }
            sPre[tid] = x;
        }
        __syncthreads();
        if (tid < 128) {
            int E = sMisc[0];
            if (p.causal) {
                const int kl = min(tid, len - 1 - q0); /* last key of row tid (clamped for pad rows) */
                int pre = sPre[kl];
                for (int w = 0; w < (kl >> 5); w++) pre = max(pre, sPre[w * 32 + 31]);
                E = max(E, pre);
            }
            sE[tid] = E;
        }
        __syncthreads();
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            Erow[hh] = sE[rr[hh]];
            const int tok = ds + q0 + rr[hh];
            const int eq = (q0 + rr[hh] < len) ? (int)p.qe[(size_t)tok * p.Hq + h] : 0;
            crow[hh] = p.c * flamia_pow2f(eq); /* exact: a power of two times c */
        }
    } else {
        crow[0] = crow[1] = p.c;
    }

    /* ---- main loop */
    float oacc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) oacc[i] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};
    float2 pend = make_float2(0.f, 0.f);

    const uint32_t sQa = smem_u32(sQ);
    for (int it = 0; it < nvis; it++) {
        const int s = it % S;
        const int n = ndiag - it;
        __syncthreads(); /* everyone is done with iteration it-1 */
        if (FP8 && it >= 1 && it + S - 2 < nvis && tid < kBN) sCol[((it + S - 2) % S) * kBN + tid] = pend;
        {
            const int nt = it + S - 1;
            if (nt < nvis) {
                load_tile(ndiag - nt, nt % S);
                if (FP8 && tid < kBN) pend = load_cols(ndiag - nt);
            }
            cp_async_commit();
        }
        cp_async_wait<S - 1>();
        fence_proxy_async();
        __syncthreads();
        if (FP8) mbar_wait(smem_u32(&sBar[s]), (uint32_t)((it / S) & 1));

        const uint32_t sKa = smem_u32(smem + SM::kK + s * SM::kTileBytes);
        const uint32_t sVa = smem_u32(smem + SM::kV + s * SM::kTileBytes);

        /* S = Q K^T for this warpgroup's 64 rows */
        float sacc[64];
        wgmma_fence();
        if (FP8) {
#pragma unroll
            for (int k = 0; k < 4; k++)
                wgmma_e4m3_ss(sacc, desc_sw128(sQa + wg * 8192 + k * 32, 16, 1024),
                              desc_sw128(sKa + k * 32, 16, 1024), k);
        } else {
#pragma unroll
            for (int k = 0; k < 8; k++)
                wgmma_bf16_ss(sacc,
                              desc_sw128(sQa + (k >> 2) * (kBM * 128) + wg * 8192 + (k & 3) * 32, 16, 1024),
                              desc_sw128(sKa + (k >> 2) * (kBN * 128) + (k & 3) * 32, 16, 1024), k);
        }
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(sacc);

        /* ---- softmax on the tile (log2 domain, integer frames) */
        const bool need_mask = (it == 0);
        const float2 *col = sCol + s * kBN;
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int j = 0; j < 16; j++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int c = 8 * j + 2 * tq + e;
                float kf = 1.f;
                if (FP8) kf = col[c].x;
                const int key = n * kBN + (FP8 ? perm_key(c) : c);
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    float u = sacc[4 * j + 2 * hh + e];
                    if (FP8) u *= kf;
                    if (need_mask) {
                        const int qi = q0 + rr[hh];
                        const bool ok = key < len && (!p.causal || key <= qi);
                        u = ok ? u : -INFINITY;
                    }
                    sacc[4 * j + 2 * hh + e] = u;
                    mx[hh] = fmaxf(mx[hh], u);
                }
            }
        }
        float negM[2];
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            mx[hh] = fmaxf(mx[hh], __shfl_xor_sync(0xffffffffu, mx[hh], 1));
            mx[hh] = fmaxf(mx[hh], __shfl_xor_sync(0xffffffffu, mx[hh], 2));
            /* max_j fl(u_j c_i) = fl(max_j u_j * c_i): c_i > 0 and rounding is monotone */
            float mnew = fmaxf(m_run[hh], ceilf(mx[hh] * crow[hh]));
            if (mnew == -INFINITY) mnew = 0.f; /* a padding row with no key yet */
            if (mnew != m_run[hh]) {
                const float f = (m_run[hh] == -INFINITY) ? 0.f : flamia_pow2f((int)(m_run[hh] - mnew));
                l_run[hh] *= f;
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    oacc[4 * j + 2 * hh] *= f;
                    oacc[4 * j + 2 * hh + 1] *= f;
                }
                m_run[hh] = mnew;
            }
            negM[hh] = -(FP8 ? (mnew - 8.f + (float)Erow[hh]) : mnew);
        }
        uint32_t pa[16];
#pragma unroll
        for (int j = 0; j < 16; j++) {
            float pv[4];
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int c = 8 * j + 2 * tq + e;
                float vg = 1.f;
                if (FP8) vg = col[c].y;
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const float u = sacc[4 * j + 2 * hh + e];
                    float x = fmaf(u, crow[hh], negM[hh]);
                    if (need_mask && u == -INFINITY) x = -INFINITY;
                    const float ev = ex2(x);
                    l_run[hh] += ev;
                    pv[2 * hh + e] = FP8 ? ev * vg : ev;
                }
            }
            if (FP8) {
                /* j = 4b + jj: pa[4b + 0] row g keys (jj 0,1), [4b+1] row g+8, [4b+2] row g (jj 2,3), [4b+3] */
                const int b = j >> 2, jj = j & 3;
                const uint32_t r0 = flamia_cvt_e4m3x2(pv[0], pv[1]); /* row g  */
                const uint32_t r1 = flamia_cvt_e4m3x2(pv[2], pv[3]); /* row g+8 */
                const int base = 4 * b + ((jj >> 1) << 1);
                if ((jj & 1) == 0) {
                    pa[base] = r0;
                    pa[base + 1] = r1;
                } else {
                    pa[base] |= r0 << 16;
                    pa[base + 1] |= r1 << 16;
                }
            } else {
                /* k-step kk = j >> 1: regs (row g, lo keys) (row g+8, lo) (row g, hi) (row g+8, hi) */
                const int kk = j >> 1, hi = j & 1;
                pa[4 * kk + 2 * hi] = bf16x2(pv[0], pv[1]);
                pa[4 * kk + 2 * hi + 1] = bf16x2(pv[2], pv[3]);
            }
        }

        /* ---- O += P V */
        reg_fence(pa);
        reg_fence(oacc);
        wgmma_fence();
        if (FP8) {
#pragma unroll
            for (int b = 0; b < 4; b++) {
                const uint32_t a[4] = {pa[4 * b], pa[4 * b + 1], pa[4 * b + 2], pa[4 * b + 3]};
                wgmma_e4m3_rs(oacc, a, desc_sw128(sVa + b * 32, 16, 1024), 1);
            }
        } else {
#pragma unroll
            for (int kk = 0; kk < 8; kk++) {
                const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
                wgmma_bf16_rs_tb(oacc, a, desc_sw128(sVa + kk * 2048, p.bv_lbo, p.bv_sbo), 1);
            }
        }
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(oacc);
    }

    /* ---- epilogue: O = O_acc / l, lse, row frame */
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        float l = l_run[hh];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int qi = q0 + rr[hh];
        if (qi >= len) continue;
        const size_t row = (size_t)(ds + qi) * p.Hq + h;
        uint32_t *orow = (uint32_t *)(p.o + row * kD);
#pragma unroll
        for (int j = 0; j < 16; j++)
            orow[4 * j + tq] = bf16x2(oacc[4 * j + 2 * hh] / l, oacc[4 * j + 2 * hh + 1] / l);
        if (tq == 0) {
            const double base = (double)m_run[hh] + (FP8 ? (double)(Erow[hh] - 8) : 0.0);
            p.lse[row] = (float)(0.69314718055994530942 * (base + log2((double)l)));
            p.row_frame[row] = m_run[hh];
        }
    }
}

/* ------------------------------------------------------------------ host */
typedef CUresult (*EncodeTiledFn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                  const cuuint64_t *, const cuuint32_t *, const cuuint32_t *,
                                  CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill);

static EncodeTiledFn encode_fn() {
    static EncodeTiledFn fn = nullptr;
    if (!fn) {
        void *ptr = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (EncodeTiledFn)ptr;
    }
    return fn;
}

template <bool FP8, int S> static cudaError_t launch(const Params &prm, const CUtensorMap &map, int num_docs,
                                                     int max_seqlen, cudaStream_t stream) {
    const int bytes = Smem<FP8, S>::kBytes;
    static bool attr = false;
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(fwd_kernel<FP8, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess) return e;
        attr = true;
    }
    dim3 grid(num_docs, prm.Hq, (max_seqlen + kBM - 1) / kBM);
    fwd_kernel<FP8, S><<<grid, kThreads, bytes, stream>>>(map, prm);
    return cudaGetLastError();
}

} // namespace flamia_fwd

/* debug knob for the dev harness: swap the two strides of the BF16 V descriptor */
int flamia_fwd_debug_bv_swap = 0;

cudaError_t flamia_sm90_forward(const struct flamia_sm90_problem *P, void *workspace, uint16_t *o, float *lse,
                                cudaStream_t stream) {
    using namespace flamia_fwd;
    if (P->head_dim != kD) return cudaErrorNotSupported;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    const flamia_sm90_layout L = flamia_sm90_layout_of(P);
    uint8_t *ws = (uint8_t *)workspace;
    Params prm;
    prm.q8 = ws + L.q_codes;
    prm.k8 = ws + L.k_codes;
    prm.qe = (const int8_t *)(ws + L.q_exp);
    prm.ke = (const int8_t *)(ws + L.k_exp);
    prm.ve = (const int8_t *)(ws + L.v_exp);
    prm.qb = (const uint16_t *)(ws + L.q_bf16);
    prm.kb = (const uint16_t *)(ws + L.k_bf16);
    prm.vb = (const uint16_t *)(ws + L.v_bf16);
    prm.row_frame = (float *)(ws + L.row_frame);
    prm.o = o;
    prm.lse = lse;
    prm.cu = P->cu_seqlens;
    prm.T = P->total_tokens;
    prm.Hq = P->heads_q;
    prm.Hkv = P->heads_kv;
    prm.group = P->heads_q / P->heads_kv;
    prm.causal = P->causal;
    prm.c = P->softmax_scale * 1.44269504088896341f;
    prm.bv_lbo = flamia_fwd_debug_bv_swap ? 1024u : (uint32_t)(kBN * 128);
    prm.bv_sbo = flamia_fwd_debug_bv_swap ? (uint32_t)(kBN * 128) : 1024u;

    CUtensorMap map;
    memset(&map, 0, sizeof map);
    if (P->kind == FLAMIA_SM90_BF16) return launch<false, 2>(prm, map, P->num_docs, P->max_seqlen, stream);

    EncodeTiledFn enc = encode_fn();
    if (!enc) return cudaErrorNotSupported;
    /* dims[0] = t_pad: quantize zeroes the pad tokens; beyond t_pad TMA fills zeros */
    const cuuint64_t dims[3] = {(cuuint64_t)L.t_pad, (cuuint64_t)kD, (cuuint64_t)P->heads_kv};
    const cuuint64_t strides[2] = {(cuuint64_t)L.t_pad, (cuuint64_t)L.t_pad * kD};
    const cuuint32_t box[3] = {kBN, kD, 1};
    const cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = enc(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, ws + L.vt_codes, dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) return cudaErrorInvalidValue;
    return launch<true, 3>(prm, map, P->num_docs, P->max_seqlen, stream);
}
