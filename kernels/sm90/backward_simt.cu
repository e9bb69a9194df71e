/*
 * backward_simt.cu - the backward's plain main kernel bwd_simt (backward.cu has the
 * overview): FP32 FMA on 32x32 blocks in shared memory, the reference's function to FP32
 * summation order. Runs the BF16 kind, and the FP8 kinds with FLAMIA_SM90_BWD=plain.
 */
#include <math.h>
#include <stdint.h>

#include "backward_common.cuh"
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"

namespace flamia_bwd {

/* ================================================================ 3a. plain kernel */
/* KIND: 0 BF16, 1 mxfp8 (dS 32x32 blocks), 2 mxfp8-exact (dS per row x 32 keys).
 * grid (num_docs, Hkv, ceil(max_seqlen / 32)); 256 threads; one 32-key block per CTA. */
/* element d of operand row r (token x head) as the plain kernel reads it: the BF16 value
 * (KIND 0) or the E4M3 code times its row's block exponent */
template <int KIND>
__device__ __forceinline__ float simt_operand(const uint16_t *bf16, const uint8_t *codes, const int8_t *exps, size_t r,
                                              int d) {
    return KIND == 0 ? flamia_bf16_value(bf16[r * kD + d]) : flamia_e4m3_dequant(codes[r * kD + d], exps[r]);
}

template <int KIND, bool DET> /* DET: deterministic dQ (p.dq_turn) */
__global__ void __launch_bounds__(256) bwd_simt(const MainParams p) {
    constexpr int LD = kD + 1;
    extern __shared__ float sm[];
    float *sK = sm, *sV = sK + 32 * LD, *sQ = sV + 32 * LD, *sDO = sQ + 32 * LD;
    float *sP = sDO + 32 * LD, *sS = sP + 32 * 33;
    float *sM = sS + 32 * 33, *sN = sM + 32, *sDl = sN + 32, *sRA = sDl + 32;
    /* deterministic dQ: the last key blocks first (dq_turn_wait's order) */
    const int doc = blockIdx.x, hk = blockIdx.y, kbk = DET ? (int)(gridDim.z - 1 - blockIdx.z) : (int)blockIdx.z;
    const int ds = p.cu[doc], len = p.cu[doc + 1] - ds;
    if (kbk * 32 >= len) return;
    const int tid = threadIdx.x;
    const int j0 = kbk * 32;
    /* K, V block, dequantized */
    for (int x = tid; x < 32 * kD; x += 256) {
        const int jj = x / kD, d = x % kD, j = j0 + jj;
        float kv = 0.f, vv = 0.f;
        if (j < len) {
            const size_t r = (size_t)(ds + j) * p.Hkv + hk;
            kv = simt_operand<KIND>(p.kb, p.k8, p.ke, r, d);
            vv = simt_operand<KIND>(p.vb, p.v8, p.ve, r, d);
        }
        sK[jj * LD + d] = kv;
        sV[jj * LD + d] = vv;
    }
    const int aj = tid >> 3, ad = (tid & 7) * 16; /* accumulator ownership: key aj, dims ad.. */
    float dk[16], dv[16];
#pragma unroll
    for (int x = 0; x < 16; x++) dk[x] = dv[x] = 0.f;
    const int nqb = (len + 31) / 32;
    for (int gi = 0; gi < p.group; gi++) {
        const int h = hk * p.group + gi;
        for (int qb = p.causal ? kbk : 0; qb < nqb; qb++) {
            const int i0 = qb * 32;
            __syncthreads();
            for (int x = tid; x < 32 * kD; x += 256) {
                const int ii = x / kD, d = x % kD, i = i0 + ii;
                float qv = 0.f, dov = 0.f;
                if (i < len) {
                    const size_t r = (size_t)(ds + i) * p.Hq + h;
                    qv = simt_operand<KIND>(p.qb, p.q8, p.qe, r, d);
                    dov = simt_operand<KIND>(p.dob, p.do8, p.doe, r, d);
                }
                sQ[ii * LD + d] = qv;
                sDO[ii * LD + d] = dov;
            }
            if (tid < 32) {
                const int i = i0 + tid;
                float m = 0.f, nr = 0.f, dl = 0.f;
                if (i < len) {
                    const size_t r = (size_t)(ds + i) * p.Hq + h;
                    m = p.row_frame[r];
                    nr = (float)exp2((double)m - (double)p.lse[r] / kLn2);
                    dl = p.delta[r];
                }
                sM[tid] = m;
                sN[tid] = nr;
                sDl[tid] = dl;
            }
            __syncthreads();
            /* S, dP, P, dS: thread -> row ii, keys jb..jb+3 */
            {
                const int ii = tid >> 3, jb = (tid & 7) * 4, i = i0 + ii;
                float s[4] = {0.f, 0.f, 0.f, 0.f}, dp[4] = {0.f, 0.f, 0.f, 0.f};
                for (int d = 0; d < kD; d++) {
                    const float qv = sQ[ii * LD + d], dov = sDO[ii * LD + d];
#pragma unroll
                    for (int x = 0; x < 4; x++) {
                        s[x] = fmaf(qv, sK[(jb + x) * LD + d], s[x]);
                        dp[x] = fmaf(dov, sV[(jb + x) * LD + d], dp[x]);
                    }
                }
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int j = j0 + jb + x;
                    const bool ok = i < len && j < len && (!p.causal || j <= i);
                    float P = 0.f, dS = 0.f;
                    if (ok) {
                        const float E = flamia_sm90::exp_frame_split_k63(s[x] * p.c, sM[ii]);
                        float pq;
                        if (KIND == 0) pq = flamia_round_bf16(E);
                        else pq = flamia_fmt_e4m3_decode(flamia_fmt_e4m3_encode(E * 256.f)) * 0.00390625f;
                        P = pq * sN[ii];
                        dS = P * (dp[x] - sDl[ii]);
                    }
                    sP[ii * 33 + jb + x] = P;
                    sS[ii * 33 + jb + x] = dS;
                }
            }
            __syncthreads();
            if (KIND != 0) {
                if (tid < 32) {
                    float a = 0.f;
                    for (int jj = 0; jj < 32; jj++) a = fmaxf(a, fabsf(sS[tid * 33 + jj]));
                    sRA[tid] = a;
                }
                __syncthreads();
                const int ii = tid >> 3, jb = (tid & 7) * 4;
                float a = sRA[ii];
                if (KIND == 1)
                    for (int r = 0; r < 32; r++) a = fmaxf(a, sRA[r]);
                const int e = flamia_fmt_block_exponent(a, 0);
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    float *ps = &sS[ii * 33 + jb + x];
                    *ps = flamia_e4m3_dequant(flamia_e4m3_quant(*ps, e), e);
                }
            } else {
                const int ii = tid >> 3, jb = (tid & 7) * 4;
#pragma unroll
                for (int x = 0; x < 4; x++) sS[ii * 33 + jb + x] = flamia_round_bf16(sS[ii * 33 + jb + x]);
            }
            __syncthreads();
            /* dV, dK for key aj */
            for (int ii = 0; ii < 32; ii++) {
                const float P = sP[ii * 33 + aj], dS = sS[ii * 33 + aj];
#pragma unroll
                for (int x = 0; x < 16; x++) {
                    dv[x] = fmaf(P, sDO[ii * LD + ad + x], dv[x]);
                    dk[x] = fmaf(dS, sQ[ii * LD + ad + x], dk[x]);
                }
            }
            /* dQ for row ai = aj */
            int *turn = DET ? p.dq_turn + (size_t)(ds + i0) * p.Hq + h : nullptr;
            const int rank = (p.causal ? qb : nqb - 1) - kbk; /* among qb's contributors, last .. 0 */
            if (DET) dq_turn_wait(turn, rank);
            {
                const int ii = aj, i = i0 + ii;
                float acc[16];
#pragma unroll
                for (int x = 0; x < 16; x++) acc[x] = 0.f;
                for (int jj = 0; jj < 32; jj++) {
                    const float dS = sS[ii * 33 + jj];
#pragma unroll
                    for (int x = 0; x < 16; x++) acc[x] = fmaf(dS, sK[jj * LD + ad + x], acc[x]);
                }
                if (i < len) {
                    float *dst = p.dq_acc + ((size_t)(ds + i) * p.Hq + h) * kD + ad;
#pragma unroll
                    for (int x = 0; x < 16; x += 2)
                        atomicAdd(reinterpret_cast<float2 *>(dst + x), make_float2(acc[x] * p.scale, acc[x + 1] * p.scale));
                }
            }
            if (DET) dq_turn_pass(turn, rank);
        }
    }
    const int j = j0 + aj;
#pragma unroll
    for (int x = 0; x < 16; x++) dk[x] *= p.scale;
    if (p.hadamard) { /* dims ad..ad+15 here (in-thread stages 1..8), 8 lanes per key (16..64) */
#pragma unroll
        for (int st = 0; st < 4; st++) {
            const int len2 = 1 << st;
#pragma unroll
            for (int x = 0; x < 16; x++)
                if ((x & len2) == 0) {
                    const float a = dk[x], b = dk[x + len2];
                    dk[x] = a + b;
                    dk[x + len2] = a - b;
                }
        }
#pragma unroll
        for (int st = 0; st < 3; st++) hadamard_lane_stage(dk, 1 << st, (tid >> st) & 1);
#pragma unroll
        for (int x = 0; x < 16; x++) dk[x] *= p.had_norm;
    }
    if (j < len) {
        const size_t r = ((size_t)(ds + j) * p.Hkv + hk) * kD + ad;
#pragma unroll
        for (int x = 0; x < 16; x += 2) {
            *reinterpret_cast<uint32_t *>(p.dk + r + x) = bf16x2(dk[x], dk[x + 1]);
            *reinterpret_cast<uint32_t *>(p.dv + r + x) = bf16x2(dv[x], dv[x + 1]);
        }
    }
}

/* ================================================================ host */

template <int KIND, bool DET> static cudaError_t launch_simt(const MainParams &mp, int num_docs, int max_seqlen,
                                                             cudaStream_t stream) {
    const int bytes = (4 * 32 * (kD + 1) + 2 * 32 * 33 + 4 * 32) * 4;
    static bool attr = false;
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(bwd_simt<KIND, DET>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess) return e;
        attr = true;
    }
    dim3 grid(num_docs, mp.Hkv, (max_seqlen + 31) / 32);
    bwd_simt<KIND, DET><<<grid, 256, bytes, stream>>>(mp);
    return cudaGetLastError();
}

cudaError_t launch_main_simt(enum flamia_sm90_kind kind, bool det, const MainParams &mp, int num_docs, int max_seqlen,
                             cudaStream_t stream) {
    if (kind == FLAMIA_SM90_BF16)
        return det ? launch_simt<0, true>(mp, num_docs, max_seqlen, stream) : launch_simt<0, false>(mp, num_docs, max_seqlen, stream);
    if (kind == FLAMIA_SM90_MXFP8)
        return det ? launch_simt<1, true>(mp, num_docs, max_seqlen, stream) : launch_simt<1, false>(mp, num_docs, max_seqlen, stream);
    return det ? launch_simt<2, true>(mp, num_docs, max_seqlen, stream) : launch_simt<2, false>(mp, num_docs, max_seqlen, stream);
}

} // namespace flamia_bwd
