/*
 * quantize.cu - the fused quantize kernel of the Hopper backend (one launch).
 *
 * Reads BF16 Q, K, V [T][H][D] and cu_seqlens; optionally rotates Q and K by
 * H_D / sqrt(D) (Sylvester Hadamard, FP32 butterflies in the order of
 * flamia_ref_hadamard); computes the recipe's group statistics and writes, per
 * docs/numerics.md section 2 and the workspace layout of sm90_launch.h:
 *   E4M3 kinds: codes [T][H][D], the token's group exponent [T][H] (int8),
 *               V's codes transposed [Hkv][D][t_pad] (pad tokens zeroed),
 *               err_flag |= 1 on a non-finite input element;
 *   BF16 kind:  the BF16 operands (Q, K rotated and re-rounded to BF16 when
 *               the Hadamard option is on, else a copy).
 *
 * Work decomposition. The token axis is cut into windows of 32 tokens. A CTA
 * owns window w and a few head slots (slot = one head of Q, K or V). For
 * token-block scaling (mxfp8) the CTA processes every 32-token block of one
 * document that STARTS inside [32w, 32w+32): those blocks cover the contiguous
 * token range [a, b) with a = first block start >= 32w and b = first block
 * start >= 32w+32 (at most 63 tokens), so every block is read once, whole, by
 * one CTA, and no group ever crosses a document boundary. Block starts come
 * from one binary search of cu_seqlens per token (64 threads, one round).
 * Per-token scaling (mxfp8-exact) and the BF16 kind simply use [32w, 32w+32).
 *
 * Thread mapping: D/8 threads per token row, 8 elements (16 bytes) each; a
 * 256-thread CTA covers 2048/D rows per pass. Loads are 16-byte cp.async
 * copies into a shared-memory ring of 3 (mxfp8) or 4 stages, so 2-3 head
 * slots are in flight while one is encoded; each thread reads back only what
 * it copied, so the ring needs no barrier. Block maxima meet in shared memory
 * (atomicMax on the float bits, three rotating buffers: one barrier a slot).
 * V slots stage their codes in a transposition tile and write V^T rows.
 * History and timings of the variants: dev/quantize/README.md. E4M3 encoding uses the hardware conversion
 * cvt.rn.satfinite.e4m3x2.f32, which equals flamia_fmt_e4m3_encode on every
 * float (tests/gpu/test_gpu_e4m3_cvt.cu checks all 2^32 inputs), and the
 * exponent rule is flamia_fmt_block_exponent itself: the result is bit-exact
 * against a host quantization with flamia_formats.h (tests/gpu).
 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_launch.h"

namespace {

constexpr int kThreads = 256;

struct QuantParams {
    const uint16_t *src[3]; /* Q, K, V */
    uint8_t *codes[3];
    int8_t *exps[3];
    uint16_t *bf16[3];
    uint8_t *vt;
    int *err;
    const int32_t *cu;
    int heads[3];
    int T, num_docs, t_pad, head_slots, heads_per_cta, hadamard;
    float had_norm;
};

__device__ __forceinline__ bool bf16x2_nonfinite(uint32_t w) {
    return ((w & 0x7f80u) == 0x7f80u) || ((w & 0x7f800000u) == 0x7f800000u);
}

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    const unsigned sa = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

template <int D, int GRAN>
struct Cfg {
    static constexpr int TPR = D / 8;                 /* threads per token row */
    static constexpr int RP = kThreads / TPR;         /* rows per pass */
    static constexpr int MAXR = GRAN == 1 ? 32 : 64;  /* rows a CTA may own */
    static constexpr int NP = MAXR / RP;              /* passes */
    static constexpr int NS = GRAN == 1 ? 4 : 3;      /* cp.async stages (NS-1 slots in flight) */
    static constexpr int VSTR = MAXR + 1;             /* transposition tile row stride (bytes) */
    static constexpr int STAGE = MAXR * D * 2;        /* bytes of one stage */
    static constexpr size_t smem(bool fp8) { return (size_t)NS * STAGE + (fp8 ? D * VSTR : 0); }
};

template <int D, int GRAN, bool FP8>
__global__ void __launch_bounds__(kThreads, 3) quantize_kernel(const QuantParams p) {
    using C = Cfg<D, GRAN>;
    constexpr int TPR = C::TPR, RP = C::RP, MAXR = C::MAXR, NP = C::NP, NS = C::NS, VSTR = C::VSTR;
    static_assert(NP >= 1 && NP * RP == MAXR, "mapping");

    extern __shared__ __align__(16) uint8_t smem[];
    uint8_t *s_vt = smem + NS * C::STAGE;            /* [D][VSTR] V codes, transposed */
    __shared__ int s_tokbs[64];                        /* block start of token 32w + i (GRAN 32) */
    __shared__ int s_bmax[3][64];                      /* block amax (float bits), 3 rotating buffers */
    __shared__ int s_range[2];

    const int tid = threadIdx.x;
    const int c = tid % TPR;
    const int r0 = tid / TPR;
    const int T = p.T;
    const int w0 = blockIdx.x * 32;

    /* ---- 1. the token range [a, b) this CTA owns */
    int a, b;
    if (GRAN == 1) {
        a = w0;
        b = min(w0 + 32, T);
    } else {
        if (tid < 64) {
            const int t = w0 + tid;
            bool start = false;
            int bs = 0;
            if (t < T) {
                int lo = 0, hi = p.num_docs; /* cu[lo] <= t < cu[hi] */
                while (hi - lo > 1) {
                    const int mid = (lo + hi) >> 1;
                    if (__ldg(p.cu + mid) <= t) lo = mid; else hi = mid;
                }
                const int c0 = __ldg(p.cu + lo);
                bs = c0 + ((t - c0) & ~(GRAN - 1));
                start = bs == t;
            }
            s_tokbs[tid] = bs;
            const unsigned m = __ballot_sync(0xffffffffu, start);
            if ((tid & 31) == 0) {
                const int base = w0 + (tid & 32);
                /* no block starts in a window only when the block reaches T */
                s_range[tid >> 5] = m ? base + __ffs(m) - 1 : T;
            }
        }
        if (tid < 3 * 64) (&s_bmax[0][0])[tid] = 0;
        __syncthreads();
        a = s_range[0];
        b = s_range[1];
    }
    const int n = b - a; /* rows of this CTA (may be 0) */

    const int slot0 = blockIdx.y * p.heads_per_cta;
    const int slot1 = min(slot0 + p.heads_per_cta, p.head_slots);

    auto slot_tensor = [&](int slot, int &h) {
        if (slot < p.heads[0]) { h = slot; return 0; }
        if (slot < p.heads[0] + p.heads[1]) { h = slot - p.heads[0]; return 1; }
        h = slot - p.heads[0] - p.heads[1];
        return 2;
    };
    /* Each thread copies, and later reads back, only its own 16-byte pieces: the
     * pipeline needs no barrier, only cp.async.wait_group. */
    auto issue = [&](int slot) {
        if (slot < slot1) {
            int h;
            const int ti = slot_tensor(slot, h);
            const int H = p.heads[ti];
            uint8_t *stage = smem + ((slot - slot0) % NS) * C::STAGE;
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * RP;
                if (r < n)
                    cp_async16(stage + (r * D + c * 8) * 2, p.src[ti] + ((size_t)(a + r) * H + h) * D + c * 8);
            }
        }
        cp_async_commit(); /* empty groups keep the count uniform */
    };

    bool bad = false;
#pragma unroll
    for (int i = 0; i < NS - 1; i++) issue(slot0 + i);

    for (int slot = slot0; slot < slot1; slot++) {
        const int li = slot - slot0;
        int h;
        const int ti = slot_tensor(slot, h);
        const int H = p.heads[ti];
        issue(slot + NS - 1);
        cp_async_wait<NS - 1>();
        const uint8_t *stage = smem + (li % NS) * C::STAGE;

        /* ---- 2. unpack (and check) this slot's rows */
        float x[NP][8];
        uint4 cur[NP];
#pragma unroll
        for (int q = 0; q < NP; q++) {
            const int r = r0 + q * RP;
            cur[q] = r < n ? *reinterpret_cast<const uint4 *>(stage + (r * D + c * 8) * 2) : make_uint4(0, 0, 0, 0);
            const uint32_t wv[4] = {cur[q].x, cur[q].y, cur[q].z, cur[q].w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                if (FP8) bad |= bf16x2_nonfinite(wv[j]);
                x[q][2 * j] = __uint_as_float(wv[j] << 16);
                x[q][2 * j + 1] = __uint_as_float(wv[j] & 0xffff0000u);
            }
        }

        /* ---- 3. Hadamard rotation of Q and K (same butterflies as flamia_ref_hadamard) */
        const bool rotate = p.hadamard && ti < 2;
        if (rotate) {
#pragma unroll
            for (int q = 0; q < NP; q++) {
#pragma unroll
                for (int len = 1; len < 8; len <<= 1)
#pragma unroll
                    for (int i = 0; i < 8; i += 2 * len)
#pragma unroll
                        for (int j = i; j < i + len; j++) {
                            const float u = x[q][j], v = x[q][j + len];
                            x[q][j] = __fadd_rn(u, v);
                            x[q][j + len] = __fsub_rn(u, v);
                        }
#pragma unroll
                for (int m = 1; m < TPR; m <<= 1) {
                    const bool upper = (c & m) != 0; /* holds x[i + len] of each pair */
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const float o = __shfl_xor_sync(0xffffffffu, x[q][j], m);
                        x[q][j] = upper ? __fsub_rn(o, x[q][j]) : __fadd_rn(x[q][j], o);
                    }
                }
#pragma unroll
                for (int j = 0; j < 8; j++) x[q][j] = __fmul_rn(x[q][j], p.had_norm);
            }
        }

        if constexpr (!FP8) {
            /* ---- BF16 kind: copy, or the rotated values rounded to BF16 */
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * RP;
                if (r >= n) continue;
                uint4 out = cur[q];
                if (rotate) {
                    uint32_t wv[4];
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        wv[j] = (uint32_t)flamia_bf16_bits(x[q][2 * j]) |
                                ((uint32_t)flamia_bf16_bits(x[q][2 * j + 1]) << 16);
                    out = make_uint4(wv[0], wv[1], wv[2], wv[3]);
                }
                *reinterpret_cast<uint4 *>(p.bf16[ti] + ((size_t)(a + r) * H + h) * D + c * 8) = out;
            }
        } else {
            /* ---- 4. row amax over the row's D/8 threads, then the group exponent */
            int e[NP];
            const int off = a - w0;
            const int bi = li % 3;
#pragma unroll
            for (int q = 0; q < NP; q++) {
                float m = 0.0f;
#pragma unroll
                for (int j = 0; j < 8; j++) m = fmaxf(m, fabsf(x[q][j]));
#pragma unroll
                for (int o = TPR / 2; o >= 1; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
                const int r = r0 + q * RP;
                if (GRAN == 1) {
                    e[q] = flamia_fmt_block_exponent(m, 0);
                } else if (c == 0 && r < n) {
                    /* non-negative floats order as their bit patterns */
                    atomicMax(&s_bmax[bi][s_tokbs[off + r] - a], __float_as_int(m));
                }
            }
            if (GRAN != 1) {
                __syncthreads(); /* (A) block maxima complete */
#pragma unroll
                for (int q = 0; q < NP; q++) {
                    const int r = r0 + q * RP;
                    e[q] = r < n ? flamia_fmt_block_exponent(__int_as_float(s_bmax[bi][s_tokbs[off + r] - a]), 0) : 0;
                }
                /* buffer (li+2)%3 is next written two slots on, after (A) of slot li+1;
                 * its last readers (slot li-1) are all past this slot's (A) */
                if (tid < 64) s_bmax[(li + 2) % 3][tid] = 0;
            }
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * RP;
                if (c == 0 && r < n) p.exps[ti][(size_t)(a + r) * H + h] = (int8_t)e[q];
            }

            /* ---- 5. E4M3 codes (and V's transposition tile) */
            const bool is_v = ti == 2;
#pragma unroll
            for (int q = 0; q < NP; q++) {
                const int r = r0 + q * RP;
                if (r >= n) continue;
                const int ex = e[q];
                float y[8];
                if (ex <= 126) {
                    const float s = flamia_pow2f(-ex);
#pragma unroll
                    for (int j = 0; j < 8; j++) y[j] = __fmul_rn(x[q][j], s);
                } else {
#pragma unroll
                    for (int j = 0; j < 8; j++) y[j] = flamia_ldexpf(x[q][j], -ex);
                }
                const uint32_t lo = flamia_cvt_e4m3x2(y[0], y[1]) | (flamia_cvt_e4m3x2(y[2], y[3]) << 16);
                const uint32_t hi = flamia_cvt_e4m3x2(y[4], y[5]) | (flamia_cvt_e4m3x2(y[6], y[7]) << 16);
                *reinterpret_cast<uint2 *>(p.codes[ti] + ((size_t)(a + r) * H + h) * D + c * 8) =
                    make_uint2(lo, hi);
                if (is_v) {
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        s_vt[(c * 8 + j) * VSTR + r] = (uint8_t)(lo >> (8 * j));
                        s_vt[(c * 8 + 4 + j) * VSTR + r] = (uint8_t)(hi >> (8 * j));
                    }
                }
            }
            if (is_v) {
                __syncthreads(); /* (B) tile complete */
                uint8_t *vt = p.vt + (size_t)h * D * p.t_pad;
                for (int k = tid; k < D * MAXR; k += kThreads) {
                    const int d = k / MAXR, i = k % MAXR;
                    if (i < n) vt[(size_t)d * p.t_pad + a + i] = s_vt[d * VSTR + i];
                }
                /* the last window also zeroes the pad tokens [T, t_pad) */
                const int pad = p.t_pad - T;
                if (blockIdx.x == gridDim.x - 1 && pad > 0)
                    for (int k = tid; k < D * 16; k += kThreads) {
                        const int d = k / 16, i = k % 16;
                        if (i < pad) vt[(size_t)d * p.t_pad + T + i] = 0;
                    }
                __syncthreads(); /* (C) tile free for the next V slot */
            }
        }
    }
    cp_async_wait<0>();

    if (FP8) {
        const unsigned any = __ballot_sync(0xffffffffu, bad);
        if (any && (tid & 31) == 0) atomicOr(p.err, 1);
    }
}

template <int D, int GRAN, bool FP8>
cudaError_t launch(const QuantParams &qp, dim3 grid, cudaStream_t stream) {
    const void *fn = (const void *)quantize_kernel<D, GRAN, FP8>;
    const size_t smem = Cfg<D, GRAN>::smem(FP8);
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return e;
    void *args[] = {const_cast<QuantParams *>(&qp)};
    return cudaLaunchKernel(fn, grid, dim3(kThreads), args, smem, stream);
}

template <int D>
cudaError_t dispatch(const QuantParams &qp, dim3 grid, enum flamia_sm90_kind kind, cudaStream_t stream) {
    switch (kind) {
    case FLAMIA_SM90_BF16: return launch<D, 1, false>(qp, grid, stream);
    case FLAMIA_SM90_MXFP8: return launch<D, 32, true>(qp, grid, stream);
    case FLAMIA_SM90_MXFP8_EXACT: return launch<D, 1, true>(qp, grid, stream);
    }
    return cudaErrorInvalidValue;
}

} // namespace

cudaError_t flamia_sm90_quantize(const struct flamia_sm90_problem *pb, const uint16_t *q, const uint16_t *k,
                                 const uint16_t *v, void *workspace, cudaStream_t stream) {
    const struct flamia_sm90_layout L = flamia_sm90_layout_of(pb);
    uint8_t *ws = (uint8_t *)workspace;
    QuantParams qp;
    qp.src[0] = q;
    qp.src[1] = k;
    qp.src[2] = v;
    qp.codes[0] = ws + L.q_codes;
    qp.codes[1] = ws + L.k_codes;
    qp.codes[2] = ws + L.v_codes;
    qp.exps[0] = (int8_t *)(ws + L.q_exp);
    qp.exps[1] = (int8_t *)(ws + L.k_exp);
    qp.exps[2] = (int8_t *)(ws + L.v_exp);
    qp.bf16[0] = (uint16_t *)(ws + L.q_bf16);
    qp.bf16[1] = (uint16_t *)(ws + L.k_bf16);
    qp.bf16[2] = (uint16_t *)(ws + L.v_bf16);
    qp.vt = ws + L.vt_codes;
    qp.err = (int *)(ws + L.err_flag);
    qp.cu = pb->cu_seqlens;
    qp.heads[0] = pb->heads_q;
    qp.heads[1] = pb->heads_kv;
    qp.heads[2] = pb->heads_kv;
    qp.T = pb->total_tokens;
    qp.num_docs = pb->num_docs;
    qp.t_pad = L.t_pad;
    qp.head_slots = pb->heads_q + 2 * pb->heads_kv;
    qp.hadamard = pb->hadamard;
    qp.had_norm = 1.0f / sqrtf((float)pb->head_dim); /* as flamia_ref_hadamard */

    /* Enough CTAs to fill 132 SMs many times over; up to 8 head slots per CTA
     * amortize the cu_seqlens search and keep the next slot's loads in flight. */
    const long long windows = (pb->total_tokens + 31) / 32;
    long long hpc = windows * qp.head_slots / 8192;
    if (hpc < 1) hpc = 1;
    if (hpc > 8) hpc = 8;
    qp.heads_per_cta = (int)hpc;
    const dim3 grid((unsigned)windows, (unsigned)((qp.head_slots + hpc - 1) / hpc));

    cudaError_t e = cudaMemsetAsync(qp.err, 0, sizeof(int), stream);
    if (e != cudaSuccess) return e;
    if (pb->head_dim == 128) return dispatch<128>(qp, grid, pb->kind, stream);
    if (pb->head_dim == 64) return dispatch<64>(qp, grid, pb->kind, stream);
    return cudaErrorInvalidValue;
}
