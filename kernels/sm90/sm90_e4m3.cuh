/*
 * sm90_e4m3.cuh - the hardware E4M3 conversion the sm90 kernels use in place
 * of flamia_fmt_e4m3_encode. cvt.rn.satfinite.e4m3x2.f32 rounds to nearest
 * even, keeps E4M3 subnormals, saturates finite values and infinities to
 * +-448 and turns NaN into 0x7F: the same function as the host encoder,
 * checked on all 2^32 float inputs by tests/gpu/test_gpu_e4m3_cvt.cu.
 */
#ifndef FLAMIA_SM90_E4M3_CUH
#define FLAMIA_SM90_E4M3_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "flamia_formats.h"
#include "sm90_perm_rows.h" /* flamia_fp8_perm_row */

/* Two floats to two E4M3 codes: low byte = a, high byte = b. */
__device__ __forceinline__ uint32_t flamia_cvt_e4m3x2(float a, float b) {
    uint16_t r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(r) : "f"(a), "f"(b));
    return r;
}

/* P as the A operand of an FP8 wgmma (k = 32 keys a block b), filled from a softmax's accumulator
 * column pair j = 4 b + jj: r0 holds the pair's two codes of row g, r1 those of row g + 8
 * (flamia_cvt_e4m3x2). jj 0 and 1 fill the low and high halves of pa[4b] (row g) and pa[4b + 1] (row
 * g + 8), jj 2 and 3 those of pa[4b + 2] and pa[4b + 3]: keys 4t.. and 16 + 4t.. of the block for the
 * quad's thread t, given K's rows permuted as forward.cu describes. */
template <int N>
__device__ __forceinline__ void flamia_p_fragment_put(uint32_t (&pa)[N], int j, uint32_t r0, uint32_t r1) {
    const int jj = j & 3, base = 4 * (j >> 2) + ((jj >> 1) << 1);
    if ((jj & 1) == 0) {
        pa[base] = r0;
        pa[base + 1] = r1;
    } else {
        pa[base] |= r0 << 16;
        pa[base + 1] |= r1 << 16;
    }
}

/* The same for a 16-bit (BF16 / F16) P: column pair j fills one whole register of each row,
 * k-step j >> 1, (row g, cols 2t..) (row g + 8, ..) (row g, 8 + 2t..) (row g + 8, ..). */
template <int N>
__device__ __forceinline__ void flamia_p16_fragment_put(uint32_t (&pa)[N], int j, uint32_t r0, uint32_t r1) {
    pa[4 * (j >> 1) + 2 * (j & 1)] = r0;
    pa[4 * (j >> 1) + 2 * (j & 1) + 1] = r1;
}

/* Two E4M3 codes (low byte a) times 2^-s, re-encoded: the factor comes as a pair of F16
 * values from flamia_f16x2_pow2_neg(s). The product is exact in F16 wherever E4M3 can hold
 * anything but 0 (E4M3 values have 4 significant bits; below F16's normal range, 2^-14, E4M3
 * rounds to 0 either way), so this is the single rounding e4m3(dec(code) 2^-s): the
 * backward's dQ operand fold (numerics.md 4.6). tests/gpu/test_gpu_e4m3_cvt.cu checks every
 * code for s = 0..40. */
__device__ __forceinline__ uint32_t flamia_e4m3x2_scale_f16(uint32_t codes16, uint32_t f16x2) {
    uint32_t h2;
    uint16_t r;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)codes16));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(h2) : "r"(f16x2));
    asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r) : "r"(h2));
    return r;
}

/* Two E4M3 codes (low byte first) to their two values as floats: E4M3 -> F16 -> F32, each
 * step exact (every E4M3 value, subnormals included, is a normal F16). */
__device__ __forceinline__ float2 flamia_e4m3x2_values(uint32_t codes16) {
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)codes16));
    return __half22float2(*reinterpret_cast<__half2 *>(&h2));
}

/* The same for non-negative codes (P's) without a conversion instruction: a code's 7 magnitude
 * bits at FP32's bits 20..26 are a float of the code's value times 2^-120 (E4M3 subnormals land
 * on FP32 subnormals of the same spacing), then x 2^120, exact unless subnormals are flushed
 * (the kernels are compiled without -ftz). Integer bit moves and an FMUL a value, no F2FP. */
__device__ __forceinline__ float2 flamia_e4m3x2_values_bits(uint32_t codes16) {
    return make_float2(__uint_as_float((codes16 << 20) & 0x07F00000u) * 0x1p120f,
                       __uint_as_float((codes16 << 12) & 0x07F00000u) * 0x1p120f);
}

/* 2^-s (s >= 0) as two F16 values, the factor of flamia_e4m3x2_scale_f16: exact for s <= 24
 * (F16 subnormals from s = 15), 0 beyond, where every E4M3 code times 2^-s rounds to 0 */
__device__ __forceinline__ uint32_t flamia_f16x2_pow2_neg(int s) {
    const uint32_t h = s <= 14 ? (uint32_t)(15 - s) << 10 : s <= 24 ? 1u << (24 - s) : 0u;
    return h | (h << 16);
}

/* 4 x 4 byte transpose by byte permutes: out[d] holds byte d of w0, w1, w2, w3 (low byte
 * first). The forward's V^T staging and the backward's Q^T / K^T transpose use it. */
__device__ __forceinline__ void flamia_transpose_bytes4x4(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                                          uint32_t (&out)[4]) {
    const uint32_t a0 = __byte_perm(w0, w1, 0x5140), a1 = __byte_perm(w0, w1, 0x7362);
    const uint32_t b0 = __byte_perm(w2, w3, 0x5140), b1 = __byte_perm(w2, w3, 0x7362);
    out[0] = __byte_perm(a0, b0, 0x5410);
    out[1] = __byte_perm(a0, b0, 0x7632);
    out[2] = __byte_perm(a1, b1, 0x5410);
    out[3] = __byte_perm(a1, b1, 0x7632);
}

/* flamia_ldexpf out of line, for the exponents outside the normal range (blocks of extreme
 * magnitude): the rare case is one call at each site instead of ldexpf's loops unrolled into
 * every element's path, code the hot path has to jump over (the instruction fetch pays:
 * thirteenth session, docs/perf-notes.md) */
__device__ __noinline__ inline float flamia_ldexpf_outlined(float x, int e) { return flamia_ldexpf(x, e); }

/* per-halfword unsigned max (sm_90 VIMNMX.U16x2) */
__device__ __forceinline__ uint32_t flamia_vmax_u16x2(uint32_t a, uint32_t b) {
    uint32_t r;
    asm("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

#endif
