/* test_gradcheck.c - the FP64 textbook backward against central finite
 * differences of the FP64 forward, and an unquantized (FP32) recipe against
 * FP64: checks the recipe machinery (frames, tiles, GQA, packing) itself. */
#include "test_util.h"

/* loss = sum(dout * O) in FP64 */
static double loss64(const flamia_shape *s, const float *q, const float *k, const float *v,
                     const float *dout, double *o, double *lse) {
    flamia_ref64_forward(s, q, k, v, o, lse);
    double L = 0;
    for (size_t i = 0; i < (size_t)s->total_tokens * s->heads_q * s->head_dim; i++) L += dout[i] * o[i];
    return L;
}

int main(void) {
    test_seed_init("test_gradcheck");
    int32_t cu[4] = {0, 1, 6, 0};
    cu[3] = cu[2] + rng_int(2, 9);
    const int T = cu[3], Hq = 2, Hkv = 1, D = 64;
    flamia_shape s = {T, 3, cu, Hq, Hkv, D, 1, 0.3f, 0, NULL};
    size_t nq = (size_t)T * Hq * D, nkv = (size_t)T * Hkv * D;
    float *q = xmalloc(nq * 4), *k = xmalloc(nkv * 4), *v = xmalloc(nkv * 4), *dout = xmalloc(nq * 4);
    fill_randn(q, T, Hq, D, 0), fill_randn(k, T, Hkv, D, 0), fill_randn(v, T, Hkv, D, 0), fill_randn(dout, T, Hq, D, 0);
    double *o = xmalloc(nq * 8), *lse = xmalloc((size_t)T * Hq * 8);
    double *dq = xmalloc(nq * 8), *dk = xmalloc(nkv * 8), *dv = xmalloc(nkv * 8);
    CHECK(flamia_ref64_backward(&s, q, k, v, dout, dq, dk, dv) == FLAMIA_OK, "ref64 backward");

    /* finite differences on a sample of coordinates of q, k, v: central, divided by the step
     * as stored (x0 +- h rounds in FP32 where it crosses a power of two: seed 4510942850,
     * dq[386] at x0 = -1.99945, was off by 7e-5 relative for that), and Richardson-extrapolated
     * over steps h and h/2: (4 fd(h/2) - fd(h)) / 3 cancels the h^2 term (the plain central
     * difference at h = 2^-9 was off by 1.2e-4 on seed 4510942006, dk[87]: its error shrank 4x
     * per halving of h, the truncation, not the gradient). */
    float *ops[3] = {q, k, v};
    double *grads[3] = {dq, dk, dv};
    size_t sizes[3] = {nq, nkv, nkv};
    const char *names[3] = {"dq", "dk", "dv"};
    double worst = 0;
    for (int t = 0; t < 3; t++)
        for (int trial = 0; trial < 40; trial++) {
            size_t i = (size_t)(rng_u64() % sizes[t]);
            const float x0 = ops[t][i], h = 0x1.0p-9f;
            double central[2];
            for (int c = 0; c < 2; c++) {
                const float hc = c ? 0.5f * h : h, xp = x0 + hc, xm = x0 - hc;
                ops[t][i] = xp;
                const double lp = loss64(&s, q, k, v, dout, o, lse);
                ops[t][i] = xm;
                const double lm = loss64(&s, q, k, v, dout, o, lse);
                central[c] = (lp - lm) / ((double)xp - (double)xm); /* exact in FP64 */
            }
            ops[t][i] = x0;
            double fd = (4.0 * central[1] - central[0]) / 3.0, an = grads[t][i];
            double err = fabs(fd - an) / (fabs(an) + 1e-3);
            if (err > worst) worst = err;
            CHECK(err < 2e-6, "%s[%zu]: finite difference %.9g vs analytic %.9g", names[t], i, fd, an); /* worst of 2,500 seeds: 1.6e-7 */
        }
    printf("FP64 backward vs finite differences: worst relative error %.3e\n", worst);

    /* an unquantized recipe (FP32 everywhere) matches FP64 up to FP32 + BF16 output rounding */
    flamia_recipe r;
    flamia_recipe_preset("mxfp8", &r);
    flamia_operand_quant f32 = {FLAMIA_FMT_FP32, FLAMIA_GRAN_TOKEN, FLAMIA_EXP_CEIL};
    r.q_score = r.k_score = r.q = r.k = r.v = r.dout = f32;
    r.p_format = FLAMIA_FMT_FP32;
    r.ds_format = FLAMIA_FMT_FP32;
    r.tile_k = 32; /* several tiles, so frames grow across tiles */
    int32_t cu2[3] = {0, 0, 0};
    cu2[1] = rng_int(40, 130), cu2[2] = cu2[1] + rng_int(1, 70);
    flamia_shape s2 = {cu2[2], 2, cu2, 4, 2, 128, 1, 0.0f, 0, NULL};
    size_t nq2 = (size_t)s2.total_tokens * 4 * 128, nkv2 = (size_t)s2.total_tokens * 2 * 128;
    float *q2 = xmalloc(nq2 * 4), *k2 = xmalloc(nkv2 * 4), *v2 = xmalloc(nkv2 * 4), *do2 = xmalloc(nq2 * 4);
    fill_randn(q2, s2.total_tokens, 4, 128, 0), fill_randn(k2, s2.total_tokens, 2, 128, 0);
    fill_randn(v2, s2.total_tokens, 2, 128, 0), fill_randn(do2, s2.total_tokens, 4, 128, 0);
    float *of = xmalloc(nq2 * 4), *lf = xmalloc((size_t)s2.total_tokens * 4 * 4);
    float *dqf = xmalloc(nq2 * 4), *dkf = xmalloc(nkv2 * 4), *dvf = xmalloc(nkv2 * 4);
    double *o64 = xmalloc(nq2 * 8), *l64 = xmalloc((size_t)s2.total_tokens * 4 * 8);
    double *dq64 = xmalloc(nq2 * 8), *dk64 = xmalloc(nkv2 * 8), *dv64 = xmalloc(nkv2 * 8);
    CHECK(flamia_ref_forward(&r, &s2, q2, k2, v2, of, lf) == FLAMIA_OK, "fp32 recipe fwd");
    CHECK(flamia_ref_backward(&r, &s2, q2, k2, v2, of, lf, do2, dqf, dkf, dvf) == FLAMIA_OK, "fp32 recipe bwd");
    flamia_ref64_forward(&s2, q2, k2, v2, o64, l64);
    flamia_ref64_backward(&s2, q2, k2, v2, do2, dq64, dk64, dv64);
    double maxlse = 0;
    for (size_t i = 0; i < (size_t)s2.total_tokens * 4; i++) maxlse = fmax(maxlse, fabs(lf[i] - l64[i]) / (fabs(l64[i]) + 1));
    double e[4] = {rel_l2_fd(of, o64, nq2), rel_l2_fd(dqf, dq64, nq2), rel_l2_fd(dkf, dk64, nkv2), rel_l2_fd(dvf, dv64, nkv2)};
    printf("FP32 recipe vs FP64: rel L2 O %.2e dQ %.2e dK %.2e dV %.2e, lse %.2e\n", e[0], e[1], e[2], e[3], maxlse);
    /* BF16 output rounding is at most 2^-9 relative per element */
    for (int i = 0; i < 4; i++) CHECK(e[i] < 3e-3, "FP32 recipe relative error %d = %g", i, e[i]);
    CHECK(maxlse < 1e-6, "lse error %g", maxlse);
    free(q), free(k), free(v), free(dout), free(o), free(lse), free(dq), free(dk), free(dv);
    free(q2), free(k2), free(v2), free(do2), free(of), free(lf), free(dqf), free(dkf), free(dvf);
    free(o64), free(l64), free(dq64), free(dk64), free(dv64);
    return TEST_EXIT();
}
