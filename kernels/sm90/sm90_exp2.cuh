/*
 * sm90_exp2.cuh - the exponential of docs/numerics.md 3.3 on the GPU, one definition for
 * the forward and the backward (the backward must rebuild the forward's P codes bit for bit).
 *
 *   E(t, M) = ex2(tf) * 2^(ti - M),  ti = trunc(t), tf = t - ti (exact), M an integer frame,
 *
 * with ex2 the hardware's ex2.approx.ftz. Two evaluations of the same value:
 *   exp_frame_split(t, M)        any frame: the split itself (slow; the fallback;
 *                                exp_frame_split_k63 the same value for ti - M <= 63);
 *   exp_frame_direct(t, 2^-M)    ex2(t) * 2^-M: one MUFU and one FMUL.
 * They agree bit for bit because the H200's ex2.approx(t) equals ex2.approx(tf) * 2^ti
 * for every FP32 t in [-126, 128) (dev/forward/ex2_identity_probe.cu trunc: 0 mismatches;
 * the floor split would differ for 124,681,140 negative t), and both then scale a normal
 * number by 2^-M with a single rounding. exp_frame_direct_ok gives frames for which the
 * direct form is that value for every t a row can produce (t <= ceil max t = m), except
 * results below 2^-65 of the row's largest term that may flush to 0 (t < -126): no P code
 * (< 2^-10 after the offset) and nothing l can see.
 */
#ifndef FLAMIA_SM90_EXP2_CUH
#define FLAMIA_SM90_EXP2_CUH

#include "flamia_formats.h"

namespace flamia_sm90 {

/* (int)x for an integer-valued float with |x| < 2^22 (a frame), without F2I: F2I issues on the pipe
 * the exponentials' MUFU.EX2 use (10 per tile and thread in the forward, against 64 exponentials).
 * x + 1.5 2^23 is exact and holds x in its low mantissa bits. */
__device__ __forceinline__ int int_of_integral(float x) { return __float_as_int(x + 12582912.f) - 0x4B400000; }

__device__ __forceinline__ float ex2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* E(t, M) for any t (0 for t = -inf and NaN) and integer M, branch-free: ex2(tf) in
 * (1/2, 2) scaled by 2^(ti - M) with one rounding (flamia_scale2), 0 below 2^-189 (no FP32
 * value). (Until 2026-12-01 12:45 UTC the scale was clamped at 2^63, which the mxfp8-exact
 * forward's folded frame can exceed when a row's keys all have V exponents below -54.) */
__device__ __forceinline__ float exp_frame_split(float t, float M) {
    const float ti = truncf(t);
    const float k = ti - M; /* exact: integers below 2^24 in magnitude */
    return k >= -189.f ? flamia_scale2(ex2_approx(t - ti), (int)fminf(k, 254.f)) : 0.f;
}
/* The same value where ti - M <= 63, in fewer registers: the backward's frames (ti - M <= 9)
 * use it, since the general scale made ptxas spill 80 B in the backward's main kernel. */
__device__ __forceinline__ float exp_frame_split_k63(float t, float M) {
    const float ti = truncf(t);
    const float k = fminf(fmaxf(ti - M, -190.f), 63.f);
    const float up = __uint_as_float((uint32_t)((int)k + 191) << 23); /* 2^(k + 64): normal */
    const float v = __fmul_rn(__fmul_rn(ex2_approx(t - ti), up), 5.421010862427522e-20f /* 2^-64 */);
    return k > -190.f ? v : 0.f;
}

/* E(t, M) = ex2(t) * scale, scale = 2^-M, where exp_frame_direct_ok(m, M) holds */
__device__ __forceinline__ float exp_frame_direct(float t, float scale) { return ex2_approx(t) * scale; }

/* m: the row frame (every t of the row is <= m); M: the exponent frame (m plus the
 * recipe's offsets). t < 128 (no ex2 overflow), 2^-M normal, and a flushed t < -126 is
 * below 2^(-125 - m) <= 2^-65 of the row maximum's term. */
__device__ __forceinline__ bool exp_frame_direct_ok(float m, float M) {
    /* & rather than &&: short-circuit evaluation became branches with convergence barriers */
    return (m >= -60.f) & (m <= 120.f) & (M >= -100.f) & (M <= 120.f);
}

} // namespace flamia_sm90
#endif
