/*
 * l2_bench.cu - the L2 rates a backward with 64-key CTAs (docs/hopper-port.md, next steps
 * 1 (d)) would need, measured before anyone writes that kernel.
 *
 * That division reads every query tile twice as often and reduce-adds dQ twice as often
 * as today's kernel: at 16x4096 about 23 GB of tile reads and 17 GB of FP32 reduce-adds
 * per backward, 2.3 and 1.7 TB/s at today's 10 ms, 3.3 and 2.5 TB/s at a hoped-for 7 ms.
 * Three kernels move 16 KB blocks, as the real kernel's tiles and dQ boxes are, with one
 * thread per CTA issuing bulk copies and 264 CTAs (two per SM):
 *   read    cp.async.bulk global -> shared, 4 blocks in flight per CTA (tile loads);
 *   reduce  cp.reduce.async.bulk .add.f32 shared -> global, 8 blocks in flight (dQ adds);
 *   both    even CTAs read, odd CTAs reduce-add, at once.
 * Each over a working set that fits in L2 (24 MB: the resident tiles and dQ rows of a
 * backward are a few MB per document) and one that does not (512 MB), as a reference.
 * Before timing, a small run checks that the reduce-adds land: every float of a 16 KB
 * region gets a known number of adds of 1.0 (exit status 1 when any float is wrong).
 *
 * Build (repo root): nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a
 *   -Ikernels/sm90 dev/backward/l2_bench.cu -o dev/backward/bin/l2_bench
 * Run (device): dev/backward/bin/l2_bench [iters per CTA, default 2000]
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sm90_ptx.cuh"

using namespace flamia_sm90;

namespace {

constexpr int kBlock = 16384;            /* bytes per bulk copy */
constexpr int kReadSlots = 4, kAddSlots = 8;

__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void bulk_reduce_add_f32(void *dst, uint32_t src, uint32_t bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

/* block b of CTA c at iteration i: spread over the working set of nblocks blocks */
__device__ __forceinline__ size_t block_of(int c, int i, size_t nblocks) {
    return ((size_t)c * 7919u + (size_t)i * 104729u) % nblocks;
}

/* mode 0: read, 1: reduce-add, 2: even CTAs read and odd ones reduce-add */
__global__ void __launch_bounds__(128) l2_kernel(uint8_t *ws, size_t nblocks, int iters, int mode, float value) {
    extern __shared__ __align__(1024) uint8_t smem[];
    __shared__ uint64_t bars[kReadSlots];
    const bool reader = mode == 0 || (mode == 2 && (blockIdx.x & 1) == 0);
    if (!reader) { /* the reduce source: value everywhere, visible to the async proxy */
        float *f = (float *)smem;
        for (int i = threadIdx.x; i < kBlock / 4; i += blockDim.x) f[i] = value;
        fence_proxy_async();
    }
    if (threadIdx.x == 0 && reader)
        for (int s = 0; s < kReadSlots; s++) mbar_init(smem_u32(&bars[s]), 1);
    __syncthreads();
    if (threadIdx.x != 0) return;
    if (reader) {
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        for (int i = 0; i < iters; i++) {
            const int s = i % kReadSlots;
            if (i >= kReadSlots) mbar_wait(smem_u32(&bars[s]), (uint32_t)(((i / kReadSlots) - 1) & 1));
            mbar_expect_tx(smem_u32(&bars[s]), kBlock);
            bulk_load(smem_u32(smem + s * kBlock), ws + block_of(blockIdx.x, i, nblocks) * kBlock, kBlock,
                      smem_u32(&bars[s]));
        }
        for (int i = iters - kReadSlots; i < iters; i++)
            if (i >= 0) mbar_wait(smem_u32(&bars[i % kReadSlots]), (uint32_t)((i / kReadSlots) & 1));
    } else {
        for (int i = 0; i < iters; i++) {
            bulk_reduce_add_f32(ws + block_of(blockIdx.x, i, nblocks) * kBlock, smem_u32(smem), kBlock);
            bulk_commit();
            bulk_wait_read<kAddSlots - 1>();
        }
        bulk_wait_all();
    }
}

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "l2_bench: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
            exit(2);                                                                           \
        }                                                                                      \
    } while (0)

} // namespace

int main(int argc, char **argv) {
    const int iters = argc > 1 ? atoi(argv[1]) : 2000;
    const size_t smem = kReadSlots * kBlock;
    CK(cudaFuncSetAttribute(l2_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int grid = 2 * sms;
    const size_t big = (size_t)512 << 20;
    uint8_t *ws;
    CK(cudaMalloc(&ws, big));

    /* the reduce-adds land: 4 CTAs x 6 adds of 1.0 into one 16 KB block -> 24.0 each */
    CK(cudaMemset(ws, 0, kBlock));
    l2_kernel<<<4, 128, smem>>>(ws, 1, 6, 1, 1.0f);
    CK(cudaDeviceSynchronize());
    static float check[kBlock / 4];
    CK(cudaMemcpy(check, ws, kBlock, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < kBlock / 4; i++) bad += check[i] != 24.0f;
    printf("reduce-add check: %d of %d floats wrong (each should be 24.0)\n", bad, kBlock / 4);
    if (bad) return 1;
    CK(cudaMemset(ws, 0, big));

    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    const char *names[3] = {"read", "reduce-add", "both (half the CTAs each)"};
    const size_t sets[2] = {(size_t)24 << 20, big};
    printf("%d CTAs (2 per SM), 16 KB blocks, %d per CTA\n", grid, iters);
    printf("| mode | working set | GB/s (median of 5) |\n|---|---|---|\n");
    for (int m = 0; m < 3; m++)
        for (size_t set : sets) {
            const size_t nblocks = set / kBlock;
            float ms[5];
            l2_kernel<<<grid, 128, smem>>>(ws, nblocks, iters / 4, m, 0.f); /* warm-up */
            for (int r = 0; r < 5; r++) {
                CK(cudaEventRecord(t0));
                l2_kernel<<<grid, 128, smem>>>(ws, nblocks, iters, m, 0.f);
                CK(cudaEventRecord(t1));
                CK(cudaEventSynchronize(t1));
                CK(cudaEventElapsedTime(&ms[r], t0, t1));
            }
            for (int a = 0; a < 5; a++)
                for (int b = a + 1; b < 5; b++)
                    if (ms[b] < ms[a]) { float x = ms[a]; ms[a] = ms[b]; ms[b] = x; }
            const double bytes = (double)grid * iters * kBlock;
            printf("| %s | %zu MB | %.0f |\n", names[m], set >> 20, bytes / (ms[2] * 1e-3) / 1e9);
        }
    CK(cudaGetLastError());
    return 0;
}
