/*
 * backward_dq.cu - the split deterministic dQ (sixty-fourth session): in the deterministic mode,
 * when the workspace holds the split regions (sm90_launch.h, flamia_sm90_dq_split_fits), the FP8
 * main kernel (dQ mode kDqSplit, backward_fp8.cu) stores each sub-step's dQ operand - the dS codes
 * [query][key] of its four 32-key blocks, unshifted: numerics.md 4.6's exact option (v149, eighty-first
 * session; the reduce-add modes fold each pair of blocks) - and G = eDS + EKmax per (key block, query)
 * as int16, instead of adding dQ into dq_accum. Here, per (query tile, query head):
 *   dQ = sum over the key tiles n = 0, 1, ... and their key blocks kb = 0..3 of 2^G(kb, row) scale (dS_kb K_kb)
 * in registers, in that order (deterministic by construction: no dq_accum, no turns, no bwd_dq_out),
 * rotated back when hadamard, BF16 out. Against the reduce-add modes: the lower block of a pair keeps
 * its subnormal entries, and the FP32 summation order differs.
 *
 * The backward runs both kernels once per chunk of kv heads, as many heads as the workspace holds
 * (all of them with the size flamia_cuda_workspace_size asks for, under its cap).
 *
 * dq_split: a persistent grid (one CTA an SM), 384 threads: warpgroup 0's thread 0 claims items from
 * the chunk's counter (ds_next) and loads their tiles by TMA into 6 stages (dS [128 queries][128 B] and K^T
 * [128 dims][128 B], 128-byte swizzle, and the 1 KB of G); warpgroups 1 and 2 take 64
 * query rows each: per key tile four m64n128k32 products (one per key block) into a partial,
 * each added with its row factor (two chains of two, one per pair, before v149). Items run head by head, each head's query tiles from the
 * batch's last back to its first, so that the CTAs resident together read one or two documents' K^T
 * (from L2) and the run ends on short causal items. The stream is DRAM-bound: its skeleton
 * (dev/backward/l_sketch, L_ROW128 with L_PERSIST=2) read the dS codes at 77 % of an H100's bandwidth.
 */
#include <cuda.h>
#include <stdint.h>

#include <cub/block/block_scan.cuh>

#include "backward_common.cuh"
#include "backward_wgmma.cuh"
#include "sm90_ptx.cuh"
#include "sm90_tiles.cuh"
#include "sm90_tma_host.cuh"

namespace flamia_bwd {
using namespace flamia_sm90;

/* ds_off[d] = H sum over d' < d of split_doc_tiles(ceil(len_d' / 128)) (H: the query heads of a
 * chunk), and the chunks' item counters zeroed. One CTA. A chunk's pairs past `tiles` (the regions the
 * host sized from the shape: a shape that understates the documents) set FLAMIA_SM90_BAD_SPLIT_TILES
 * in *err, which flamia_cuda_check_finite reports (the kernels clamp to the regions). */
__global__ void __launch_bounds__(256) dq_split_offsets(const int32_t *cu, int num_docs, int H, int causal,
                                                         long long *off, int *next, int chunks, long long tiles,
                                                         int *err) {
    using Scan = cub::BlockScan<long long, 256>;
    __shared__ typename Scan::TempStorage tmp;
    long long carry = 0;
    for (int base = 0; base < num_docs; base += 256) {
        const int d = base + (int)threadIdx.x;
        long long c = 0;
        if (d < num_docs) c = H * split_doc_tiles((cu[d + 1] - cu[d] + 127) / 128, causal);
        long long ex, total;
        Scan(tmp).ExclusiveSum(c, ex, total);
        if (d < num_docs) off[d] = carry + ex;
        carry += total;
        __syncthreads(); /* tmp is reused */
    }
    if (threadIdx.x == 0 && carry > tiles) atomicOr(err, FLAMIA_SM90_BAD_SPLIT_TILES);
    for (int c = (int)threadIdx.x; c < chunks; c += 256) next[c] = 0;
}

constexpr int kDqStages = 6;
constexpr int kDqTile = 128 * 128;                     /* dS or K^T tile bytes */
constexpr int kDqFac = 2 * kDqTile;                    /* G: int16 [2 pairs][2 halves][2 blocks][64] */
constexpr int kDqHdr = kDqFac + 2 * 128 * 4;           /* int: the stage's item, -1: no more */
constexpr int kDqStageBytes = kDqHdr + 1024;           /* 1 KB aligned */
constexpr int kDqBar = kDqStages * kDqStageBytes;
constexpr int kDqSmem = kDqBar + 2 * kDqStages * 8 + 1024;

__global__ void __launch_bounds__(384, 1) dq_split(const __grid_constant__ CUtensorMap tm_ds,
                                                   const __grid_constant__ CUtensorMap tm_kt, const DqParams p) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    uint64_t *full = (uint64_t *)(smem + kDqBar), *empty = full + kDqStages;
    const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, wq = wtid >> 5, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3;
    const int slots = tile_slots(p.T, p.num_docs), nitems = p.nh * slots; /* the chunk's query heads */
    if (tid == 0) {
        for (int s = 0; s < kDqStages; s++) {
            mbar_init(smem_u32(&full[s]), 1);
            mbar_init(smem_u32(&empty[s]), 256); /* every consumer thread (see the release below) */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) { /* the producer */
        if (tid != 0) return;
        int gs = 0; /* stages filled so far */
        for (;;) {
            const int i = atomicAdd(p.next, 1);
            if (i >= nitems) break;
            const int hc = i / slots, h = p.h0 + hc;
            const DocTile dt = doc_tile_of_thread(p.cu, p.num_docs, slots - 1 - i % slots);
            if (dt.doc < 0) continue;
            const int m = dt.tile, nkt = p.causal ? m + 1 : dt.ntiles;
            /* item i: the chunk's query head i / slots, tile slot slots - 1 - i % slots; key tile n at t0 + n */
            const long long t0 = __ldg(p.off + dt.doc) + hc * split_doc_tiles(dt.ntiles, p.causal) + split_tile(m, 0, dt.ntiles, p.causal);
            const int tpos = vt_start(__ldg(p.cu + dt.doc), dt.doc), hk = h / p.group;
            for (int n = 0; n < nkt; n++, gs++) {
                const int st = gs % kDqStages;
                /* inside the regions (sized from the shape: one that understates the documents gives a
                 * wrong dQ, flagged by dq_split_offsets, never a read past the workspace) */
                const long long tile = min(t0 + n, p.tiles - 1);
                if (gs >= kDqStages) mbar_wait(smem_u32(&empty[st]), ((gs / kDqStages) & 1) ^ 1);
                uint8_t *b = smem + st * kDqStageBytes;
                const uint32_t fb = smem_u32(&full[st]);
                *(int *)(b + kDqHdr) = i; /* released by the arrive below */
                mbar_expect_tx(fb, 2 * kDqTile + 2 * 128 * 4);
                tma_load_2d(smem_u32(b), &tm_ds, 0, (int)(tile * 128), fb);
                tma_load_3d(smem_u32(b + kDqTile), &tm_kt, tpos + n * 128, 0, hk, fb);
                bulk_load(smem_u32(b + kDqFac), p.fac + tile * 512, 2 * 128 * 4, fb);
            }
        }
        /* the end, as a stage of its own */
        const int st = gs % kDqStages;
        if (gs >= kDqStages) mbar_wait(smem_u32(&empty[st]), ((gs / kDqStages) & 1) ^ 1);
        *(int *)(smem + st * kDqStageBytes + kDqHdr) = -1;
        mbar_arrive(smem_u32(&full[st]));
        return;
    }
    const int c = wg - 1; /* query rows 64 c .. of the tile */
    int gs = 0;
    for (;;) {
        mbar_wait(smem_u32(&full[gs % kDqStages]), (gs / kDqStages) & 1);
        const int i = *(volatile int *)(smem + (gs % kDqStages) * kDqStageBytes + kDqHdr);
        if (i < 0) break;
        const int h = p.h0 + i / slots;
        const DocTile dt = doc_tile_of(p.cu, p.num_docs, slots - 1 - i % slots); /* valid: the producer skips idle slots */
        const int m = dt.tile, nkt = p.causal ? m + 1 : dt.ntiles;
        float acc[64];
#pragma unroll
        for (int x = 0; x < 64; x++) acc[x] = 0.f;
        for (int n = 0; n < nkt; n++, gs++) {
            const int st = gs % kDqStages;
            mbar_wait(smem_u32(&full[st]), (gs / kDqStages) & 1);
            uint8_t *b = smem + st * kDqStageBytes;
            const uint64_t da = desc_sw128(smem_u32(b + c * 8192)), db = desc_sw128(smem_u32(b + kDqTile));
#pragma unroll
            for (int kb = 0; kb < 4; kb++) { /* the tile's key blocks, each with its own row factors */
                float part[64];
                wgmma_fence();
                bwd_wgmma_e4m3_ss_n128(part, desc_advance(da, 32 * kb), desc_advance(db, 32 * kb), 0);
                wgmma_commit();
                /* G per (pair x = kb / 2, sub-step c, block kb % 2, query): int16 [2][2][2][64] */
                const int16_t *gf = (const int16_t *)(b + kDqFac) + (kb >> 1) * 256 + c * 128 + (kb & 1) * 64 + wq * 16 + g;
                const float f0 = pow2z(gf[0]) * p.scale, f1 = pow2z(gf[8]) * p.scale; /* G -1000: no valid entry, 0 */
                wgmma_wait<0>();
                reg_fence(part);
                /* every read of the stage done (the header's, the factors', the wgmmas' behind the wait):
                 * each consumer thread releases its own reads. One lane per warp after __syncwarp left the
                 * other lanes' reads unordered before the producer's next writes for compute-sanitizer
                 * racecheck (seventy-first session: 36 hazards on test_gpu_backward's small cases), as the
                 * forward's release found in its own time; one instruction per warp either way */
                if (kb == 3) mbar_arrive(smem_u32(&empty[st]));
#pragma unroll
                for (int y = 0; y < 64; y++) acc[y] = fmaf(part[y], (y >> 1) & 1 ? f1 : f0, acc[y]);
            }
        }
        if (p.hadamard) {
            hadamard_acc_n128(acc, tq);
#pragma unroll
            for (int y = 0; y < 64; y++) acc[y] *= p.had_norm;
        }
        /* BF16 rows g, g + 8 of the warp's 16 (rows past the document not written), columns 8 j + 2 tq */
        const int ds = __ldg(p.cu + dt.doc), len = __ldg(p.cu + dt.doc + 1) - ds;
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const int r = m * 128 + c * 64 + wq * 16 + g + 8 * hh;
            if (r >= len) continue;
            uint32_t *dst = (uint32_t *)(p.dq + ((size_t)(ds + r) * p.Hq + h) * kD + 2 * tq);
#pragma unroll
            for (int j = 0; j < 16; j++) dst[4 * j] = bf16x2(acc[4 * j + 2 * hh], acc[4 * j + 2 * hh + 1]);
        }
    }
}

cudaError_t launch_dq_split_offsets(const DqParams &dp, cudaStream_t stream) {
    dq_split_offsets<<<1, 256, 0, stream>>>(dp.cu, dp.num_docs, dp.stride_h, dp.causal, const_cast<long long *>(dp.off),
                                            dp.next, dp.chunks, dp.tiles, dp.err);
    return cudaGetLastError();
}

cudaError_t launch_dq_split(const DqParams &dp, uint8_t *kt_codes, cudaStream_t stream) {
    static bool attr = false;
    static int sms = 0;
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(dq_split, cudaFuncAttributeMaxDynamicSharedMemorySize, kDqSmem);
        if (e != cudaSuccess) return e;
        int dev = 0;
        if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
            (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
            return e;
        attr = true;
    }
    CUtensorMap tm_ds, tm_kt;
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return cudaErrorNotSupported;
    const cuuint64_t dims[2] = {128, (cuuint64_t)dp.tiles * 128}, strides[1] = {128};
    const cuuint32_t box[2] = {128, 128}, estr[2] = {1, 1};
    if (enc(&tm_ds, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<uint8_t *>(dp.ds), dims, strides, box, estr,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS ||
        !flamia_tma_transposed_codes(&tm_kt, kt_codes, dp.t_vpad, kD, dp.Hq / dp.group, 128))
        return cudaErrorNotSupported;
    dq_split<<<sms, 384, kDqSmem, stream>>>(tm_ds, tm_kt, dp);
    return cudaGetLastError();
}

} // namespace flamia_bwd
