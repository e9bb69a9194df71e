/*
 * backward_common.cuh - device code that more than one backward kernel TU uses
 * (backward_prep.cu, backward_simt.cu, backward_fp8.cu); kD and the parameter blocks are
 * in backward_launch.h.
 */
#ifndef FLAMIA_SM90_BACKWARD_COMMON_CUH
#define FLAMIA_SM90_BACKWARD_COMMON_CUH

#include <cuda_bf16.h>
#include <stdint.h>

#include "backward_launch.h"

namespace flamia_bwd {

constexpr double kLn2 = 0.69314718055994530942;

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

/* Deterministic dQ: the CTAs that add into one query block take turns in key-tile order
 * (turn = their key tile index: for a causal query tile m the contributors are tiles
 * 0..m, otherwise all tiles, and every contributor adds exactly once per head), so each
 * dQ element is the same FP32 sum ((0 + c0) + c1) + ... on every run. No deadlock: a
 * CTA only waits for CTAs of a smaller key tile of the same (document, kv head), which
 * have smaller linear block indices in both grids (simt: key tile = z; FP8: the tile
 * slots of sm90_tiles.cuh, key tile fastest in x), so the hardware dispatched them
 * before it (block order), and which wait only on smaller tiles themselves. Costs a wavefront: tile n's CTA starts
 * adding into query tile m only after tile n-1's CTA has. */
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

} // namespace flamia_bwd

#endif
