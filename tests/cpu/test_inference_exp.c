/* test_inference_exp.c - the inference-only exponentials of the CPU reference as docs/numerics.md
 * 3.3 defines them. Every score is 0 (Q = 0) and V is one-hot per key, so O's element j is key
 * j's weight over the row's sum: the exact exponential gives every key 1, Schraudolph's in
 * BF16's bit field gives 2^-1 (1 + 122/128) = 0.9765625 at 0, in FP32's bit field
 * (127 - 0.0436775) 2^23 written into the bits. FLAMIA_EXP2_SCHRAUDOLPH_MIXED must approximate
 * exactly the keys j with (j / 2) mod 8 < 5 of each document (the second document starts the
 * pattern anew), FLAMIA_EXP2_SCHRAUDOLPH every key. P stays FP32 so that no code rounding
 * hides the weights; lse, the log of the row's sum of weights, checks the values themselves
 * (uniform weights cancel in O). Random K (it does not enter: Q = 0), random document split. */
#include "test_util.h"

#define T 77
#define D 64

static float q[T * D], k[T * D], v[T * D], o[T * D], lse[T];

static float bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int main(void) {
    test_seed_init("test_inference_exp");
    fill_randn(k, T, 1, D, 0);
    const int split = rng_int(33, T - 33); /* two documents of at least 33 keys */
    int32_t cu[3] = {0, split, T};
    flamia_shape s = {T, 2, cu, 1, 1, D, /*causal*/ 0, 0.0f, 0, NULL};
    for (int t = 0; t < T; t++) /* key j of its document: V's row is e_(j mod D) */
        for (int d = 0; d < D; d++) v[t * D + d] = d == (t < split ? t : t - split) % D;

    const double y = 127.0 - (double)0.0436775f; /* formed exactly: numerics.md 3.3 */
    const float w_bf16 = bits((uint32_t)(y * 128.0 + 0.5) << 16);
    const float w_fp32 = bits((uint32_t)(y * 8388608.0));
    CHECK(w_bf16 == 0.9765625f, "BF16-field value at 0: %.9g", w_bf16);
    static const struct {
        flamia_exp_mode mode;
        const char *name;
    } modes[] = {{FLAMIA_EXP2_EXACT, "exact"}, {FLAMIA_EXP2_SCHRAUDOLPH, "schraudolph"},
                 {FLAMIA_EXP2_SCHRAUDOLPH_MIXED, "schraudolph-mixed"}};
    for (int m = 0; m < 3; m++) {
        flamia_recipe r;
        flamia_recipe_preset("mxfp8", &r);
        r.p_format = FLAMIA_FMT_FP32;
        r.exp_mode = modes[m].mode;
        flamia_status st = flamia_ref_forward(&r, &s, q, k, v, o, lse);
        CHECK(st == FLAMIA_OK, "%s forward: %s", modes[m].name, flamia_last_error());
        int wrong = 0;
        for (int doc = 0; doc < 2; doc++) {
            const int n = cu[doc + 1] - cu[doc];
            double w[T], sum = 0;
            for (int j = 0; j < n; j++) {
                const int approx = m == 1 || (m == 2 && ((j >> 1) & 7) < 5);
                w[j] = !approx ? 1.0 : m == 1 ? (double)w_fp32 : (double)w_bf16;
                sum += w[j];
            }
            /* the last row of the document (non-causal: every row sees every key); keys j >= D
             * share V's row j mod D, so their weights add up */
            const float *orow = o + (size_t)(cu[doc + 1] - 1) * D;
            for (int d = 0; d < D; d++) {
                double want = 0;
                for (int j = d; j < n; j += D) want += w[j] / sum;
                if (fabs(orow[d] - want) > 0x1p-8 * want) wrong++; /* O is BF16: half an ulp is 2^-9 */
            }
            /* lse = ln(sum of the weights) (row maximum 0): the approximated values themselves */
            const float lrow = lse[cu[doc + 1] - 1];
            if (fabs(lrow - log(sum)) > 1e-6 * log(sum)) wrong++;
        }
        CHECK(!wrong, "%s: %d elements of O or lse away from the weights numerics.md 3.3 gives (split %d)", modes[m].name,
              wrong, split);
        printf("  %-18s O[last row][0..3] = %.6f %.6f %.6f %.6f\n", modes[m].name, o[(split - 1) * D],
               o[(split - 1) * D + 1], o[(split - 1) * D + 2], o[(split - 1) * D + 3]);
    }
    return TEST_EXIT();
}
