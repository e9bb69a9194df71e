/*
 * ref64_gpu.cu - the FP64 textbook attention on the GPU (ref64_gpu.h): FP64 cuBLAS GEMMs
 * and two column kernels, one (document, query head, block of queries) at a time.
 *
 * Column-major throughout (cuBLAS): a head's rows of a [T][H][D] array are a D x L matrix
 * with leading dimension H D. For a block of nb queries starting at doc-local i0, with nk
 * keys (causal: those up to the block's last query; else all):
 *   S  (nk x nb) = scale K^T Q        P = softmax over each column (masked, lse out)
 *   O  (D x nb)  = V P                 dP = V^T dO
 *   dS = P (dP - D_i) scale            dQ = K dS
 *   dK (D x nk) += Q dS^T              dV += dO P^T      (over the group's heads, blocks)
 * Synchronous and allocating: a measuring tool, not a training path.
 */
#include <algorithm>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "flamia.h"
#include "flamia_internal.h"
#include "ref64_gpu.h"

namespace {

constexpr int kThreads = 256;

__global__ void widen(const float *x, double *y, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = x[i];
}

/* block-wide max or sum of one value per thread (all threads get the result) */
template <bool MAX> __device__ double block_reduce(double v, double *sh) {
    for (int o = 16; o; o >>= 1) {
        const double w = __shfl_xor_sync(0xffffffffu, v, o);
        v = MAX ? fmax(v, w) : v + w;
    }
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = sh[0];
    for (int w = 1; w < kThreads / 32; w++) v = MAX ? fmax(v, sh[w]) : v + sh[w];
    __syncthreads();
    return v;
}

/* Column c of S (query i0 + c): keys j < jend get exp(s - m) / l, keys jend .. nk - 1 zero;
 * lse = m + log l, written at lse[c * lse_stride]. */
__global__ void softmax_cols(double *S, int ld, int nk, int i0, int causal, int L, double *lse, int lse_stride) {
    __shared__ double sh[kThreads / 32];
    const int c = blockIdx.x, i = i0 + c, jend = causal ? i + 1 : L;
    double *col = S + (size_t)c * ld;
    double m = -INFINITY;
    for (int j = threadIdx.x; j < jend; j += kThreads) m = fmax(m, col[j]);
    m = block_reduce<true>(m, sh);
    double l = 0.0;
    for (int j = threadIdx.x; j < jend; j += kThreads) l += exp(col[j] - m);
    l = block_reduce<false>(l, sh);
    for (int j = threadIdx.x; j < nk; j += kThreads) col[j] = j < jend ? exp(col[j] - m) / l : 0.0;
    if (threadIdx.x == 0) lse[(size_t)c * lse_stride] = m + log(l);
}

/* Column c: dS = P (dP - D) scale with D = sum_j P dP, in place of dP */
__global__ void ds_cols(const double *P, double *dP, int ld, int nk, double scale) {
    __shared__ double sh[kThreads / 32];
    const double *p = P + (size_t)blockIdx.x * ld;
    double *dp = dP + (size_t)blockIdx.x * ld;
    double d = 0.0;
    for (int j = threadIdx.x; j < nk; j += kThreads) d += p[j] * dp[j];
    d = block_reduce<false>(d, sh);
    for (int j = threadIdx.x; j < nk; j += kThreads) dp[j] = p[j] * (dp[j] - d) * scale;
}

struct Buffers {
    double *q = nullptr, *k = nullptr, *v = nullptr, *dout = nullptr, *o = nullptr, *lse = nullptr;
    double *dq = nullptr, *dk = nullptr, *dv = nullptr, *s = nullptr, *dp = nullptr;
    float *stage = nullptr;
    cublasHandle_t blas = nullptr;
    ~Buffers() {
        double *all[] = {q, k, v, dout, o, lse, dq, dk, dv, s, dp};
        for (double *p : all) cudaFree(p);
        cudaFree(stage);
        if (blas) cublasDestroy(blas);
    }
};

flamia_status cuda_fail(cudaError_t e, const char *what) {
    cudaGetLastError();
    return flamia_fail(e == cudaErrorMemoryAllocation ? FLAMIA_ERR_NOMEM : FLAMIA_ERR_CUDA,
                       "flamia_cuda_ref64: %s: %s", what, cudaGetErrorString(e));
}

/* host floats -> device doubles (through one float staging buffer of the largest size) */
cudaError_t upload(const float *h, size_t n, float *stage, double *d) {
    cudaError_t e = cudaMemcpy(stage, h, n * sizeof(float), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return e;
    widen<<<1024, kThreads>>>(stage, d, n);
    return cudaGetLastError();
}

} // namespace

extern "C" flamia_status flamia_cuda_ref64(const flamia_shape *s, const float *q, const float *k, const float *v,
                                           const float *dout, double *o, double *lse, double *dq, double *dk,
                                           double *dv) {
    flamia_clear_error();
    if (!s) return flamia_fail(FLAMIA_ERR_INVALID, "flamia_cuda_ref64: shape is NULL");
    flamia_status st = flamia_shape_validate(s);
    if (st) return st;
    if (!q || !k || !v || !o || !lse) return flamia_fail(FLAMIA_ERR_INVALID, "flamia_cuda_ref64: NULL pointer");
    if (dout && (!dq || !dk || !dv))
        return flamia_fail(FLAMIA_ERR_INVALID, "flamia_cuda_ref64: dout given but dq, dk or dv is NULL");
    const int T = s->total_tokens, Hq = s->heads_q, Hkv = s->heads_kv, D = s->head_dim, G = Hq / Hkv;
    const size_t nq = (size_t)T * Hq * D, nkv = (size_t)T * Hkv * D;
    int lmax = 0;
    for (int d = 0; d < s->num_docs; d++) lmax = std::max(lmax, s->cu_seqlens[d + 1] - s->cu_seqlens[d]);
    if (T == 0 || lmax == 0) return FLAMIA_OK;
    /* queries per block: the two score buffers within ~8 GB */
    const long long budget = 1ll << 30; /* doubles per buffer */
    const int block = (int)std::max(64ll, std::min<long long>(std::min(lmax, 4096), budget / lmax));

    Buffers b;
    cudaError_t e = cudaSuccess;
#define TRY(call, what)                                                                                                \
    do {                                                                                                               \
        e = (call);                                                                                                    \
        if (e != cudaSuccess) return cuda_fail(e, what);                                                               \
    } while (0)
    TRY(cudaMalloc(&b.q, nq * 8), "device memory for Q");
    TRY(cudaMalloc(&b.k, nkv * 8), "device memory for K");
    TRY(cudaMalloc(&b.v, nkv * 8), "device memory for V");
    TRY(cudaMalloc(&b.o, nq * 8), "device memory for O");
    TRY(cudaMalloc(&b.lse, (size_t)T * Hq * 8), "device memory for lse");
    TRY(cudaMalloc(&b.stage, nq * 4), "device staging memory");
    TRY(cudaMalloc(&b.s, (size_t)lmax * block * 8), "device memory for the scores");
    if (dout) {
        TRY(cudaMalloc(&b.dout, nq * 8), "device memory for dO");
        TRY(cudaMalloc(&b.dq, nq * 8), "device memory for dQ");
        TRY(cudaMalloc(&b.dk, nkv * 8), "device memory for dK");
        TRY(cudaMalloc(&b.dv, nkv * 8), "device memory for dV");
        TRY(cudaMalloc(&b.dp, (size_t)lmax * block * 8), "device memory for dP");
        TRY(cudaMemset(b.dk, 0, nkv * 8), "zeroing dK");
        TRY(cudaMemset(b.dv, 0, nkv * 8), "zeroing dV");
        TRY(upload(dout, nq, b.stage, b.dout), "uploading dO");
    }
    TRY(upload(q, nq, b.stage, b.q), "uploading Q");
    TRY(upload(k, nkv, b.stage, b.k), "uploading K");
    TRY(upload(v, nkv, b.stage, b.v), "uploading V");
    if (cublasCreate(&b.blas) != CUBLAS_STATUS_SUCCESS)
        return flamia_fail(FLAMIA_ERR_CUDA, "flamia_cuda_ref64: cublasCreate failed");
    cublasSetMathMode(b.blas, CUBLAS_DEFAULT_MATH);

    const double scale = flamia_effective_scale(s), one = 1.0, zero = 0.0;
    const int ldq = Hq * D, ldk = Hkv * D;
    cublasStatus_t bs = CUBLAS_STATUS_SUCCESS;
#define GEMM(ta, tb, m, n, kk, alpha, A, lda, B, ldb, beta, C, ldc)                                                     \
    do {                                                                                                               \
        bs = cublasDgemm(b.blas, ta, tb, m, n, kk, alpha, A, lda, B, ldb, beta, C, ldc);                                \
        if (bs != CUBLAS_STATUS_SUCCESS)                                                                               \
            return flamia_fail(FLAMIA_ERR_CUDA, "flamia_cuda_ref64: cublasDgemm failed (status %d)", (int)bs);         \
    } while (0)
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int h = 0; h < Hq; h++) {
            const int hk = h / G;
            const double *K = b.k + ((size_t)d0 * Hkv + hk) * D, *V = b.v + ((size_t)d0 * Hkv + hk) * D;
            for (int i0 = 0; i0 < L; i0 += block) {
                const int nb = std::min(block, L - i0), nk = s->causal ? i0 + nb : L;
                const size_t row = ((size_t)(d0 + i0) * Hq + h);
                const double *Q = b.q + row * D;
                GEMM(CUBLAS_OP_T, CUBLAS_OP_N, nk, nb, D, &scale, K, ldk, Q, ldq, &zero, b.s, lmax);
                softmax_cols<<<nb, kThreads>>>(b.s, lmax, nk, i0, s->causal, L, b.lse + row, Hq);
                TRY(cudaGetLastError(), "softmax kernel");
                GEMM(CUBLAS_OP_N, CUBLAS_OP_N, D, nb, nk, &one, V, ldk, b.s, lmax, &zero, b.o + row * D, ldq);
                if (!dout) continue;
                const double *dO = b.dout + row * D;
                GEMM(CUBLAS_OP_T, CUBLAS_OP_N, nk, nb, D, &one, V, ldk, dO, ldq, &zero, b.dp, lmax);
                ds_cols<<<nb, kThreads>>>(b.s, b.dp, lmax, nk, scale);
                TRY(cudaGetLastError(), "dS kernel");
                GEMM(CUBLAS_OP_N, CUBLAS_OP_N, D, nb, nk, &one, K, ldk, b.dp, lmax, &zero, b.dq + row * D, ldq);
                GEMM(CUBLAS_OP_N, CUBLAS_OP_T, D, nk, nb, &one, Q, ldq, b.dp, lmax, &one,
                     b.dk + ((size_t)d0 * Hkv + hk) * D, ldk);
                GEMM(CUBLAS_OP_N, CUBLAS_OP_T, D, nk, nb, &one, dO, ldq, b.s, lmax, &one,
                     b.dv + ((size_t)d0 * Hkv + hk) * D, ldk);
            }
        }
    }
#undef GEMM
    TRY(cudaMemcpy(o, b.o, nq * 8, cudaMemcpyDeviceToHost), "copying O back");
    TRY(cudaMemcpy(lse, b.lse, (size_t)T * Hq * 8, cudaMemcpyDeviceToHost), "copying lse back");
    if (dout) {
        TRY(cudaMemcpy(dq, b.dq, nq * 8, cudaMemcpyDeviceToHost), "copying dQ back");
        TRY(cudaMemcpy(dk, b.dk, nkv * 8, cudaMemcpyDeviceToHost), "copying dK back");
        TRY(cudaMemcpy(dv, b.dv, nkv * 8, cudaMemcpyDeviceToHost), "copying dV back");
    }
#undef TRY
    return FLAMIA_OK;
}
