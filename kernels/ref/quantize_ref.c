/* quantize_ref.c - operand quantization of the CPU reference (docs/numerics.md sections 1-2). */
#include <math.h>
#include <string.h>

#include "flamia_formats.h"
#include "ref_internal.h"

long flamia_ref_first_nonfinite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return (long)i;
    return -1;
}

/* amax over tokens [t0, t1) of one head */
static float group_amax(const float *x, int t0, int t1, int heads, int h, int D) {
    float a = 0.0f;
    for (int t = t0; t < t1; t++) {
        const float *row = x + ((size_t)t * heads + h) * D;
        for (int d = 0; d < D; d++) a = fmaxf(a, fabsf(row[d]));
    }
    return a;
}

/* Quantizes tokens [t0, t1) of head h with the group exponent of `amax`. */
static void quantize_group(const flamia_operand_quant *spec, const float *x, float *xq, int t0,
                           int t1, int heads, int h, int D, float amax) {
    if (spec->format == FLAMIA_FMT_E4M3) {
        int e = flamia_fmt_block_exponent(amax, spec->exp_rule == FLAMIA_EXP_FLOOR_OCP);
        for (int t = t0; t < t1; t++) {
            size_t base = ((size_t)t * heads + h) * D;
            for (int d = 0; d < D; d++) xq[base + d] = flamia_e4m3_dequant(flamia_e4m3_quant(x[base + d], e), e);
        }
        return;
    }
    /* NVFP4: power-of-two group exponent, E4M3 scale per token per 16 dims */
    int eg = flamia_exp_ceil_for(amax, FLAMIA_NVFP4_GROUP_MAX);
    for (int t = t0; t < t1; t++) {
        size_t base = ((size_t)t * heads + h) * D;
        for (int d0 = 0; d0 < D; d0 += 16) {
            float a16 = 0.0f;
            for (int d = d0; d < d0 + 16; d++) a16 = fmaxf(a16, fabsf(x[base + d]));
            uint8_t sc = flamia_nvfp4_scale(a16, eg);
            for (int d = d0; d < d0 + 16; d++)
                xq[base + d] = flamia_nvfp4_value(flamia_nvfp4_code(x[base + d], sc, eg), sc, eg);
        }
    }
}

void flamia_ref_quantize_operand(const flamia_operand_quant *spec, const flamia_shape *s,
                                 int heads, int token_block, const float *x, float *xq) {
    const int T = s->total_tokens, D = s->head_dim;
    const size_t n = (size_t)T * heads * D;
    if (spec->format == FLAMIA_FMT_FP32) {
        memcpy(xq, x, n * sizeof *x);
        return;
    }
    if (spec->format == FLAMIA_FMT_BF16) {
        for (size_t i = 0; i < n; i++) xq[i] = flamia_round_bf16(x[i]);
        return;
    }
    if (spec->granularity == FLAMIA_GRAN_TENSOR) {
        float a = 0.0f;
        for (int h = 0; h < heads; h++) a = fmaxf(a, group_amax(x, 0, T, heads, h, D));
        for (int h = 0; h < heads; h++) quantize_group(spec, x, xq, 0, T, heads, h, D, a);
        return;
    }
    const int blk = spec->granularity == FLAMIA_GRAN_TOKEN ? 1 : token_block;
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], d1 = s->cu_seqlens[doc + 1];
        for (int t0 = d0; t0 < d1; t0 += blk) {
            const int t1 = t0 + blk < d1 ? t0 + blk : d1;
            for (int h = 0; h < heads; h++)
                quantize_group(spec, x, xq, t0, t1, heads, h, D, group_amax(x, t0, t1, heads, h, D));
        }
    }
}

void flamia_ref_hadamard(float *x, size_t rows, int D) {
    const float norm = 1.0f / sqrtf((float)D);
    for (size_t r = 0; r < rows; r++) {
        float *v = x + r * D;
        for (int len = 1; len < D; len <<= 1)
            for (int i = 0; i < D; i += 2 * len)
                for (int j = i; j < i + len; j++) {
                    float a = v[j], b = v[j + len];
                    v[j] = a + b;
                    v[j + len] = a - b;
                }
        for (int d = 0; d < D; d++) v[d] *= norm;
    }
}

/* The bit-level exponentials (inference-only): (u + 127 - sigma) written in fixed point into a
 * float's exponent and mantissa bits, 2^floor(u') (1 + frac(u')) with u' = u - sigma.
 * Schraudolph's sigma centres the linear mantissa's error on zero; Mitchell's has none (its
 * value is never below exp2(u), by up to 6.1 %). The fixed-point value is formed exactly (FP64);
 * FP32's field truncates it to 23 fraction bits, BF16's (bf16_field) rounds it to 7 (to nearest,
 * so the coarser field adds no bias). */
static float bit_exp2(float u, float sigma, int bf16_field) {
    if (u < -126.0f) return 0.0f;
    const double y = (double)u + 127.0 - (double)sigma;
    return bf16_field ? flamia_bitsf((uint32_t)(y * 128.0 + 0.5) << 16) : flamia_bitsf((uint32_t)(y * 8388608.0));
}
#define SCHRAUDOLPH_SIGMA 0.0436775f

float flamia_ref_exp2(const flamia_recipe *r, float u, int key) {
    switch (r->exp_mode) {
    case FLAMIA_EXP2_SCHRAUDOLPH: return bit_exp2(u, SCHRAUDOLPH_SIGMA, 0);
    case FLAMIA_EXP2_SCHRAUDOLPH_MIXED:
        if (((key >> 1) & 7) < 5) return bit_exp2(u, SCHRAUDOLPH_SIGMA, 1);
        break;
    case FLAMIA_EXP2_MITCHELL: return bit_exp2(u, 0.0f, 0);
    default: break;
    }
    return (float)exp2((double)u);
}

float flamia_ref_p_quantize(const flamia_recipe *r, float p) {
    switch (r->p_format) {
    case FLAMIA_FMT_E4M3:
        return flamia_fmt_e4m3_decode(flamia_fmt_e4m3_encode(flamia_ldexpf(p, r->p_offset_log2))) *
               flamia_pow2f(-r->p_offset_log2);
    case FLAMIA_FMT_BF16: return flamia_round_bf16(p);
    default: return p;
    }
}

void flamia_ref_p_quantize_row(const flamia_recipe *r, const float *pf, int n, float *pq, uint8_t *codes) {
    const int off = r->p_offset_log2;
    if (r->p_format != FLAMIA_FMT_NVFP4) {
        for (int j = 0; j < n; j++) {
            pq[j] = flamia_ref_p_quantize(r, pf[j]);
            if (codes) codes[j] = flamia_fmt_e4m3_encode(flamia_ldexpf(pf[j], off));
        }
        return;
    }
    /* NVFP4: group exponent -off fixed (P is relative to its frame), E4M3 scale of the
     * 16 keys' max, E2M1 codes: numerics.md 3.3 */
    for (int g = 0; g < n; g += 16) {
        const int g1 = g + 16 < n ? g + 16 : n;
        float amax = 0.0f;
        for (int j = g; j < g1; j++) amax = fmaxf(amax, pf[j]);
        const uint8_t sc = flamia_nvfp4_scale(amax, -off);
        for (int j = g; j < g1; j++) {
            const uint8_t c = flamia_nvfp4_code(pf[j], sc, -off);
            pq[j] = flamia_nvfp4_value(c, sc, -off);
            if (codes) codes[j] = c;
        }
    }
}
