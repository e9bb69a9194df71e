/* test_row_sum.c - the row-sum rule (flamia_recipe.row_sum, docs/numerics.md 3.4). With
 * V = 1 everywhere (exact in every format) O_i is the row's sum of P's values over l:
 *   FLAMIA_ROWSUM_P_VALUES      l adds up those same values, so every O element is 1 up to
 *                               BF16's half step (2^-9) and the rounding of FP64 sums;
 *   FLAMIA_ROWSUM_EXPONENTIALS  l adds up the unquantized exponentials (the default, the
 *                               kernels'), so O_i differs from 1 by P's rounding: somewhere by
 *                               more than BF16's step in E4M3 P recipes.
 * Random packed layout (1-token documents), GQA 4/2, causal, random Q and K with outlier
 * channels; mxfp8, mxfp8-exact and bf16. Also: the rule never changes the FP32-P recipe's
 * outputs, an unknown rule is refused, and the CUDA side refuses the P-values rule (its kernels
 * sum the exponentials) before touching anything. */
#include "test_util.h"

#define TMAX 1350 /* 15 documents of at most 90 tokens */
#define D 64

static float q[TMAX * 4 * D], k[TMAX * 2 * D], v[TMAX * 2 * D], o[TMAX * 4 * D], lse[TMAX * 4], o2[TMAX * 4 * D],
    lse2[TMAX * 4];

int main(void) {
    test_seed_init("test_row_sum");
    int32_t cu[16];
    const int T = random_layout(cu, 15, 90);
    flamia_shape s = {T, 15, cu, 4, 2, D, /*causal*/ 1, 0.0f, 0, NULL};
    fill_randn(q, T, 4, D, 2);
    fill_randn(k, T, 2, D, 2);
    for (int i = 0; i < T * 2 * D; i++) v[i] = 1.0f;
    static const char *presets[] = {"mxfp8", "mxfp8-exact", "bf16"};
    for (int p = 0; p < 3; p++) {
        flamia_recipe r;
        flamia_recipe_preset(presets[p], &r);
        CHECK(r.row_sum == FLAMIA_ROWSUM_EXPONENTIALS, "%s: the preset's rule is not the exponentials", presets[p]);
        double worst[2] = {0, 0};
        for (int rule = 0; rule < 2; rule++) {
            r.row_sum = rule ? FLAMIA_ROWSUM_P_VALUES : FLAMIA_ROWSUM_EXPONENTIALS;
            CHECK(flamia_ref_forward(&r, &s, q, k, v, o, lse) == FLAMIA_OK, "%s: %s", presets[p], flamia_last_error());
            for (int i = 0; i < T * 4 * D; i++) worst[rule] = fmax(worst[rule], fabs(o[i] - 1.0));
        }
        printf("  %-12s max |O - 1| with V = 1: exponentials %.3e, P values %.3e\n", presets[p], worst[0], worst[1]);
        CHECK(worst[1] <= 0x1p-9 + 1e-6, "%s: P values rule leaves O %g away from 1", presets[p], worst[1]);
        if (strcmp(presets[p], "bf16"))
            CHECK(worst[0] > 0x1p-8, "%s: the exponentials rule left O within BF16's step of 1 (%g): the test "
                  "would not see a wrong rule", presets[p], worst[0]);
    }

    /* the preset names PRESET-lsum: the preset with the P-values rule, nothing else changed; a
     * suffix on no preset, a doubled suffix and the bare suffix are unknown, out untouched */
    {
        const char *const *names = flamia_recipe_preset_names();
        for (int i = 0; names[i]; i++) {
            char lname[64];
            snprintf(lname, sizeof lname, "%s-lsum", names[i]);
            flamia_recipe a, b;
            CHECK(flamia_recipe_preset(names[i], &a) == FLAMIA_OK && flamia_recipe_preset(lname, &b) == FLAMIA_OK,
                  "%s: %s", lname, flamia_last_error());
            CHECK(b.row_sum == FLAMIA_ROWSUM_P_VALUES && !strcmp(b.name, lname), "%s: rule %d, name %s", lname,
                  (int)b.row_sum, b.name);
            b.row_sum = a.row_sum;
            memcpy(b.name, a.name, sizeof b.name);
            CHECK(!memcmp(&a, &b, sizeof a), "%s differs from %s beyond row_sum and name", lname, names[i]);
        }
        static const char *bad[] = {"fp2-lsum", "mxfp8-lsum-lsum", "-lsum", "lsum", "mxfp8-lsu"};
        for (int i = 0; i < 5; i++) {
            flamia_recipe r;
            memset(&r, 0x5A, sizeof r);
            CHECK(flamia_recipe_preset(bad[i], &r) == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "PRESET-lsum"),
                  "'%s' accepted or without the names: %s", bad[i], flamia_last_error());
            const unsigned char *u = (const unsigned char *)&r;
            int untouched = 1;
            for (size_t j = 0; j < sizeof r; j++) untouched &= u[j] == 0x5A;
            CHECK(untouched, "'%s': refused, but wrote the recipe", bad[i]);
            if (i == 0) printf("  %-34s -> %s\n", "preset 'fp2-lsum'", flamia_last_error());
        }
    }

    /* FP32 P: the rule changes nothing */
    {
        flamia_recipe r;
        flamia_recipe_preset("mxfp8", &r);
        r.p_format = FLAMIA_FMT_FP32;
        fill_randn(v, T, 2, D, 0);
        flamia_ref_forward(&r, &s, q, k, v, o, lse);
        r.row_sum = FLAMIA_ROWSUM_P_VALUES;
        flamia_ref_forward(&r, &s, q, k, v, o2, lse2);
        CHECK(!memcmp(o, o2, sizeof(float) * (size_t)T * 4 * D) && !memcmp(lse, lse2, sizeof(float) * (size_t)T * 4),
              "FP32 P: the row-sum rule changed the outputs");
    }

    /* an unknown rule is refused; the CUDA entry points refuse the P-values rule */
    {
        flamia_recipe r;
        flamia_recipe_preset("mxfp8", &r);
        r.row_sum = (flamia_row_sum)7;
        CHECK(flamia_ref_forward(&r, &s, q, k, v, o, lse) == FLAMIA_ERR_INVALID &&
                  strstr(flamia_last_error(), "row-sum"),
              "unknown rule: %s", flamia_last_error());
        printf("  %-34s -> %s\n", "unknown row-sum rule", flamia_last_error());
        r.row_sum = FLAMIA_ROWSUM_P_VALUES;
        size_t bytes = 0;
        flamia_shape ds = s;
        ds.head_dim = 128;
        ds.max_seqlen = 90;
        const flamia_status st = flamia_cuda_workspace_size(&r, &ds, &bytes);
        if (strstr(flamia_version_string(), "cuda")) /* the kernels run the rule (no GPU here: a device error) */
            CHECK(st == FLAMIA_OK || !strstr(flamia_last_error(), "not implemented on the GPU"),
                  "cuda, P-values rule refused as a recipe: %s", flamia_last_error());
        else
            CHECK(st == FLAMIA_ERR_UNSUPPORTED, "cpu-only build: %s", flamia_status_string(st));
        printf("  %-34s -> %s: %s\n", "cuda workspace, P-values rule", flamia_status_string(st), flamia_last_error());
    }
    return TEST_EXIT();
}
