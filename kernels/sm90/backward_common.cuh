/*
 * backward_common.cuh - device code that more than one backward kernel TU uses
 * (backward_prep.cu, backward_simt.cu, backward_fp8.cu, backward_dq.cu); kD and the parameter blocks are
 * in backward_launch.h.
 */
#ifndef FLAMIA_SM90_BACKWARD_COMMON_CUH
#define FLAMIA_SM90_BACKWARD_COMMON_CUH

#include <cuda_bf16.h>
#include <stdint.h>

#include "backward_launch.h"
#include "flamia_formats.h"

namespace flamia_bwd {

constexpr double kLn2 = 0.69314718055994530942;

/* 2^e for any int e: 0 below FP32's range (callers only use e <= 127; the split dQ's stored G
 * is -1000 where a block has no valid entry) */
__device__ __forceinline__ float pow2z(int e) { return e < -149 ? 0.f : flamia_pow2f(e > 127 ? 127 : e); }

__device__ __forceinline__ uint32_t bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* One Hadamard butterfly stage across lanes (lane bit m): the lower lane of each pair
 * keeps v + v', the upper one v' - v. The dK / dQ un-rotations (bwd_dq_out, both main
 * kernels) run their lane stages with it. */
template <int N> __device__ __forceinline__ void hadamard_lane_stage(float (&v)[N], int m, bool upper) {
#pragma unroll
    for (int x = 0; x < N; x++) {
        const float o = __shfl_xor_sync(0xffffffffu, v[x], m);
        v[x] = upper ? o - v[x] : v[x] + o;
    }
}

/* The split deterministic dQ's tiles (sm90_launch.h, regions ds_codes / ds_fac): a document of n
 * 128-token tiles holds split_doc_tiles(n) (query tile, key tile) pairs per query head, and pair
 * (m, k) is its split_tile(m, k, n)-th; the offsets kernel, the main kernel's stores (kDqSplit) and
 * backward_dq.cu's loads all index by these two. */
__host__ __device__ __forceinline__ long long split_doc_tiles(long long n, int causal) {
    return flamia_sm90_split_doc_tiles(n, causal); /* the host's count (sm90_launch.h) is the same */
}
__host__ __device__ __forceinline__ long long split_tile(long long m, int k, long long n, int causal) {
    return (causal ? m * (m + 1) / 2 : m * n) + k;
}

/* H_128 (unnormalized) on each of a warpgroup's m64n128 accumulator rows, in place: column
 * c = 8 jn + 2 tq + e of v[4 jn + 2 hh + e] (rows g + 8 hh). Stage 1 is e (in the thread), stages
 * 2, 4 are tq (lanes xor 1, 2), stages 8..64 are jn (in the thread). The FP8 main kernel's dK and
 * backward_dq.cu's dQ rotate back with it. */
__device__ __forceinline__ void hadamard_acc_n128(float (&v)[64], int tq) {
#pragma unroll
    for (int jn = 0; jn < 16; jn++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const float a = v[4 * jn + 2 * hh], b = v[4 * jn + 2 * hh + 1];
            v[4 * jn + 2 * hh] = a + b;
            v[4 * jn + 2 * hh + 1] = a - b;
        }
#pragma unroll
    for (int st = 0; st < 2; st++) hadamard_lane_stage(v, 1 << st, (tq >> st) & 1);
#pragma unroll
    for (int st = 0; st < 4; st++) { /* jn stride ls: dims 8 ls */
        const int ls = 1 << st;
#pragma unroll
        for (int jn = 0; jn < 16; jn++)
            if ((jn & ls) == 0)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const float a = v[4 * jn + q], b = v[4 * (jn + ls) + q];
                    v[4 * jn + q] = a + b;
                    v[4 * (jn + ls) + q] = a - b;
                }
    }
}

/* The FP8 main kernel's dK operand: accumulator column pair j (queries 8 j + 2 tq, + 1) of a
 * thread's two key rows, as the E4M3 code pairs kc[0] (row g) and kc[1] (row g + 8), goes into
 * the A fragments pk of the k = 32 product of its 32-query block j / 4: low half-words from an
 * even j, high ones from the odd j after it (dev/backward/j_sketch packs its dK operand the
 * same way). */
__device__ __forceinline__ void put_dk_operand(uint32_t (&pk)[8], int j, const uint32_t (&kc)[2]) {
    const int bb = j >> 2, jj = j & 3;
    const int base = 4 * bb + ((jj >> 1) << 1);
    if ((jj & 1) == 0) {
        pk[base] = kc[0];
        pk[base + 1] = kc[1];
    } else {
        pk[base] |= kc[0] << 16;
        pk[base + 1] |= kc[1] << 16;
    }
}

/* Deterministic dQ: the CTAs that add into one query block take turns in a fixed order,
 * the key tiles (simt: key blocks) from the last contributor down to tile 0 (for a causal
 * query tile m the contributors are tiles m..0, otherwise all tiles; every contributor adds
 * exactly once per head, `mine` is its place in that order), so each dQ element is the
 * same FP32 sum ((0 + c_last) + ...) + c_0 on every run. Descending because a CTA reaches
 * its query tiles in ascending order from its diagonal: tile n meets query tile m after
 * m - n steps, tile n + 1 after m - n - 1, so in step with the grid each add finds its turn
 * already come (the ascending order made tile n wait on tile n - 1 at every query tile:
 * a wavefront, +74..+120 % on the backward at d6e2faf). No deadlock: a CTA waits only for
 * CTAs of a larger key tile of the same (document, kv head), and in the deterministic
 * kernels those have smaller linear block indices (FP8: a document's slots run its key
 * tiles last to first; simt: key block = gridDim.z - 1 - z), so the hardware dispatched
 * them before it, and they wait only on larger tiles themselves. */
__device__ __forceinline__ void dq_turn_wait(const int *turn, int mine) {
    if (threadIdx.x == 0) {
        int v;
        do {
            asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(turn) : "memory");
        } while (v != mine);
    }
    __syncthreads();
}
__device__ __forceinline__ void dq_turn_pass(int *turn, int mine) {
    __threadfence(); /* this CTA's dQ adds before the next one's */
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(turn), "r"(mine + 1) : "memory");
}

/* The FP8 kernel's turns (v41): each warpgroup adds its half of the dims by a TMA reduce-add
 * issued by one thread, so a contributor passes the turn twice, once per warpgroup, and the
 * one of place `mine` may add once the counter reaches 2 mine. The pass waits for its
 * reduce-add to complete (cp.async.bulk.wait_group 0) and is made at the warpgroup's next
 * dQ add or at the CTA's end, so the reduce-adds overlap the next sub-step's work as in the
 * default mode. The fence after the acquire orders it before the next reduce-add (async
 * proxy); the one in the pass is implied by the add's completion (PTX ISA 9.7.9.25.2) and
 * costs nothing measurable, while the release costs ~7 % of the backward at 16x4096 (a relaxed
 * add, which would not order the dQ values, took it back; perf-notes, twenty-first session).
 * Holding a turn while waiting for the next one cannot
 * deadlock: the held turn's successors are smaller key tiles, the awaited one's
 * predecessors larger tiles, which never wait on this CTA. One thread calls these.
 * Measured (H200, 2026-12-02, d23f72a): +19..+30 % on the backward, down from +61..+94 %
 * with the blocking atomics above (still used by the simt kernel); where it goes:
 * docs/perf-notes.md, backward, twentieth session. */
__device__ __forceinline__ void dq_turn_wait_half(const int *turn, int mine) {
    int v; /* ptxas spills 36-40 bytes of the deterministic kernels for this loop (also as one asm block) */
    do {
        asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(turn) : "memory");
    } while (v < 2 * mine);
    asm volatile("fence.proxy.async.global;" ::: "memory");
}
__device__ __forceinline__ void dq_turn_pass_half(int *turn) {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    asm volatile("fence.proxy.async.global;" ::: "memory");
    asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(turn) : "memory");
}

} // namespace flamia_bwd

#endif
