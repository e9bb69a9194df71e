/*
 * flamia_formats.h - scalar formats, one source of truth for host C and CUDA
 * device code: E4M3, E2M1, UE8M0, BF16 rounding, the power-of-two exponent
 * rules and the NVFP4 two-level scale.  Everything is static inline and works
 * on raw bits, so the GPU computes exactly what the CPU reference computes.
 * docs/numerics.md states the rules; tests/cpu/test_formats.c pins them.
 */
#ifndef FLAMIA_FORMATS_H
#define FLAMIA_FORMATS_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FLAMIA_HD __host__ __device__ __forceinline__
#else
#define FLAMIA_HD static inline
#endif

#define FLAMIA_E4M3_MAX 448.0f
#define FLAMIA_E2M1_MAX 6.0f
#define FLAMIA_EXP_MIN (-127)
#define FLAMIA_EXP_MAX 127

FLAMIA_HD uint32_t flamia_fbits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
FLAMIA_HD float flamia_bitsf(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 2^e for e in [-149, 127], exact (builds the bits; no libm); 0 below. Written as selects,
 * not branches: the sm90 kernels call it per tile and row, where ptxas turned two `if`s
 * into divergent code with convergence barriers. tests/cpu/test_formats.c checks every e
 * in [-149, 127] against ldexp and +0 below, down to -100000. */
FLAMIA_HD float flamia_pow2f(int e) {
    const uint32_t normal = (uint32_t)(e + 127) << 23;
    const uint32_t subnormal = (e >= -149 && e < -126) ? 1u << ((e + 149) & 31) : 0u;
    return flamia_bitsf(e >= -126 ? normal : subnormal);
}

/* floor(log2 |x|) for finite nonzero x (subnormals included). */
FLAMIA_HD int flamia_ilog2f(float x) {
    uint32_t a = flamia_fbits(x) & 0x7fffffffu;
    int be = (int)(a >> 23);
    if (be) return be - 127;
    int e = -126; /* subnormal: value m * 2^-149, floor(log2) = floor(log2 m) - 149 */
    for (uint32_t m = a; m < 0x00800000u; m <<= 1) e--;
    return e;
}

/* x * 2^e: exact unless the result leaves the normal float range. Large |e|
 * is split into steps of at most 2^127 / 2^-126 (each factor a normal float). */
FLAMIA_HD float flamia_ldexpf(float x, int e) {
    while (e > 127) { x *= flamia_pow2f(127); e -= 127; }
    while (e < -126) { x *= flamia_pow2f(-126); e += 126; }
    return x * flamia_pow2f(e);
}

/* x * 2^k rounded once (to nearest even) for x in [1/2, 2) and k in [-189, 254]: two
 * power-of-two factors whose first product is exact (a normal number), so only the second
 * rounds, and only where the result is subnormal (or overflows). flamia_ldexpf may round
 * twice below the normal range. The GPU's split exponential scales with it
 * (kernels/sm90/sm90_exp2.cuh); tests/cpu/test_formats.c checks every k against ldexp. */
FLAMIA_HD float flamia_scale2(float x, int k) {
    const int k1 = k >= 0 ? k >> 1 : k + 64, k2 = k >= 0 ? k - (k >> 1) : -64;
    return (x * flamia_pow2f(k1)) * flamia_pow2f(k2);
}

/* Round half to even of a non-negative float below 2^23 to an integer. */
FLAMIA_HD uint32_t flamia_rne_u32(float q) {
    uint32_t i = (uint32_t)q; /* truncation */
    float r = q - (float)i;   /* exact for q < 2^23 */
    if (r > 0.5f || (r == 0.5f && (i & 1u))) i++;
    return i;
}

/* ---- E4M3 (OCP FN) */
FLAMIA_HD uint8_t flamia_fmt_e4m3_encode(float x) {
    uint32_t bits = flamia_fbits(x);
    uint8_t sign = (uint8_t)((bits >> 24) & 0x80u);
    uint32_t a = bits & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7F;                    /* NaN */
    if (a >= 0x43e00000u) return (uint8_t)(sign | 0x7E); /* >= 448 (and inf): saturate */
    if (a < 0x3c800000u) {                               /* below 2^-6: subnormal grid 2^-9 */
        uint32_t m = flamia_rne_u32(flamia_bitsf(a) * 512.0f); /* m == 8 is 2^-6, code 0x08 */
        return (uint8_t)(sign | m);
    }
    uint32_t e = (a >> 23) - 127 + 7; /* biased E4M3 exponent, 1..15 */
    uint32_t mant = a & 0x7fffffu;
    uint32_t m3 = mant >> 20, rem = mant & 0xfffffu;
    if (rem > 0x80000u || (rem == 0x80000u && (m3 & 1u))) {
        if (++m3 == 8) { m3 = 0; e++; }
    }
    return (uint8_t)(sign | (e << 3) | m3); /* a < 448 rounds to at most 0x7E */
}

FLAMIA_HD float flamia_fmt_e4m3_decode(uint8_t c) {
    uint32_t e = (c >> 3) & 0xFu, m = c & 7u;
    float v;
    if (e == 15 && m == 7) return flamia_bitsf(0x7fc00000u);
    if (e == 0) v = (float)m * 0.001953125f; /* m * 2^-9 */
    else v = flamia_bitsf(((e - 7 + 127) << 23) | (m << 20));
    return (c & 0x80) ? -v : v;
}

/* ---- E2M1 (FP4), low nibble */
FLAMIA_HD uint8_t flamia_fmt_e2m1_encode(float x) {
    uint32_t bits = flamia_fbits(x);
    uint32_t a = bits & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7;
    uint8_t sign = (uint8_t)((bits >> 28) & 0x8u);
    float f = flamia_bitsf(a);
    /* grid 0 .5 1 1.5 2 3 4 6; ties go to the even code (code LSB 0) */
    uint8_t c;
    if (f <= 0.25f) c = 0;
    else if (f < 0.75f) c = 1;
    else if (f <= 1.25f) c = 2;
    else if (f < 1.75f) c = 3;
    else if (f <= 2.5f) c = 4;
    else if (f < 3.5f) c = 5;
    else if (f <= 5.0f) c = 6;
    else c = 7;
    return (uint8_t)(sign | c);
}

FLAMIA_HD float flamia_fmt_e2m1_decode(uint8_t c) {
    const float grid[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    float v = grid[c & 7u];
    return (c & 8u) ? -v : v;
}

/* ---- exponents */
FLAMIA_HD int flamia_clamp_exp(int e) {
    return e < FLAMIA_EXP_MIN ? FLAMIA_EXP_MIN : (e > FLAMIA_EXP_MAX ? FLAMIA_EXP_MAX : e);
}

/* Smallest e with amax / 2^e <= fmt_max (fmt_max a float, e.g. 448 or 448*6). */
FLAMIA_HD int flamia_exp_ceil_for(float amax, float fmt_max) {
    if (!(amax == amax) || amax > 3.4e38f) return FLAMIA_EXP_MAX;
    if (amax <= 0.0f) return FLAMIA_EXP_MIN;
    int e = flamia_ilog2f(amax) - flamia_ilog2f(fmt_max);
    if (e < FLAMIA_EXP_MIN) return FLAMIA_EXP_MIN;
    if (amax > flamia_ldexpf(fmt_max, e)) e++;
    return flamia_clamp_exp(e);
}

/* flamia_exp_ceil_for(amax, 448) on every float, without branches (the sm90 kernels
 * evaluate it per block inside their loops): amax = (1+f) 2^E, 448 = 1.75 2^8, so
 * e = E - 8 + (f > 0.75), clamped below at -127 (subnormals included); amax > 3.4e38
 * (infinity included) and NaN give 127, amax <= 0 gives -127. tests/cpu/test_formats.c
 * checks it against flamia_exp_ceil_for on all 2^32 floats, tests/gpu its device build. */
FLAMIA_HD int flamia_e4m3_exp_ceil(float amax) {
    const uint32_t u = flamia_fbits(amax);
    const int e = (int)(u >> 23) - 135 + ((u & 0x7fffffu) > 0x600000u ? 1 : 0);
    const int en = e < FLAMIA_EXP_MIN ? FLAMIA_EXP_MIN : e;
    return (amax > 3.4e38f || amax != amax) ? FLAMIA_EXP_MAX : (amax > 0.0f ? en : FLAMIA_EXP_MIN);
}

/* rule 0 = CEIL, 1 = FLOOR_OCP (matches flamia_exp_rule). */
FLAMIA_HD int flamia_fmt_block_exponent(float amax, int rule) {
    if (rule == 0) return flamia_e4m3_exp_ceil(amax);
    if (!(amax == amax) || amax > 3.4e38f) return FLAMIA_EXP_MAX;
    if (amax <= 0.0f) return FLAMIA_EXP_MIN;
    return flamia_clamp_exp(flamia_ilog2f(amax) - 8);
}

/* ---- E4M3 value with a power-of-two scale: the code of x / 2^e */
FLAMIA_HD uint8_t flamia_e4m3_quant(float x, int e) {
    return flamia_fmt_e4m3_encode(flamia_ldexpf(x, -e));
}
FLAMIA_HD float flamia_e4m3_dequant(uint8_t c, int e) {
    return flamia_ldexpf(flamia_fmt_e4m3_decode(c), e);
}

/* ---- BF16: round to nearest even (NaN stays NaN) */
FLAMIA_HD uint16_t flamia_bf16_bits(float x) {
    uint32_t u = flamia_fbits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
FLAMIA_HD float flamia_bf16_value(uint16_t b) { return flamia_bitsf((uint32_t)b << 16); }
FLAMIA_HD float flamia_round_bf16(float x) { return flamia_bf16_value(flamia_bf16_bits(x)); }

/* ---- NVFP4: E2M1 codes, E4M3 scale per 16 values, power-of-two group scale 2^eg.
 * eg = flamia_exp_ceil_for(group amax, 448*6); s = e4m3(amax16 / 6 / 2^eg);
 * code = e2m1(x / (decode(s) * 2^eg)), 0 where the scale decodes to 0. */
#define FLAMIA_NVFP4_GROUP_MAX (448.0f * 6.0f)
FLAMIA_HD uint8_t flamia_nvfp4_scale(float amax16, int eg) {
    return flamia_fmt_e4m3_encode(flamia_ldexpf(amax16, -eg) / 6.0f);
}
FLAMIA_HD uint8_t flamia_nvfp4_code(float x, uint8_t scale, int eg) {
    float sv = flamia_ldexpf(flamia_fmt_e4m3_decode(scale), eg);
    return sv > 0.0f ? flamia_fmt_e2m1_encode(x / sv) : (uint8_t)0;
}
FLAMIA_HD float flamia_nvfp4_value(uint8_t code, uint8_t scale, int eg) {
    return flamia_fmt_e2m1_decode(code) * flamia_ldexpf(flamia_fmt_e4m3_decode(scale), eg);
}

#endif /* FLAMIA_FORMATS_H */
