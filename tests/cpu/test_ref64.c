/* test_ref64.c - the FP64 ground truth (attention_f64.c: tiled over 32 queries, parallel
 * over heads, dot products vectorized across queries) equals the textbook per-query loops
 * below bit for bit, for every thread count: every sum runs in the loops' order. Random
 * packed layouts with 1-token documents and lengths not a multiple of the tile, GQA,
 * causal and not, head_dim 64 and 128. */
#include "test_util.h"

#define xmalloc_d(n) ((double *)xmalloc((size_t)(n) * sizeof(double)))

/* ---- the textbook loops: one query row at a time, keys ascending */
static double dot_row(const float *a, const float *b, int D) {
    double acc = 0.0;
    for (int d = 0; d < D; d++) acc += (double)a[d] * b[d];
    return acc;
}

static double softmax_row(const flamia_shape *s, const float *q, const float *k, int d0, int i, int jend, int hq,
                          double scale, double *p) {
    const int D = s->head_dim, hk = hq / (s->heads_q / s->heads_kv);
    const float *qi = q + ((size_t)(d0 + i) * s->heads_q + hq) * D;
    double m = -INFINITY;
    for (int j = 0; j < jend; j++) {
        p[j] = scale * dot_row(qi, k + ((size_t)(d0 + j) * s->heads_kv + hk) * D, D);
        if (p[j] > m) m = p[j];
    }
    double l = 0.0;
    for (int j = 0; j < jend; j++) l += (p[j] = exp(p[j] - m));
    for (int j = 0; j < jend; j++) p[j] /= l;
    return m + log(l);
}

static void textbook(const flamia_shape *s, const float *q, const float *k, const float *v, const float *g,
                     double *o, double *lse, double *dq, double *dk, double *dv) {
    const int D = s->head_dim, G = s->heads_q / s->heads_kv, T = s->total_tokens;
    const double scale = 1.0f / sqrtf((float)D); /* the shape's default scale, in FP32 as the API defines it */
    double *p = xmalloc_d(T), *dp = xmalloc_d(T);
    memset(dq, 0, (size_t)T * s->heads_q * D * 8);
    memset(dk, 0, (size_t)T * s->heads_kv * D * 8);
    memset(dv, 0, (size_t)T * s->heads_kv * D * 8);
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int hq = 0; hq < s->heads_q; hq++)
            for (int i = 0; i < L; i++) {
                const int jend = s->causal ? i + 1 : L, hk = hq / G;
                const size_t row = (size_t)(d0 + i) * s->heads_q + hq, qrow = row * D;
                lse[row] = softmax_row(s, q, k, d0, i, jend, hq, scale, p);
                memset(o + qrow, 0, (size_t)D * 8);
                double Di = 0.0;
                for (int j = 0; j < jend; j++) {
                    const size_t krow = ((size_t)(d0 + j) * s->heads_kv + hk) * D;
                    for (int d = 0; d < D; d++) o[qrow + d] += p[j] * v[krow + d];
                    dp[j] = dot_row(g + qrow, v + krow, D);
                    Di += p[j] * dp[j];
                }
                for (int j = 0; j < jend; j++) {
                    const size_t krow = ((size_t)(d0 + j) * s->heads_kv + hk) * D;
                    const double ds = p[j] * (dp[j] - Di) * scale;
                    for (int d = 0; d < D; d++) {
                        dq[qrow + d] += ds * k[krow + d];
                        dk[krow + d] += ds * q[qrow + d];
                        dv[krow + d] += p[j] * g[qrow + d];
                    }
                }
            }
    }
    free(p);
    free(dp);
}

int main(void) {
    test_seed_init("test_ref64");
    for (int c = 0; c < 4; c++) {
        /* a 1-token document, then random lengths in [1, 150] (tiles of 32 queries) */
        int32_t cu[6] = {0, 1};
        const int docs = 5, D = c & 1 ? 64 : 128, Hkv = 1 + (c & 2), Hq = 2 * Hkv, causal = c != 1;
        for (int d = 1; d < docs; d++) cu[d + 1] = cu[d] + rng_int(1, 150);
        const int Tn = cu[docs];
        flamia_shape s = {Tn, docs, cu, Hq, Hkv, D, causal, 0.0f, 0, NULL};
        CHECK(flamia_shape_validate(&s) == FLAMIA_OK, "layout: %s", flamia_last_error());
        const size_t nq = (size_t)Tn * Hq * D, nk = (size_t)Tn * Hkv * D, nl = (size_t)Tn * Hq;
        float *q = xmalloc(nq * 4), *k = xmalloc(nk * 4), *v = xmalloc(nk * 4), *g = xmalloc(nq * 4);
        fill_randn(q, Tn, Hq, D, 2), fill_randn(k, Tn, Hkv, D, 2), fill_randn(v, Tn, Hkv, D, 0);
        fill_randn(g, Tn, Hq, D, 0);
        double *want[5] = {xmalloc_d(nq), xmalloc_d(nl), xmalloc_d(nq), xmalloc_d(nk), xmalloc_d(nk)};
        textbook(&s, q, k, v, g, want[0], want[1], want[2], want[3], want[4]);
        const size_t n[5] = {nq, nl, nq, nk, nk};
        static const char *names[5] = {"O", "lse", "dQ", "dK", "dV"};
        for (int threads = 1; threads <= 3; threads += 2) {
            char env[8];
            snprintf(env, sizeof env, "%d", threads);
            setenv("FLAMIA_REF_THREADS", env, 1);
            double *got[5] = {xmalloc_d(nq), xmalloc_d(nl), xmalloc_d(nq), xmalloc_d(nk), xmalloc_d(nk)};
            CHECK(flamia_ref64_forward(&s, q, k, v, got[0], got[1]) == FLAMIA_OK, "fwd: %s", flamia_last_error());
            CHECK(flamia_ref64_backward(&s, q, k, v, g, got[2], got[3], got[4]) == FLAMIA_OK, "bwd: %s",
                  flamia_last_error());
            int same = 1;
            for (int t = 0; t < 5; t++) {
                const int eq = !memcmp(got[t], want[t], n[t] * 8);
                CHECK(eq, "case %d (T %d, heads %d/%d, d %d, causal %d), %d threads: %s differs from the textbook loops",
                      c, Tn, Hq, Hkv, D, causal, threads, names[t]);
                same &= eq;
                free(got[t]);
            }
            printf("  T %4d heads %d/%d d %3d causal %d threads %d: O, lse, dQ, dK, dV %s\n", Tn, Hq, Hkv, D, causal,
                   threads, same ? "bit-identical to the textbook loops" : "DIFFER");
        }
        unsetenv("FLAMIA_REF_THREADS");
        for (int t = 0; t < 5; t++) free(want[t]);
        free(q), free(k), free(v), free(g);
    }
    return TEST_EXIT();
}
