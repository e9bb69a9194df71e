/*
 * shape_bench.cu - wgmma throughput by shape and warpgroup count on one H200 (fortieth
 * session): what a backward with four consumer warpgroups (keys x head-dim halves, docs/
 * hopper-port.md (i)) would get from the tensor cores with its smaller N and shared-memory A
 * operands, against today's shapes at two warpgroups. Each warpgroup loops: fence, CHAIN
 * wgmmas over 32-byte k steps of a 128-byte-swizzled tile, commit, wait for all (the backward's
 * pattern: each product waited before its element-wise use). Operands are bounded random codes;
 * one CTA per SM, 132 CTAs. Prints TFLOP/s (dense, whole GPU) per configuration.
 * Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/sm90 \
 *        dev/backward/shape_bench/shape_bench.cu -o dev/backward/shape_bench/shape_bench
 */
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#include "sm90_ptx.cuh"
#include "wgmma_shapes.cuh"

using namespace flamia_sm90;

constexpr int kIter = 4096;
constexpr int kSmem = 4 * 8192 + 16384 + 1024; /* A per warpgroup (64 x 128 B), one shared B (<= 128 x 128 B) */

template <int KIND, int N, bool RS>
__device__ __forceinline__ void one(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t da, uint64_t db, int sd) {
    if constexpr (KIND == 0) {
        if constexpr (N == 32) { if constexpr (RS) wg_e4m3_rs_n32(d, a, db, sd); else wg_e4m3_ss_n32(d, da, db, sd); }
        if constexpr (N == 64) { if constexpr (RS) wg_e4m3_rs_n64(d, a, db, sd); else wg_e4m3_ss_n64(d, da, db, sd); }
        if constexpr (N == 128) { if constexpr (RS) wg_e4m3_rs_n128(d, a, db, sd); else wg_e4m3_ss_n128(d, da, db, sd); }
    } else {
        if constexpr (N == 32) { if constexpr (RS) wg_f16_rs_n32(d, a, db, sd); else wg_f16_ss_n32(d, da, db, sd); }
        if constexpr (N == 64) { if constexpr (RS) wg_f16_rs_n64(d, a, db, sd); else wg_f16_ss_n64(d, da, db, sd); }
        if constexpr (N == 128) { if constexpr (RS) wg_f16_rs_n128(d, a, db, sd); else wg_f16_ss_n128(d, da, db, sd); }
    }
}

template <int NWG, int KIND, int N, bool RS, int CHAIN>
__global__ void __launch_bounds__(128 * NWG, 1) bench(float *out) {
    extern __shared__ __align__(1024) uint8_t raw[];
    uint8_t *smem = raw + ((1024u - (smem_u32(raw) & 1023u)) & 1023u);
    const int tid = threadIdx.x, wg = tid >> 7;
    /* bounded codes: E4M3 bytes & 0x37 (no NaN, |x| < 1), F16 pairs of such bytes (small normals) */
    for (int i = tid; i < kSmem - 1024; i += blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u + 12345u;
        smem[i] = (uint8_t)((h >> 13) & 0x37);
    }
    __syncthreads();
    const uint64_t da = desc_sw128(smem_u32(smem + wg * 8192)), db = desc_sw128(smem_u32(smem + 4 * 8192));
    uint32_t a[4];
#pragma unroll
    for (int i = 0; i < 4; i++) a[i] = 0x30303030u ^ (uint32_t)(tid * 0x01010101u & 0x07070707u);
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; i++) d[i] = 0.f;
    for (int it = 0; it < kIter; it++) {
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < CHAIN; k++) one<KIND, N, RS>(d, a, desc_advance(da, (k & 3) * 32), desc_advance(db, (k & 3) * 32), 1);
        wgmma_commit();
        wgmma_wait<0>();
        reg_fence(d);
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < N / 2; i++) s += d[i];
    out[blockIdx.x * blockDim.x + tid] = s;
}

template <int NWG, int KIND, int N, bool RS, int CHAIN>
static void run(const char *what, float *out) {
    auto k = bench<NWG, KIND, N, RS, CHAIN>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    const int grid = 132;
    k<<<grid, 128 * NWG, kSmem>>>(out); /* warm-up */
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 5; r++) {
        cudaEventRecord(e0);
        k<<<grid, 128 * NWG, kSmem>>>(out);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (ms < best) best = ms;
    }
    cudaError_t err = cudaGetLastError();
    const double kdim = KIND == 0 ? 32 : 16;
    const double flops = 2.0 * 64 * N * kdim * CHAIN * kIter * NWG * grid;
    printf("%-44s %d WG  %s m64n%-3d chain %d : %7.1f TFLOP/s  (%.3f ms)%s\n", what, NWG, KIND ? "f16 " : "e4m3", N,
           CHAIN, flops / (best * 1e-3) / 1e12, best, err == cudaSuccess ? "" : cudaGetErrorString(err));
}

int main() {
    float *out;
    cudaMalloc(&out, 132 * 512 * sizeof(float));
    printf("== today's backward (2 consumer warpgroups)\n");
    run<2, 0, 64, false, 4>("S^T / dP^T (SS n64, 4 k-steps)", out);
    run<2, 0, 64, false, 2>("dQ chain (SS n64, 2 k-steps)", out);
    run<2, 0, 128, true, 1>("dK partial (RS n128, 1 k-step)", out);
    run<2, 1, 128, true, 4>("dV (F16 RS n128, 4 k-steps)", out);
    printf("== four warpgroups (keys x dim halves)\n");
    run<4, 0, 32, false, 4>("S^T / dP^T, 32 queries a WG (SS n32)", out);
    run<4, 0, 64, false, 4>("S^T / dP^T, 64 queries a WG (SS n64)", out);
    run<4, 0, 64, false, 2>("dK from shared dS^T (SS n64, 2 k-steps)", out);
    run<4, 0, 64, true, 2>("dK from registers (RS n64, 2 k-steps)", out);
    run<4, 0, 32, false, 4>("dQ, 32 dims a WG (SS n32, 4 k-steps)", out);
    run<4, 1, 64, false, 4>("dV from shared P^T (F16 SS n64)", out);
    run<4, 1, 64, true, 4>("dV from registers (F16 RS n64)", out);
    printf("== references\n");
    run<2, 0, 128, false, 4>("SS n128, 2 WG", out);
    run<4, 0, 128, false, 4>("SS n128, 4 WG", out);
    run<2, 0, 64, false, 16>("SS n64, 2 WG, long chain", out);
    run<4, 0, 32, false, 16>("SS n32, 4 WG, long chain", out);
    run<4, 0, 64, false, 16>("SS n64, 4 WG, long chain", out);
    cudaFree(out);
    return 0;
}
