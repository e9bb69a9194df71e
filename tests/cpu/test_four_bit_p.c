/* test_four_bit_p.c - Mitchell's exponential and the 4-bit P (NVFP4) of the CPU reference against
 * their definitions (docs/numerics.md 3.3), and flamia_ref_p_codes.
 *
 * Operands stay FP32 (no code rounding in the scores), so every score is the FP64 dot product
 * rounded once and t = s * c is recomputed here. V's row for key j of a document is e_j, so O's
 * element j of any row is key j's P value (as P V uses it) over the row's sum of unquantized
 * weights, and lse is that sum's log: both check the values themselves. Two non-causal documents
 * of 17-64 keys (one key tile; the last 16-key group is partial), random Q and K.
 *   exact     P_j = exp2(tf) 2^(ti - m), ti = trunc(t), m = ceil(max t) (the split of 3.3)
 *   mitchell  (tf + 127) 2^23 truncated into FP32's bits, times 2^(ti - m): 2^floor(t - m) (1 + frac(t))
 *             to 23 fraction bits, above the exact one by up to 6.1 %, never below
 *   NVFP4 P   per row and 16 keys from the document's first: scale e4m3(amax 2^8 / 6), code
 *             e2m1(P / (scale 2^-8)), value code x scale 2^-8; the row sum stays unquantized,
 *             so lse is bit-identical to FP32 P's
 * flamia_ref_p_codes must return the same codes (E2M1 nibbles, E4M3 bytes of P 2^8), 0xFF
 * across documents and above the diagonal of a causal call, and refuse P formats without codes. */
#include "test_util.h"

#define DMAX 64
#define LN2_TEST 0.69314718055994530942
#define D 64

static float q[2 * DMAX * D], k[2 * DMAX * D], v[2 * DMAX * D], o[2 * DMAX * D], lse[2 * DMAX], lse_fp32[2 * DMAX];
static uint8_t codes[2 * DMAX * 2 * DMAX], codes1[2 * DMAX * 2 * DMAX];
static float q2[2 * DMAX * 2 * D]; /* two query heads sharing K (GQA) */

typedef enum { EXACT, MITCHELL } oracle_exp;

/* the row's t = fl(s c) against the keys of its document, and the frame m */
static float row_t(const int32_t *cu, int doc, int i, float *t) {
    const float c = 0.125f * 1.44269504088896341f; /* scale 1/sqrt(64), log2(e) as the reference */
    float tmax = -INFINITY;
    for (int j = cu[doc]; j < cu[doc + 1]; j++) {
        double s = 0;
        for (int d = 0; d < D; d++) s += (double)q[i * D + d] * k[j * D + d];
        t[j - cu[doc]] = (float)s * c;
        tmax = fmaxf(tmax, t[j - cu[doc]]);
    }
    return ceilf(tmax);
}

static double oracle_p(oracle_exp e, float t, float m) {
    const float ti = truncf(t), tf = t - ti;
    if (e == EXACT) return ldexp((double)(float)exp2((double)tf), (int)(ti - m));
    const uint32_t bits = (uint32_t)(((double)tf + 127.0) * 8388608.0);
    float w;
    memcpy(&w, &bits, sizeof w);
    return ldexp((double)w, (int)(ti - m));
}

/* Mitchell's value without the bit field, for its bound against exp2 */
static double mitchell_math(float t, float m) {
    const double fl = floor((double)t);
    return ldexp(1.0 + ((double)t - fl), (int)(fl - m));
}

/* NVFP4 P of one row (n keys), as numerics.md 3.3 defines it */
static void oracle_nvfp4(const double *p, int n, double *pq, uint8_t *code) {
    for (int g = 0; g < n; g += 16) {
        double amax = 0;
        for (int j = g; j < g + 16 && j < n; j++) amax = fmax(amax, p[j]);
        const float sv = flamia_e4m3_decode(flamia_e4m3_encode((float)amax * 256.0f / 6.0f)) / 256.0f;
        for (int j = g; j < g + 16 && j < n; j++) {
            code[j] = sv > 0 ? flamia_e2m1_encode((float)p[j] / sv) : 0;
            pq[j] = (double)flamia_e2m1_decode(code[j]) * sv;
        }
    }
}

int main(void) {
    test_seed_init("test_four_bit_p");
    const int L0 = rng_int(17, DMAX), L1 = rng_int(17, DMAX), T = L0 + L1;
    int32_t cu[3] = {0, L0, T};
    fill_randn(q, T, 1, D, 0);
    fill_randn(k, T, 1, D, 0);
    for (int i = 0; i < T * D; i++) q[i] *= 2.0f; /* t spread over several octaves */
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++) v[t * D + d] = d == (t < L0 ? t : t - L0);
    flamia_shape s = {T, 2, cu, 1, 1, D, /*causal*/ 0, 0.0f, 0, NULL};

    flamia_recipe base;
    flamia_recipe_preset("mxfp8", &base);
    const flamia_operand_quant fp32 = {FLAMIA_FMT_FP32, FLAMIA_GRAN_TOKEN, FLAMIA_EXP_CEIL};
    base.q_score = base.k_score = base.q = base.k = base.v = base.dout = fp32;

    static const struct {
        const char *name;
        flamia_exp_mode mode;
        flamia_format p;
    } cases[] = {{"exact, FP32 P", FLAMIA_EXP2_EXACT, FLAMIA_FMT_FP32},
                 {"mitchell, FP32 P", FLAMIA_EXP2_MITCHELL, FLAMIA_FMT_FP32},
                 {"exact, NVFP4 P", FLAMIA_EXP2_EXACT, FLAMIA_FMT_NVFP4},
                 {"mitchell, NVFP4 P", FLAMIA_EXP2_MITCHELL, FLAMIA_FMT_NVFP4},
                 {"exact, E4M3 P", FLAMIA_EXP2_EXACT, FLAMIA_FMT_E4M3}};
    double max_ratio = 0, min_ratio = 2;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        flamia_recipe r = base;
        r.exp_mode = cases[c].mode;
        r.p_format = cases[c].p;
        const oracle_exp e = r.exp_mode == FLAMIA_EXP2_MITCHELL ? MITCHELL : EXACT;
        CHECK(flamia_ref_forward(&r, &s, q, k, v, o, lse) == FLAMIA_OK, "%s: %s", cases[c].name, flamia_last_error());
        const int with_codes = r.p_format != FLAMIA_FMT_FP32;
        if (with_codes)
            CHECK(flamia_ref_p_codes(&r, &s, q, k, 0, codes) == FLAMIA_OK, "%s codes: %s", cases[c].name,
                  flamia_last_error());
        int wrong_o = 0, wrong_lse = 0, wrong_code = 0, not_ff = 0;
        for (int doc = 0; doc < 2; doc++) {
            const int n = cu[doc + 1] - cu[doc];
            for (int i = cu[doc]; i < cu[doc + 1]; i++) {
                float t[DMAX];
                const float m = row_t(cu, doc, i, t);
                double p[DMAX], pq[DMAX], sum = 0;
                uint8_t code[DMAX];
                for (int j = 0; j < n; j++) {
                    p[j] = oracle_p(e, t[j], m);
                    sum += p[j];
                    if (e == MITCHELL) {
                        if (fabs(p[j] / mitchell_math(t[j], m) - 1.0) > 0x1p-22) wrong_lse++;
                        const double ratio = p[j] / oracle_p(EXACT, t[j], m);
                        max_ratio = fmax(max_ratio, ratio), min_ratio = fmin(min_ratio, ratio);
                    }
                }
                if (r.p_format == FLAMIA_FMT_NVFP4) oracle_nvfp4(p, n, pq, code);
                else
                    for (int j = 0; j < n; j++) {
                        pq[j] = r.p_format == FLAMIA_FMT_E4M3
                                    ? (double)flamia_e4m3_decode(code[j] = flamia_e4m3_encode((float)(p[j] * 256.0))) /
                                          256.0
                                    : p[j];
                    }
                for (int j = 0; j < n; j++) {
                    const double want = pq[j] / sum; /* O is BF16: half an ulp is 2^-9 */
                    if (fabs(o[i * D + j] - want) > 0x1p-8 * want) wrong_o++;
                    if (with_codes && codes[(size_t)i * T + cu[doc] + j] != code[j]) wrong_code++;
                }
                if (fabs(lse[i] - LN2_TEST * (m + log2(sum))) > 2e-6) wrong_lse++;
                if (with_codes)
                    for (int j = 0; j < T; j++)
                        if ((j < cu[doc] || j >= cu[doc + 1]) && codes[(size_t)i * T + j] != 0xFF) not_ff++;
            }
        }
        CHECK(!wrong_o, "%s: %d elements of O away from the definition (L %d, %d)", cases[c].name, wrong_o, L0, L1);
        CHECK(!wrong_lse, "%s: %d rows' lse away from the definition", cases[c].name, wrong_lse);
        CHECK(!wrong_code, "%s: %d codes differ from the definition", cases[c].name, wrong_code);
        CHECK(!not_ff, "%s: %d cross-document entries are not 0xFF", cases[c].name, not_ff);
        if (r.p_format == FLAMIA_FMT_FP32 && e == EXACT) memcpy(lse_fp32, lse, sizeof(float) * T);
        if (r.p_format == FLAMIA_FMT_NVFP4 && e == EXACT)
            CHECK(!memcmp(lse, lse_fp32, sizeof(float) * T), "NVFP4 P changed lse (the row sum is unquantized)");
        printf("  %-18s O[%d][0..3] = %.6f %.6f %.6f %.6f\n", cases[c].name, L0 - 1, o[(L0 - 1) * D],
               o[(L0 - 1) * D + 1], o[(L0 - 1) * D + 2], o[(L0 - 1) * D + 3]);
    }
    printf("  mitchell / exact over the rows' weights: %.5f .. %.5f\n", min_ratio, max_ratio);
    CHECK(min_ratio >= 1.0 && max_ratio <= 1.0615 && max_ratio > 1.01, "Mitchell's ratio %.5f .. %.5f",
          min_ratio, max_ratio);

    /* causal: 0xFF above the diagonal */
    {
        flamia_shape sc = s;
        sc.causal = 1;
        flamia_recipe r = base;
        r.p_format = FLAMIA_FMT_NVFP4;
        CHECK(flamia_ref_p_codes(&r, &sc, q, k, 0, codes) == FLAMIA_OK, "causal codes: %s", flamia_last_error());
        int wrong = 0;
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                const int visible = (i < L0) == (j < L0) && j <= i;
                if ((codes[(size_t)i * T + j] == 0xFF) == visible) wrong++;
            }
        CHECK(!wrong, "causal codes: %d entries with the wrong visibility", wrong);
    }

    /* GQA and a 1-token document: head 1 of two query heads on one K head gives the codes of a
     * one-head call with head 1's Q (tokens [0, 1) | [1, L0) | [L0, T), causal) */
    {
        int32_t cu3[4] = {0, 1, L0, T};
        flamia_shape g = {T, 3, cu3, 2, 1, D, /*causal*/ 1, 0.0f, 0, NULL};
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++) q2[(t * 2 + 0) * D + d] = -q[t * D + d], q2[(t * 2 + 1) * D + d] = q[t * D + d];
        flamia_shape one = g;
        one.heads_q = 1;
        flamia_recipe r = base;
        r.p_format = FLAMIA_FMT_NVFP4;
        r.exp_mode = FLAMIA_EXP2_MITCHELL;
        CHECK(flamia_ref_p_codes(&r, &g, q2, k, 1, codes) == FLAMIA_OK, "GQA codes: %s", flamia_last_error());
        CHECK(flamia_ref_p_codes(&r, &one, q, k, 0, codes1) == FLAMIA_OK, "one-head codes: %s", flamia_last_error());
        CHECK(!memcmp(codes, codes1, (size_t)T * T), "GQA head 1's codes differ from a one-head call's");
        CHECK(codes[0] != 0xFF && codes[1] == 0xFF && codes[(size_t)1 * T] == 0xFF,
              "1-token document: its one pair evaluated, nothing across");
        CHECK(codes[0] == flamia_e2m1_encode(6.0f), "a lone key is its group's maximum: code 6 (got 0x%x)", codes[0]);
    }

    /* refusals: no codes for FP32 / BF16 P, a head out of range, NULL; codes untouched */
    {
        flamia_recipe bf;
        flamia_recipe_preset("bf16", &bf);
        memset(codes, 0x5A, sizeof codes);
        flamia_status st = flamia_ref_p_codes(&bf, &s, q, k, 0, codes);
        CHECK(st == FLAMIA_ERR_UNSUPPORTED && strstr(flamia_last_error(), "no P codes"), "bf16: %s",
              flamia_last_error());
        printf("  %-18s -> %s\n", "bf16 codes", flamia_last_error());
        flamia_recipe mx;
        flamia_recipe_preset("mxfp8", &mx);
        st = flamia_ref_p_codes(&mx, &s, q, k, 1, codes);
        CHECK(st == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "head 1"), "head 1: %s", flamia_last_error());
        printf("  %-18s -> %s\n", "head out of range", flamia_last_error());
        CHECK(flamia_ref_p_codes(&mx, &s, q, k, 0, NULL) == FLAMIA_ERR_INVALID, "NULL codes");
        int touched = 0;
        for (size_t i = 0; i < sizeof codes; i++) touched += codes[i] != 0x5A;
        CHECK(!touched, "refused calls wrote %d code bytes", touched);
    }
    return TEST_EXIT();
}
