/* test_api.c - presets and bad input: clear status, a message, outputs untouched, no abort. */
#include "test_util.h"

#define T0 40
#define POISON 12345.0f

static float q[T0 * 4 * 64], k[T0 * 2 * 64], v[T0 * 2 * 64], o[T0 * 4 * 64], lse[T0 * 4];
static float dq[T0 * 4 * 64], dk[T0 * 2 * 64], dv[T0 * 2 * 64], dout[T0 * 4 * 64];

static void poison(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = POISON;
}
static int untouched(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (x[i] != POISON) return 0;
    return 1;
}

/* The forward with these arguments must fail with `want`, a message, and no output. */
static void expect_fwd_fail(const char *what, const flamia_recipe *r, const flamia_shape *s,
                            const float *qq, flamia_status want) {
    poison(o, sizeof o / sizeof *o);
    poison(lse, sizeof lse / sizeof *lse);
    flamia_status st = flamia_ref_forward(r, s, qq, k, v, o, lse);
    CHECK(st == want, "%s: status %s, want %s", what, flamia_status_string(st), flamia_status_string(want));
    CHECK(strlen(flamia_last_error()) > 10, "%s: no message", what);
    CHECK(untouched(o, sizeof o / sizeof *o) && untouched(lse, sizeof lse / sizeof *lse), "%s: outputs written", what);
    printf("  %-34s -> %s: %s\n", what, flamia_status_string(st), flamia_last_error());
}

int main(void) {
    test_seed_init("test_api");
    fill_randn(q, T0, 4, 64, 0);
    fill_randn(k, T0, 2, 64, 0);
    fill_randn(v, T0, 2, 64, 0);
    fill_randn(dout, T0, 4, 64, 0);

    /* presets */
    flamia_recipe r, mx;
    for (const char *const *n = flamia_recipe_preset_names(); *n; n++) {
        CHECK(flamia_recipe_preset(*n, &r) == FLAMIA_OK, "preset %s", *n);
        CHECK(!strcmp(r.name, *n), "preset name %s", r.name);
        CHECK(flamia_recipe_validate(&r, 1) == FLAMIA_OK, "preset %s validates: %s", *n, flamia_last_error());
    }
    memset(&r, 0x5A, sizeof r);
    flamia_recipe before = r;
    CHECK(flamia_recipe_preset("mxfp9", &r) == FLAMIA_ERR_INVALID, "unknown preset");
    CHECK(!memcmp(&r, &before, sizeof r), "unknown preset must leave the recipe untouched");
    CHECK(strstr(flamia_last_error(), "mxfp9") != NULL, "message names the preset");
    CHECK(flamia_recipe_preset(NULL, &r) == FLAMIA_ERR_INVALID, "NULL name");
    flamia_recipe_preset("mxfp8", &mx);

    int32_t cu[3] = {0, 17, T0};
    flamia_shape s = {T0, 2, cu, 4, 2, 64, 1, 0.0f, 0, NULL};
    poison(o, sizeof o / sizeof *o);
    CHECK(flamia_ref_forward(&mx, &s, q, k, v, o, lse) == FLAMIA_OK, "valid call: %s", flamia_last_error());
    CHECK(!strcmp(flamia_last_error(), ""), "success clears the message");

    printf("bad inputs:\n");
    expect_fwd_fail("NULL q", &mx, &s, NULL, FLAMIA_ERR_INVALID);
    expect_fwd_fail("NULL recipe", NULL, &s, q, FLAMIA_ERR_INVALID);
    expect_fwd_fail("NULL shape", &mx, NULL, q, FLAMIA_ERR_INVALID);
    int32_t bad0[3] = {1, 17, T0}, badinc[3] = {0, 17, 17}, badend[3] = {0, 17, T0 - 1};
    flamia_shape b = s;
    b.cu_seqlens = bad0;
    expect_fwd_fail("cu_seqlens[0] != 0", &mx, &b, q, FLAMIA_ERR_INVALID);
    b.cu_seqlens = badinc;
    expect_fwd_fail("cu_seqlens not increasing", &mx, &b, q, FLAMIA_ERR_INVALID);
    b.cu_seqlens = badend;
    expect_fwd_fail("cu_seqlens end != total_tokens", &mx, &b, q, FLAMIA_ERR_INVALID);
    b.cu_seqlens = NULL;
    expect_fwd_fail("cu_seqlens NULL", &mx, &b, q, FLAMIA_ERR_INVALID);
    b = s;
    b.heads_q = 3;
    expect_fwd_fail("heads_q % heads_kv != 0", &mx, &b, q, FLAMIA_ERR_INVALID);
    b = s;
    b.head_dim = 96;
    expect_fwd_fail("head_dim 96", &mx, &b, q, FLAMIA_ERR_UNSUPPORTED);
    b = s;
    b.softmax_scale = NAN;
    expect_fwd_fail("softmax_scale NaN", &mx, &b, q, FLAMIA_ERR_INVALID);
    b = s;
    b.total_tokens = 0;
    expect_fwd_fail("total_tokens 0", &mx, &b, q, FLAMIA_ERR_INVALID);
    flamia_recipe badr = mx;
    badr.token_block = 16;
    expect_fwd_fail("token_block 16", &badr, &s, q, FLAMIA_ERR_UNSUPPORTED);
    badr = mx;
    badr.p_offset_log2 = 9;
    expect_fwd_fail("p offset 9 (would overflow E4M3)", &badr, &s, q, FLAMIA_ERR_INVALID);

    /* non-finite input: refused by E4M3 recipes, propagated by bf16 */
    static float qn[T0 * 4 * 64];
    memcpy(qn, q, sizeof q);
    qn[5 * 4 * 64 + 7] = NAN;
    expect_fwd_fail("NaN in q (mxfp8)", &mx, &s, qn, FLAMIA_ERR_INVALID);
    qn[5 * 4 * 64 + 7] = INFINITY;
    expect_fwd_fail("inf in q (mxfp8)", &mx, &s, qn, FLAMIA_ERR_INVALID);
    flamia_recipe bf;
    flamia_recipe_preset("bf16", &bf);
    CHECK(flamia_ref_forward(&bf, &s, qn, k, v, o, lse) == FLAMIA_OK, "bf16 propagates inf");

    /* inference-only options (the bit-level exponentials, a 4-bit P): forward allowed, backward
     * (training) refused */
    flamia_status st;
    static const struct {
        flamia_exp_mode mode;
        flamia_format p;
        const char *what;
    } inference_only[] = {{FLAMIA_EXP2_SCHRAUDOLPH, FLAMIA_FMT_E4M3, "schraudolph"},
                          {FLAMIA_EXP2_SCHRAUDOLPH_MIXED, FLAMIA_FMT_E4M3, "schraudolph-mixed"},
                          {FLAMIA_EXP2_MITCHELL, FLAMIA_FMT_NVFP4, "mitchell, 4-bit P"},
                          {FLAMIA_EXP2_EXACT, FLAMIA_FMT_NVFP4, "4-bit P"}};
    for (size_t am = 0; am < sizeof inference_only / sizeof *inference_only; am++) {
        flamia_recipe approx = mx;
        approx.exp_mode = inference_only[am].mode;
        approx.p_format = inference_only[am].p;
        CHECK(flamia_ref_forward(&approx, &s, q, k, v, o, lse) == FLAMIA_OK, "%s forward: %s",
              inference_only[am].what, flamia_last_error());
        poison(dq, sizeof dq / sizeof *dq);
        poison(dk, sizeof dk / sizeof *dk);
        poison(dv, sizeof dv / sizeof *dv);
        st = flamia_ref_backward(&approx, &s, q, k, v, o, lse, dout, dq, dk, dv);
        CHECK(st == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "inference-only"),
              "%s in backward must be refused: %s", inference_only[am].what, flamia_last_error());
        CHECK(untouched(dq, sizeof dq / sizeof *dq) && untouched(dk, sizeof dk / sizeof *dk) &&
                  untouched(dv, sizeof dv / sizeof *dv),
              "refused backward wrote outputs");
        printf("  %-34s -> %s\n", inference_only[am].what, flamia_last_error());

        /* a training call with an inference-only exponential is refused before any device
         * work (a CUDA build answers without a GPU too; a CPU-only build says it has no CUDA) */
        {
            int32_t dcu[3] = {0, 17, T0};
            flamia_shape ds = s;
            ds.cu_seqlens = dcu;
            ds.max_seqlen = 23;
            st = flamia_cuda_train_step(&approx, &ds, q, k, v, dout, o, lse, dq, dk, dv, NULL, 0, NULL);
            if (strstr(flamia_version_string(), "cuda"))
                CHECK(st == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "inference-only"),
                      "cuda train step, %s: %s: %s", inference_only[am].what, flamia_status_string(st),
                      flamia_last_error());
            else
                CHECK(st == FLAMIA_ERR_UNSUPPORTED, "cpu-only build: %s", flamia_status_string(st));
            printf("  cuda train step, %-17s -> %s: %s\n", inference_only[am].what, flamia_status_string(st),
                   flamia_last_error());
        }
    }
    CHECK(flamia_ref_backward(&mx, &s, q, k, v, o, lse, dout, NULL, dk, dv) == FLAMIA_ERR_INVALID, "NULL dq");
    printf("%s\n", flamia_version_string());

    /* CUDA entry points answer with a status whatever the build */
    size_t bytes = 0;
    st = flamia_cuda_workspace_size(&mx, &s, &bytes);
    if (!flamia_cuda_available())
        CHECK(flamia_cuda_forward(&mx, &s, NULL, 0, NULL, NULL, NULL) != FLAMIA_OK, "cuda forward without GPU");
    printf("cuda available: %d (%s)\n", flamia_cuda_available(), flamia_last_error());

    /* head_dim 64 (s has it): the CUDA forward and training call refuse it with the reason,
     * before any device check (so on this machine too) and before writing anything; quantize
     * takes it (whatever it answers here, not for the head dim) */
    if (strstr(flamia_version_string(), "cuda")) {
        poison(o, sizeof o / sizeof *o);
        poison(lse, sizeof lse / sizeof *lse);
        st = flamia_cuda_forward(&mx, &s, NULL, 0, o, lse, NULL);
        CHECK(st == FLAMIA_ERR_UNSUPPORTED && strstr(flamia_last_error(), "head_dim 64") &&
                  strstr(flamia_last_error(), "forward takes head_dim 128"),
              "cuda forward, head_dim 64: %s: %s", flamia_status_string(st), flamia_last_error());
        printf("  %-34s -> %s: %s\n", "cuda forward, head_dim 64", flamia_status_string(st), flamia_last_error());
        st = flamia_cuda_train_step(&mx, &s, q, k, v, dout, o, lse, dq, dk, dv, NULL, 0, NULL);
        CHECK(st == FLAMIA_ERR_UNSUPPORTED && strstr(flamia_last_error(), "head_dim 64"),
              "cuda train step, head_dim 64: %s: %s", flamia_status_string(st), flamia_last_error());
        CHECK(untouched(o, sizeof o / sizeof *o) && untouched(lse, sizeof lse / sizeof *lse),
              "refused head_dim 64 calls wrote outputs");
        st = flamia_cuda_quantize(&mx, &s, q, k, v, NULL, 0, NULL);
        CHECK(st != FLAMIA_OK && !strstr(flamia_last_error(), "head_dim"), "cuda quantize, head_dim 64: %s",
              flamia_last_error());
    }

    /* the non-finite record's query: its argument checks answer without a GPU; past them a
     * machine without one says so, and a CPU-only build says it has no CUDA */
    {
        unsigned char host_ws[256];
        if (strstr(flamia_version_string(), "cuda")) {
            st = flamia_cuda_check_finite(NULL, 4, NULL);
            CHECK(st == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "workspace is NULL"),
                  "check_finite, NULL workspace: %s: %s", flamia_status_string(st), flamia_last_error());
            st = flamia_cuda_check_finite(host_ws, 0, NULL);
            CHECK(st == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "workspace_bytes 0"),
                  "check_finite, 0 bytes: %s: %s", flamia_status_string(st), flamia_last_error());
            printf("  %-34s -> %s: %s\n", "cuda check_finite, 0 bytes", flamia_status_string(st), flamia_last_error());
            if (!flamia_cuda_available()) {
                st = flamia_cuda_check_finite(host_ws, sizeof host_ws, NULL);
                CHECK(st == FLAMIA_ERR_UNSUPPORTED, "check_finite without a GPU: %s: %s", flamia_status_string(st),
                      flamia_last_error());
            }
        } else {
            CHECK(flamia_cuda_check_finite(host_ws, sizeof host_ws, NULL) == FLAMIA_ERR_UNSUPPORTED,
                  "cpu-only build: check_finite");
        }
    }

    /* deterministic dQ switch: a CUDA build stores and echoes it (no GPU needed); a
     * CPU-only build says it has no CUDA and reports 0 */
    if (strstr(flamia_version_string(), "cuda")) {
        CHECK(flamia_cuda_set_deterministic(1) == FLAMIA_OK && flamia_cuda_deterministic() == 1, "deterministic on");
        CHECK(flamia_cuda_set_deterministic(0) == FLAMIA_OK && flamia_cuda_deterministic() == 0, "deterministic off");
        /* the forward's O sum interval: 0 and powers of two from 2 to 64, else refused and unchanged */
        CHECK(flamia_cuda_o_sum_interval() == 4, "O sum interval default 4");
        CHECK(flamia_cuda_set_o_sum_interval(8) == FLAMIA_OK && flamia_cuda_o_sum_interval() == 8, "O sum interval 8");
        CHECK(flamia_cuda_set_o_sum_interval(0) == FLAMIA_OK && flamia_cuda_o_sum_interval() == 0, "O sum interval 0");
        const int bad[] = {3, -1, 128, 6, 1};
        for (int i = 0; i < 5; i++)
            CHECK(flamia_cuda_set_o_sum_interval(bad[i]) == FLAMIA_ERR_INVALID && flamia_cuda_o_sum_interval() == 0 &&
                      strstr(flamia_last_error(), "key_tiles") != NULL,
                  "O sum interval refused");
        CHECK(flamia_cuda_set_o_sum_interval(4) == FLAMIA_OK && flamia_cuda_o_sum_interval() == 4, "O sum interval back");
    } else {
        CHECK(flamia_cuda_set_deterministic(1) == FLAMIA_ERR_UNSUPPORTED && flamia_cuda_deterministic() == 0,
              "cpu-only build: deterministic switch");
        CHECK(flamia_cuda_set_o_sum_interval(4) == FLAMIA_ERR_UNSUPPORTED && flamia_cuda_o_sum_interval() == 0,
              "cpu-only build: O sum interval");
    }
    return TEST_EXIT();
}
