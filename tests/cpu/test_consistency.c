/* test_consistency.c - forward P codes (tile frames) vs backward recomputed P
 * codes (final frame): identical except the documented class (numerics.md 5),
 * and identical without exception when a document fits one key tile. Also: the
 * reference's results do not depend on its thread count. */
#include "test_util.h"

int main(void) {
    test_seed_init("test_consistency");
    const char *const *names = flamia_recipe_preset_names();
    for (int trial = 0; trial < 2; trial++) {
        const int single_tile = trial == 0;
        int32_t cu[6];
        int docs = 4;
        int T = random_layout(cu, docs, single_tile ? 128 : 400);
        flamia_shape s = {T, docs, cu, 6, 3, 64, 1, 0.0f, 0, NULL};
        size_t nq = (size_t)T * 6 * 64, nkv = (size_t)T * 3 * 64;
        float *q = xmalloc(nq * 4), *k = xmalloc(nkv * 4), *v = xmalloc(nkv * 4), *dout = xmalloc(nq * 4);
        fill_randn(q, T, 6, 64, 3), fill_randn(k, T, 3, 64, 3), fill_randn(v, T, 3, 64, 0), fill_randn(dout, T, 6, 64, 0);
        /* make scores grow along the sequence so frames do grow across tiles */
        for (int t = 0; t < T; t++)
            for (int d = 0; d < 64; d++) k[(size_t)t * 3 * 64 + d] *= 1.0f + 0.004f * (float)t;
        float *o = xmalloc(nq * 4), *lse = xmalloc((size_t)T * 6 * 4), *dq = xmalloc(nq * 4), *dk = xmalloc(nkv * 4),
              *dv = xmalloc(nkv * 4);
        printf("%s (T=%d):\n", single_tile ? "documents within one key tile" : "documents up to 400 tokens", T);
        for (const char *const *n = names; *n; n++) {
            flamia_recipe r;
            flamia_recipe_preset(*n, &r);
            flamia_ref_stats st;
            CHECK(flamia_ref_forward(&r, &s, q, k, v, o, lse) == FLAMIA_OK, "fwd %s", *n);
            CHECK(flamia_ref_backward_ex(&r, &s, q, k, v, o, lse, dout, dq, dk, dv, &st) == FLAMIA_OK, "bwd %s", *n);
            printf("  %-12s P codes %9.0f  differ %6.0f (%.2e)  outside the documented class %.0f\n", *n, st.p_codes,
                   st.p_mismatch, st.p_mismatch / (st.p_codes + 1e-300), st.p_mismatch_unexplained);
            CHECK(st.p_codes > 0, "%s: no P codes compared", *n);
            CHECK(st.p_mismatch_unexplained == 0, "%s: %g P codes differ outside the documented class", *n,
                  st.p_mismatch_unexplained);
            if (single_tile) CHECK(st.p_mismatch == 0, "%s: single tile must match exactly (%g differ)", *n, st.p_mismatch);
        }
        /* one thread vs three: bit-identical outputs */
        flamia_recipe r;
        flamia_recipe_preset("mxfp8", &r);
        float *o1 = xmalloc(nq * 4), *l1 = xmalloc((size_t)T * 6 * 4), *dq1 = xmalloc(nq * 4), *dk1 = xmalloc(nkv * 4),
              *dv1 = xmalloc(nkv * 4);
        setenv("FLAMIA_REF_THREADS", "1", 1);
        flamia_ref_forward(&r, &s, q, k, v, o1, l1);
        flamia_ref_backward(&r, &s, q, k, v, o1, l1, dout, dq1, dk1, dv1);
        setenv("FLAMIA_REF_THREADS", "3", 1);
        flamia_ref_forward(&r, &s, q, k, v, o, lse);
        flamia_ref_backward(&r, &s, q, k, v, o, lse, dout, dq, dk, dv);
        unsetenv("FLAMIA_REF_THREADS");
        CHECK(!memcmp(o, o1, nq * 4) && !memcmp(lse, l1, (size_t)T * 6 * 4) && !memcmp(dq, dq1, nq * 4) &&
                  !memcmp(dk, dk1, nkv * 4) && !memcmp(dv, dv1, nkv * 4),
              "results depend on the reference's thread count");
        free(o1), free(l1), free(dq1), free(dk1), free(dv1);
        free(q), free(k), free(v), free(dout), free(o), free(lse), free(dq), free(dk), free(dv);
    }
    return TEST_EXIT();
}
