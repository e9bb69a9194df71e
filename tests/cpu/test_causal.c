/* test_causal.c - causal safety of the reference, proven by perturbation:
 *  - mxfp8-exact and bf16: changing Q, K, V, dO at positions >= t leaves O and
 *    dQ at every earlier position of that document bit-identical;
 *  - every recipe without tensor-wide scales: other documents bit-identical
 *    (O, dQ, dK, dV);
 *  - the probe can see a leak: mx-floor and fp8-tensor move earlier outputs by
 *    > 1e-3 on a constructed input. Prints the leak figures of every preset. */
#include "test_util.h"

typedef struct {
    float *o, *lse, *dq, *dk, *dv;
} outputs;

static void alloc_out(outputs *r, const flamia_shape *s) {
    size_t nq = (size_t)s->total_tokens * s->heads_q * s->head_dim, nkv = (size_t)s->total_tokens * s->heads_kv * s->head_dim;
    r->o = xmalloc(nq * 4), r->dq = xmalloc(nq * 4), r->lse = xmalloc((size_t)s->total_tokens * s->heads_q * 4);
    r->dk = xmalloc(nkv * 4), r->dv = xmalloc(nkv * 4);
}
static void free_out(outputs *r) { free(r->o), free(r->lse), free(r->dq), free(r->dk), free(r->dv); }

static void run(const flamia_recipe *r, const flamia_shape *s, const float *q, const float *k, const float *v,
                const float *dout, outputs *out) {
    CHECK(flamia_ref_forward(r, s, q, k, v, out->o, out->lse) == FLAMIA_OK, "%s fwd: %s", r->name, flamia_last_error());
    CHECK(flamia_ref_backward(r, s, q, k, v, out->o, out->lse, dout, out->dq, out->dk, out->dv) == FLAMIA_OK,
          "%s bwd: %s", r->name, flamia_last_error());
}

/* max over rows (tokens [t0,t1) x heads) of ||a_row - b_row||, divided by the mean
 * row norm of b over the same rows (a row of exact zeros, e.g. dQ of a document's
 * first token, must not turn a tiny change into an infinite ratio) */
static double max_rel_change(const float *a, const float *b, int t0, int t1, int H, int D) {
    double worst = 0, norms = 0;
    size_t rows = 0;
    for (size_t row = (size_t)t0 * H; row < (size_t)t1 * H; row++, rows++) {
        double num = 0, den = 0;
        for (int d = 0; d < D; d++) {
            double x = a[row * D + d], y = b[row * D + d];
            num += (x - y) * (x - y), den += y * y;
        }
        worst = fmax(worst, sqrt(num));
        norms += sqrt(den);
    }
    return worst == 0 ? 0 : worst / (norms / (double)rows + 1e-30);
}
static int rows_identical(const float *a, const float *b, int t0, int t1, int H, int D) {
    return t1 <= t0 || !memcmp(a + (size_t)t0 * H * D, b + (size_t)t0 * H * D, (size_t)(t1 - t0) * H * D * sizeof *a);
}

enum { RAISE_2X, RAISE_1E4, HUGE_ELEMENT, REWRITE_FUTURE, NKINDS };
static const char *kind_names[NKINDS] = {"raise group max 2x", "raise group max 1e4", "one huge element",
                                         "rewrite Q,K,V,dO >= t"};

/* Perturbs positions >= tt of document [d0, d1) in copies of the inputs. */
static void perturb(int kind, const flamia_shape *s, int d0, int d1, int tt, float *q, float *k, float *v, float *dout) {
    const int Hq = s->heads_q, Hk = s->heads_kv, D = s->head_dim;
    if (kind == REWRITE_FUTURE) {
        for (int t = tt; t < d1; t++) {
            for (int i = 0; i < Hq * D; i++) q[(size_t)t * Hq * D + i] = 3.0f * rng_normal(), dout[(size_t)t * Hq * D + i] = rng_normal();
            for (int i = 0; i < Hk * D; i++) k[(size_t)t * Hk * D + i] = 3.0f * rng_normal(), v[(size_t)t * Hk * D + i] = rng_normal();
        }
        return;
    }
    if (kind == HUGE_ELEMENT) {
        k[(size_t)tt * Hk * D + (size_t)rng_int(0, Hk * D - 1)] = 3.0e4f;
        v[(size_t)tt * Hk * D + (size_t)rng_int(0, Hk * D - 1)] = -3.0e4f;
        return;
    }
    /* scale token tt's K and V so it raises its 32-token block's max by 2x or 1e4 */
    const float want = kind == RAISE_2X ? 2.0f : 1.0e4f;
    int b0 = d0 + (tt - d0) / 32 * 32, b1 = b0 + 32 < d1 ? b0 + 32 : d1;
    float *ops[2] = {k, v};
    for (int o = 0; o < 2; o++)
        for (int h = 0; h < Hk; h++) {
            float bmax = 0, tmax = 0;
            for (int t = b0; t < b1; t++)
                for (int d = 0; d < D; d++) bmax = fmaxf(bmax, fabsf(ops[o][((size_t)t * Hk + h) * D + d]));
            for (int d = 0; d < D; d++) tmax = fmaxf(tmax, fabsf(ops[o][((size_t)tt * Hk + h) * D + d]));
            for (int d = 0; d < D; d++) ops[o][((size_t)tt * Hk + h) * D + d] *= want * bmax / tmax;
        }
}

static void copy_in(float **dst, const float *src, size_t n) {
    *dst = xmalloc(n * 4);
    memcpy(*dst, src, n * 4);
}

int main(void) {
    test_seed_init("test_causal");
    const char *const *names = flamia_recipe_preset_names();
    int nrec = 0;
    while (names[nrec]) nrec++;
    double leak_o[16] = {0}, leak_dq[16] = {0}, cross[16] = {0};

    for (int trial = 0; trial < 3; trial++) {
        int32_t cu[8];
        int docs = rng_int(2, 4);
        int T = random_layout(cu, docs, 170);
        cu[0] = 0;
        /* make document 0 long enough for several blocks and two tiles */
        int extra = 150 - (cu[1] - cu[0]);
        if (extra > 0)
            for (int d = 1; d <= docs; d++) cu[d] += extra;
        T = cu[docs];
        flamia_shape s = {T, docs, cu, 4, 2, 64, 1, 0.0f, 0, NULL};
        size_t nq = (size_t)T * 4 * 64, nkv = (size_t)T * 2 * 64;
        float *q = xmalloc(nq * 4), *k = xmalloc(nkv * 4), *v = xmalloc(nkv * 4), *dout = xmalloc(nq * 4);
        fill_randn(q, T, 4, 64, 2), fill_randn(k, T, 2, 64, 2), fill_randn(v, T, 2, 64, 1), fill_randn(dout, T, 4, 64, 0);
        for (int ri = 0; ri < nrec; ri++) {
            flamia_recipe r;
            flamia_recipe_preset(names[ri], &r);
            const int exact = !strcmp(names[ri], "mxfp8-exact") || !strcmp(names[ri], "bf16");
            const int local = strcmp(names[ri], "fp8-tensor") != 0;
            outputs base;
            alloc_out(&base, &s);
            run(&r, &s, q, k, v, dout, &base);
            for (int kind = 0; kind < NKINDS; kind++) {
                const int d0 = cu[0], d1 = cu[1];
                const int tt = d0 + rng_int(1, d1 - d0 - 1);
                float *q2, *k2, *v2, *do2;
                copy_in(&q2, q, nq), copy_in(&k2, k, nkv), copy_in(&v2, v, nkv), copy_in(&do2, dout, nq);
                perturb(kind, &s, d0, d1, tt, q2, k2, v2, do2);
                outputs p;
                alloc_out(&p, &s);
                run(&r, &s, q2, k2, v2, do2, &p);
                double lo = max_rel_change(p.o, base.o, d0, tt, 4, 64), lq = max_rel_change(p.dq, base.dq, d0, tt, 4, 64);
                leak_o[ri] = fmax(leak_o[ri], lo), leak_dq[ri] = fmax(leak_dq[ri], lq);
                if (exact) {
                    CHECK(rows_identical(p.o, base.o, d0, tt, 4, 64), "%s/%s: O before t=%d changed by %g", names[ri],
                          kind_names[kind], tt - d0, lo);
                    CHECK(rows_identical(p.dq, base.dq, d0, tt, 4, 64), "%s/%s: dQ before t=%d changed by %g",
                          names[ri], kind_names[kind], tt - d0, lq);
                }
                /* other documents */
                double c = fmax(max_rel_change(p.o, base.o, d1, T, 4, 64), max_rel_change(p.dq, base.dq, d1, T, 4, 64));
                c = fmax(c, max_rel_change(p.dk, base.dk, d1, T, 2, 64));
                cross[ri] = fmax(cross[ri], c);
                if (local)
                    CHECK(rows_identical(p.o, base.o, d1, T, 4, 64) && rows_identical(p.dq, base.dq, d1, T, 4, 64) &&
                              rows_identical(p.dk, base.dk, d1, T, 2, 64) && rows_identical(p.dv, base.dv, d1, T, 2, 64),
                          "%s/%s: another document changed (%g)", names[ri], kind_names[kind], c);
                free_out(&p);
                free(q2), free(k2), free(v2), free(do2);
            }
            free_out(&base);
        }
        free(q), free(k), free(v), free(dout);
    }
    printf("random packed layouts, 4 perturbation kinds x 3 layouts; max relative change:\n");
    printf("  %-12s %12s %12s %14s\n", "recipe", "O (t' < t)", "dQ (t' < t)", "other docs");
    for (int ri = 0; ri < nrec; ri++) printf("  %-12s %12.3e %12.3e %14.3e\n", names[ri], leak_o[ri], leak_dq[ri], cross[ri]);

    /* Constructed input: token 0 of a block holds one element at 1.9 * 2^3, the block's
     * max; token 20 raises that max. FLOOR_OCP clamps 15.2 to 14 until the scale doubles;
     * tensor-wide scales shift every earlier code. The probe must see both leaks. */
    {
        int32_t cu[3] = {0, 40, 64};
        flamia_shape s = {64, 2, cu, 1, 1, 64, 1, 0.0f, 0, NULL};
        size_t n = 64 * 64;
        float *q = xmalloc(n * 4), *k = xmalloc(n * 4), *v = xmalloc(n * 4), *dout = xmalloc(n * 4);
        fill_randn(q, 64, 1, 64, 0), fill_randn(k, 64, 1, 64, 0), fill_randn(dout, 64, 1, 64, 0);
        for (size_t i = 0; i < n; i++) v[i] = 0.5f * fminf(fmaxf(rng_normal(), -3.0f), 3.0f);
        v[0] = 15.2f, k[0] = 15.2f;
        printf("constructed input (future token 20 raises block 0's max):\n");
        for (int ri = 0; ri < nrec; ri++) {
            flamia_recipe r;
            flamia_recipe_preset(names[ri], &r);
            outputs base, p;
            alloc_out(&base, &s), alloc_out(&p, &s);
            run(&r, &s, q, k, v, dout, &base);
            float *k2, *v2;
            copy_in(&k2, k, n), copy_in(&v2, v, n);
            double lo[2], lq[2];
            const float factors[2] = {2.0f, 1.0e4f};
            for (int f = 0; f < 2; f++) {
                memcpy(k2, k, n * 4), memcpy(v2, v, n * 4);
                k2[20 * 64 + 5] = v2[20 * 64 + 5] = 15.2f * factors[f];
                run(&r, &s, q, k2, v2, dout, &p);
                lo[f] = max_rel_change(p.o, base.o, 0, 20, 1, 64), lq[f] = max_rel_change(p.dq, base.dq, 0, 20, 1, 64);
            }
            printf("  %-12s 2x: O %.3e dQ %.3e   1e4: O %.3e dQ %.3e\n", names[ri], lo[0], lq[0], lo[1], lq[1]);
            if (!strcmp(names[ri], "mx-floor"))
                CHECK(lo[0] > 1e-3 && lo[1] > 1e-3, "mx-floor leak must be visible: %g %g", lo[0], lo[1]);
            if (!strcmp(names[ri], "fp8-tensor")) CHECK(lo[1] > 1e-3 && lq[1] > 1e-3, "fp8-tensor leak: %g %g", lo[1], lq[1]);
            if (!strcmp(names[ri], "mxfp8-exact") || !strcmp(names[ri], "bf16"))
                CHECK(lo[0] == 0 && lq[0] == 0 && lo[1] == 0 && lq[1] == 0, "%s must not leak", names[ri]);
            free_out(&base), free_out(&p), free(k2), free(v2);
        }
        free(q), free(k), free(v), free(dout);
    }
    return TEST_EXIT();
}
