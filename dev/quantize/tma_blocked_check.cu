/*
 * tma_blocked_check.cu - can the backward read a blocked transposed layout by TMA?
 * (sixty-second session; the follow-up v12b's probe asks for.)
 *
 * Today's transposed codes (Q^T, K^T, V^T) are [h][D][t_vpad]: quantize writes them as 32-byte
 * pieces t_vpad bytes apart. The blocked layout [h][t_vpad/32][D][32] keeps each 32-token
 * block's [D][32] contiguous (4 KB). A 4-D map with dims (32 tokens, blocks, D, h) and the
 * non-monotonic byte strides (D x 32, 32, t_vpad x D) has a box (32, 4, D, 1) whose bytes, in
 * box order, are [D][4 blocks][32] = [D][128 tokens]: today's tile before the swizzle. Whether the
 * 128-byte swizzle of a 32-byte inner box lands as today's 128-byte inner box does is what this
 * program checks, byte for byte, on every tile of a random buffer. It then times both maps
 * reading the whole buffer (2 CTAs an SM, 4 tiles in flight a CTA) to see what the 32-byte inner
 * box costs TMA. Prints "match" lines and a two-row GB/s table. Exit 1 on any mismatch.
 *
 * Result (sixty-third session, H100): the blocked copy faults; compute-sanitizer reports an
 * out-of-range shared address in copy_tiles<true>, so a 32-byte inner box under the 128-byte
 * swizzle does not land as a [D][128] tile in 16 KB (perf-notes, "Quantize and peers").
 *
 * Build (here or on the device): nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a
 *   -Ikernels/sm90 -o build-carry/tma_blocked_check dev/quantize/tma_blocked_check.cu
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm90_ptx.cuh"
#include "sm90_tma_host.cuh"

using namespace flamia_sm90;

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

constexpr int kD = 128, kBoxTokens = 128, kTile = kD * kBoxTokens;

/* one tile at token position t of head h: BLOCKED picks the 4-D map's coordinates */
template <bool BLOCKED>
__device__ __forceinline__ void load_tile(uint32_t dst, const CUtensorMap *map, int t, int h, uint32_t bar) {
    if (BLOCKED)
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                     "l"((uint64_t)map), "r"(0), "r"(t / 32), "r"(0), "r"(h), "r"(bar)
                     : "memory");
    else
        tma_load_3d(dst, map, t, 0, h, bar);
}

/* CTA b copies tile b (of heads x tiles) into out[b][kTile] exactly as it lands in shared memory */
template <bool BLOCKED>
__global__ void copy_tiles(const __grid_constant__ CUtensorMap map, int tiles_per_head, uint8_t *out) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    __shared__ uint64_t bar;
    const int h = blockIdx.x / tiles_per_head, t = (blockIdx.x % tiles_per_head) * kBoxTokens;
    if (threadIdx.x == 0) {
        mbar_init(smem_u32(&bar), 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_expect_tx(smem_u32(&bar), kTile);
        load_tile<BLOCKED>(smem_u32(smem), &map, t, h, smem_u32(&bar));
    }
    mbar_wait(smem_u32(&bar), 0);
    for (int i = threadIdx.x; i < kTile / 16; i += blockDim.x)
        reinterpret_cast<uint4 *>(out + (size_t)blockIdx.x * kTile)[i] = reinterpret_cast<const uint4 *>(smem)[i];
}

/* bandwidth: each CTA walks tiles blockIdx.x, + gridDim.x, ... with kStages loads in flight;
 * one thread issues and waits (the data is not read: TMA's own rate) */
constexpr int kStages = 4;
template <bool BLOCKED>
__global__ void stream_tiles(const __grid_constant__ CUtensorMap map, int tiles_per_head, int total, int *sink) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    __shared__ uint64_t bars[kStages];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < kStages; s++) mbar_init(smem_u32(&bars[s]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    int k = 0;
    for (int b = blockIdx.x; b < total; b += gridDim.x, k++) {
        const int s = k % kStages;
        if (k >= kStages) mbar_wait(smem_u32(&bars[s]), ((k / kStages) - 1) & 1);
        mbar_expect_tx(smem_u32(&bars[s]), kTile);
        load_tile<BLOCKED>(smem_u32(smem + s * kTile), &map, (b % tiles_per_head) * kBoxTokens, b / tiles_per_head,
                           smem_u32(&bars[s]));
    }
    for (int j = k - kStages < 0 ? 0 : k - kStages; j < k; j++) mbar_wait(smem_u32(&bars[j % kStages]), (j / kStages) & 1);
    if (smem[0] == 0x5a && smem[1] == 0xa5 && smem[2] == 0x3c) atomicAdd(sink, 1); /* keeps the loads live */
}

static bool encode_blocked(CUtensorMap *map, void *base, int t_vpad, int heads) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return false;
    const cuuint64_t dims[4] = {32, (cuuint64_t)t_vpad / 32, kD, (cuuint64_t)heads};
    const cuuint64_t strides[3] = {(cuuint64_t)kD * 32, 32, (cuuint64_t)t_vpad * kD};
    const cuuint32_t box[4] = {32, kBoxTokens / 32, kD, 1};
    const cuuint32_t estr[4] = {1, 1, 1, 1};
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, base, dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) fprintf(stderr, "blocked map: cuTensorMapEncodeTiled returned %d\n", (int)r);
    return r == CUDA_SUCCESS;
}

int main(int argc, char **argv) {
    const int heads = 16, t_vpad = argc > 1 ? atoi(argv[1]) : 65536; /* 16x4096's Q^T: 134 MB */
    const int tiles_per_head = t_vpad / kBoxTokens, total = heads * tiles_per_head;
    const size_t bytes = (size_t)heads * kD * t_vpad;
    uint8_t *h_flat = (uint8_t *)malloc(bytes), *h_blk = (uint8_t *)malloc(bytes);
    srand((unsigned)time(NULL));
    for (size_t i = 0; i < bytes; i++) h_flat[i] = (uint8_t)(rand() >> 7);
    for (int h = 0; h < heads; h++)
        for (int d = 0; d < kD; d++)
            for (int t = 0; t < t_vpad; t++)
                h_blk[(((size_t)h * (t_vpad / 32) + t / 32) * kD + d) * 32 + t % 32] =
                    h_flat[((size_t)h * kD + d) * t_vpad + t];
    uint8_t *d_flat, *d_blk, *d_out_flat, *d_out_blk;
    int *d_sink;
    CK(cudaMalloc(&d_flat, bytes));
    CK(cudaMalloc(&d_blk, bytes));
    CK(cudaMalloc(&d_out_flat, bytes));
    CK(cudaMalloc(&d_out_blk, bytes));
    CK(cudaMalloc(&d_sink, 4));
    CK(cudaMemcpy(d_flat, h_flat, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_blk, h_blk, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_out_flat, 0xff, bytes));
    CK(cudaMemset(d_out_blk, 0x00, bytes)); /* poisoned differently: an unwritten byte cannot match */
    CUtensorMap m_flat, m_blk;
    if (!flamia_tma_transposed_codes(&m_flat, d_flat, t_vpad, kD, heads, kBoxTokens)) {
        fprintf(stderr, "today's map: encode failed\n");
        return 2;
    }
    if (!encode_blocked(&m_blk, d_blk, t_vpad, heads)) return 2;

    const int smem1 = kTile + 1024, smemS = kStages * kTile + 1024;
    CK(cudaFuncSetAttribute(copy_tiles<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem1));
    CK(cudaFuncSetAttribute(copy_tiles<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem1));
    CK(cudaFuncSetAttribute(stream_tiles<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smemS));
    CK(cudaFuncSetAttribute(stream_tiles<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smemS));
    /* one synchronization per map, so that a fault names its map */
    copy_tiles<false><<<total, 128, smem1>>>(m_flat, tiles_per_head, d_out_flat);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize()); /* today's 3-D map */
    copy_tiles<true><<<total, 128, smem1>>>(m_blk, tiles_per_head, d_out_blk);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize()); /* the blocked 4-D map */
    uint8_t *o_flat = (uint8_t *)malloc(bytes), *o_blk = (uint8_t *)malloc(bytes);
    CK(cudaMemcpy(o_flat, d_out_flat, bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(o_blk, d_out_blk, bytes, cudaMemcpyDeviceToHost));
    size_t diff = 0, first = (size_t)-1;
    for (size_t i = 0; i < bytes; i++)
        if (o_flat[i] != o_blk[i]) {
            if (first == (size_t)-1) first = i;
            diff++;
        }
    /* today's landing must itself be the sw128 tile of the flat layout (the check's own check) */
    size_t selfdiff = 0;
    for (int b = 0; b < total; b += 997) {
        const int h = b / tiles_per_head, t0 = (b % tiles_per_head) * kBoxTokens;
        for (int d = 0; d < kD; d++)
            for (int c = 0; c < kBoxTokens; c++) {
                const size_t s = (size_t)b * kTile + d * 128 + (((c >> 4) ^ (d & 7)) << 4) + (c & 15);
                selfdiff += o_flat[s] != h_flat[((size_t)h * kD + d) * t_vpad + t0 + c];
            }
    }
    printf("match: today's map vs its sw128 model: %zu bytes differ (sampled tiles)\n", selfdiff);
    printf("match: blocked 4-D map vs today's map, %d tiles: %zu of %zu bytes differ", total, diff, bytes);
    if (diff) printf(" (first at tile %zu, byte %zu)", first / kTile, first % kTile);
    printf("\n");

    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("%-28s %10s %10s\n", "map (16 heads, D 128)", "ms", "GB/s");
    for (int blocked = 0; blocked < 2; blocked++) {
        float best = 1e30f;
        for (int rep = 0; rep < 7; rep++) {
            CK(cudaEventRecord(e0));
            if (blocked)
                stream_tiles<true><<<2 * sms, 32, smemS>>>(m_blk, tiles_per_head, total, d_sink);
            else
                stream_tiles<false><<<2 * sms, 32, smemS>>>(m_flat, tiles_per_head, total, d_sink);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep > 0 && ms < best) best = ms;
        }
        printf("%-28s %10.3f %10.0f\n", blocked ? "blocked [h][t/32][D][32]" : "today [h][D][t_vpad]", best,
               bytes / (best * 1e6));
    }
    return (diff || selfdiff) ? 1 : 0;
}
