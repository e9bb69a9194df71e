/* test_scale_shift.c - the reference under a power-of-two shift between K and the softmax
 * scale: K x 2^e with the softmax scale x 2^-e gives the same logits, and every recipe here
 * quantizes by powers of two or by scales that move with the input's maximum, so the
 * quantized scores, P, dS and their products are the same numbers shifted. Expected, for
 * every preset: O, lse, dQ, dV bit-identical; dK x 2^e equal to the unshifted dK except
 * where the shifted value falls below the normal range (then within BF16's subnormal step,
 * scaled back).
 *
 * Why: the GPU kernels form the same t = s 2^eK c 2^eQ from FP32 products, and a kernel
 * that associates them differently overflows in this range (test_gpu_consistency's "wide
 * range" case, e = 118; docs/numerics.md 3.1). This test pins the oracle's side: the
 * reference itself must not move when only the exponents move. */
#include "test_util.h"
#include "../scale_shift_rule.h"

typedef struct {
    float *o, *lse, *dq, *dk, *dv;
} outputs;

static void run(const char *preset, const flamia_shape *s, const float *q, const float *k, const float *v,
                const float *dout, outputs *out) {
    flamia_recipe r;
    CHECK(flamia_recipe_preset(preset, &r) == FLAMIA_OK, "preset %s", preset);
    const size_t nq = (size_t)s->total_tokens * s->heads_q * s->head_dim;
    const size_t nkv = (size_t)s->total_tokens * s->heads_kv * s->head_dim;
    out->o = xmalloc(nq * 4), out->dq = xmalloc(nq * 4), out->lse = xmalloc((size_t)s->total_tokens * s->heads_q * 4);
    out->dk = xmalloc(nkv * 4), out->dv = xmalloc(nkv * 4);
    CHECK(flamia_ref_forward(&r, s, q, k, v, out->o, out->lse) == FLAMIA_OK, "%s fwd: %s", preset,
          flamia_last_error());
    CHECK(flamia_ref_backward(&r, s, q, k, v, out->o, out->lse, dout, out->dq, out->dk, out->dv) == FLAMIA_OK,
          "%s bwd: %s", preset, flamia_last_error());
}
static void free_out(outputs *r) { free(r->o), free(r->lse), free(r->dq), free(r->dk), free(r->dv); }

static size_t count_differ(const float *a, const float *b, size_t n) {
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += memcmp(a + i, b + i, sizeof *a) != 0;
    return d;
}

/* dK of the shifted run against dK: elements outside scale_shift_rule.h's rule */
static size_t dk_differ(const float *shifted, const float *base, size_t n, int e) {
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        if (scale_shift_matches(shifted[i], base[i], e)) continue;
        if (d < 3)
            fprintf(stderr, "  dK[%zu]: shifted %a (x 2^%d = %a), unshifted %a\n", i, (double)shifted[i], e,
                    ldexp(shifted[i], e), (double)base[i]);
        d++;
    }
    return d;
}

int main(void) {
    test_seed_init("test_scale_shift");
    const char *presets[] = {"bf16", "mxfp8", "mxfp8-exact", "nvfp4", "fp8-tensor", "mx-floor"};
    const int shifts[] = {110, -100};
    int32_t cu[8];
    const int T = random_layout(cu, 5, 160), D = 128, Hq = 4, Hkv = 2;
    const size_t nq = (size_t)T * Hq * D, nkv = (size_t)T * Hkv * D;
    float *q = xmalloc(nq * 4), *k = xmalloc(nkv * 4), *v = xmalloc(nkv * 4), *dout = xmalloc(nq * 4);
    float *ks = xmalloc(nkv * 4);
    fill_randn(q, T, Hq, D, 0);
    fill_randn(k, T, Hkv, D, 4); /* outlier channels x20: |s| stays below 2^10, so s 2^110 fits FP32 */
    fill_randn(v, T, Hkv, D, 0);
    fill_randn(dout, T, Hq, D, 0);
    flamia_shape s = {T, 5, cu, Hq, Hkv, D, 1, 0.0f, 0, NULL};
    for (int d = 0; d < 5; d++) s.max_seqlen = cu[d + 1] - cu[d] > s.max_seqlen ? cu[d + 1] - cu[d] : s.max_seqlen;
    for (size_t pi = 0; pi < sizeof presets / sizeof *presets; pi++) {
        outputs base;
        run(presets[pi], &s, q, k, v, dout, &base);
        for (size_t si = 0; si < sizeof shifts / sizeof *shifts; si++) {
            const int e = shifts[si];
            for (size_t i = 0; i < nkv; i++) ks[i] = ldexpf(k[i], e);
            flamia_shape ss = s;
            ss.softmax_scale = ldexpf(1.0f / sqrtf((float)D), -e);
            outputs sh;
            run(presets[pi], &ss, q, ks, v, dout, &sh);
            const size_t o = count_differ(sh.o, base.o, nq), l = count_differ(sh.lse, base.lse, (size_t)T * Hq);
            const size_t dq = count_differ(sh.dq, base.dq, nq), dv = count_differ(sh.dv, base.dv, nkv);
            const size_t dk = dk_differ(sh.dk, base.dk, nkv, e);
            printf("%-12s K x 2^%-4d scale x 2^%-4d T=%d | elements that differ: O %zu, lse %zu, dQ %zu, dV %zu, "
                   "dK x 2^e %zu\n",
                   presets[pi], e, -e, T, o, l, dq, dv, dk);
            CHECK(o == 0 && l == 0, "%s, shift %d: O / lse moved (%zu / %zu elements)", presets[pi], e, o, l);
            CHECK(dq == 0 && dv == 0, "%s, shift %d: dQ / dV moved (%zu / %zu elements)", presets[pi], e, dq, dv);
            CHECK(dk == 0, "%s, shift %d: dK x 2^e moved (%zu elements)", presets[pi], e, dk);
            free_out(&sh);
        }
        free_out(&base);
    }
    free(q), free(k), free(v), free(dout), free(ks);
    return TEST_EXIT();
}
