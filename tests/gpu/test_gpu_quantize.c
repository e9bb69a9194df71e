/*
 * test_gpu_quantize.c - the fused quantize kernel is bit-exact against a host
 * quantization written with the same scalar formats (flamia_formats.h) and the
 * same Hadamard butterflies as the CPU reference: codes, per-token exponents,
 * V's transposed codes (pad zeroed), BF16 operands, the non-finite flag.
 * The workspace is poisoned first, so every byte the layout promises must be
 * written. Layouts: random packed documents (1-token docs, odd lengths,
 * lengths around 32/128), a single odd-length document, equal lengths; GQA;
 * head_dim 128 and 64; recipes bf16, mxfp8, mxfp8-exact, Hadamard off/on.
 */
#include "gpu_common.h"
#include "ref_internal.h" /* flamia_ref_hadamard: the rotation the GPU must match */

/* Test inputs that exercise the corners: per-token magnitudes over many
 * binades, zero rows, single-spike rows (the rest goes subnormal in E4M3),
 * rows of BF16 subnormals, values on E4M3 rounding ties, negative zeros. */
static void fill_inputs(rng_t *r, uint16_t *b, int T, int H, int D) {
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            uint16_t *row = b + ((size_t)t * H + h) * D;
            int kind = rng_int(r, 0, 19);
            double scale = ldexp(1.0, rng_int(r, -40, 40));
            for (int d = 0; d < D; d++) {
                float x;
                switch (kind) {
                case 0: x = 0.0f; break;
                case 1: x = d == 5 ? (float)(1e4 * scale) : (float)(rng_normal(r) * scale * 1e-3); break;
                case 2: x = flamia_bitsf((uint32_t)rng_int(r, 1, 0x7fffff)); break; /* subnormal */
                case 3: /* E4M3 ties: (m + 0.5) * 2^k with m odd/even */
                    x = (float)ldexp((double)rng_int(r, 16, 31) + 0.5, rng_int(r, -20, 20) - 4);
                    if (rng_int(r, 0, 1)) x = -x;
                    break;
                case 4: x = -0.0f; break;
                default: x = (float)(rng_normal(r) * scale);
                }
                row[d] = flamia_bf16_bits(x);
            }
        }
}

/* The expected E4M3 payload of one operand (groups: gran tokens of one document). */
static void expect_e4m3(const uint16_t *in, int T, int H, int D, const int32_t *cu, int ndocs, int gran,
                        int rotate, uint8_t *codes, int8_t *exps) {
    float *x = xmalloc((size_t)T * H * D * sizeof(float));
    for (size_t i = 0; i < (size_t)T * H * D; i++) x[i] = flamia_bf16_value(in[i]);
    if (rotate)
        flamia_ref_hadamard(x, (size_t)T * H, D); /* the reference's own rotation */
    for (int doc = 0; doc < ndocs; doc++)
        for (int s = cu[doc]; s < cu[doc + 1]; s += gran) {
            int e_end = s + gran < cu[doc + 1] ? s + gran : cu[doc + 1];
            for (int h = 0; h < H; h++) {
                float amax = 0.0f;
                for (int t = s; t < e_end; t++)
                    for (int d = 0; d < D; d++) {
                        float a = fabsf(x[((size_t)t * H + h) * D + d]);
                        if (a > amax) amax = a;
                    }
                int e = flamia_fmt_block_exponent(amax, FLAMIA_EXP_CEIL);
                for (int t = s; t < e_end; t++) {
                    exps[(size_t)t * H + h] = (int8_t)e;
                    for (int d = 0; d < D; d++) {
                        size_t i = ((size_t)t * H + h) * D + d;
                        codes[i] = flamia_e4m3_quant(x[i], e);
                    }
                }
            }
        }
    free(x);
}

static void expect_bf16(const uint16_t *in, size_t rows, int D, int rotate, uint16_t *out) {
    if (!rotate) {
        memcpy(out, in, rows * D * 2);
        return;
    }
    float *v = xmalloc((size_t)D * sizeof(float));
    for (size_t rr = 0; rr < rows; rr++) {
        for (int d = 0; d < D; d++) v[d] = flamia_bf16_value(in[rr * D + d]);
        flamia_ref_hadamard(v, 1, D);
        for (int d = 0; d < D; d++) out[rr * D + d] = flamia_bf16_bits(v[d]);
    }
    free(v);
}

static size_t count_diff_u8(const uint8_t *a, const uint8_t *b, size_t n, size_t *first) {
    size_t c = 0;
    *first = (size_t)-1;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            if (!c) *first = i;
            c++;
        }
    return c;
}

static void *fetch(const void *dev, size_t bytes) {
    void *h = xmalloc(bytes);
    CK(cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost));
    return h;
}

/* A transposed operand [H][D][t_vpad] in the workspace against its codes [T][H][D] placed by
 * flamia_sm90_vt_host, byte for byte (pads and gaps included) */
static void expect_transposed(const char *label, const char *what, const uint8_t *codes, const int32_t *cu,
                              int ndocs, int H, int D, int t_vpad, const uint8_t *dev) {
    size_t n = (size_t)H * D * t_vpad, first;
    uint8_t *want = xmalloc(n), *got = fetch(dev, n);
    flamia_sm90_vt_host(codes, cu, ndocs, H, D, t_vpad, want);
    size_t c = count_diff_u8(want, got, n, &first);
    EXPECT(c == 0, "%s: %s transposed differs in %zu of %zu (first: head %zu dim %zu position %zu: want %02x got %02x)",
           label, what, c, n, c ? first / ((size_t)D * t_vpad) : 0, c ? first / t_vpad % D : 0,
           c ? first % t_vpad : 0, c ? want[first] : 0, c ? got[first] : 0);
    free(want);
    free(got);
}

static void run_case(const char *label, const char *preset, int hadamard, const int32_t *cu, int ndocs, int Hq,
                     int Hkv, int D, uint64_t seed) {
    rng_t r = {seed};
    int T = cu[ndocs];
    flamia_recipe rec;
    FL(flamia_recipe_preset(preset, &rec));
    rec.hadamard = hadamard;
    int32_t *dcu = dmalloc((ndocs + 1) * sizeof(int32_t));
    CK(cudaMemcpy(dcu, cu, (ndocs + 1) * sizeof(int32_t), cudaMemcpyHostToDevice));
    flamia_shape sh = {T, ndocs, dcu, Hq, Hkv, D, 1, 0.0f, max_len(cu, ndocs), NULL};
    size_t ws_bytes = 0;
    FL(flamia_cuda_workspace_size(&rec, &sh, &ws_bytes));

    size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D;
    uint16_t *hq = xmalloc(nq * 2), *hk = xmalloc(nk * 2), *hv = xmalloc(nk * 2);
    fill_inputs(&r, hq, T, Hq, D);
    fill_inputs(&r, hk, T, Hkv, D);
    fill_inputs(&r, hv, T, Hkv, D);
    void *dq = dmalloc(nq * 2), *dk = dmalloc(nk * 2), *dv = dmalloc(nk * 2);
    CK(cudaMemcpy(dq, hq, nq * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk, hk, nk * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, hv, nk * 2, cudaMemcpyHostToDevice));
    uint8_t *ws = dmalloc(ws_bytes);
    CK(cudaMemset(ws, 0xCD, ws_bytes)); /* poison: 0xCD is no code the checks accept by chance */

    FL(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, ws_bytes, NULL));
    CK(cudaDeviceSynchronize());

    const struct flamia_sm90_layout L = gpu_call_layout(&rec, &sh);
    EXPECT(L.total <= ws_bytes, "%s: layout %zu > workspace %zu", label, L.total, ws_bytes);

    int32_t err = -1;
    CK(cudaMemcpy(&err, ws + L.err_flag, 4, cudaMemcpyDeviceToHost));
    EXPECT(err == 0, "%s: err_flag %d on finite input", label, err);

    const uint16_t *in[3] = {hq, hk, hv};
    const int H[3] = {Hq, Hkv, Hkv};
    const char *nm[3] = {"Q", "K", "V"};
    size_t first;
    if (!strcmp(preset, "bf16")) {
        size_t off[3] = {L.q_bf16, L.k_bf16, L.v_bf16};
        for (int ti = 0; ti < 3; ti++) {
            size_t n = (size_t)T * H[ti] * D;
            uint16_t *want = xmalloc(n * 2), *got = fetch(ws + off[ti], n * 2);
            expect_bf16(in[ti], (size_t)T * H[ti], D, hadamard && ti < 2, want);
            size_t c = count_diff_u8((uint8_t *)want, (uint8_t *)got, n * 2, &first);
            EXPECT(c == 0, "%s: %s bf16 differs in %zu bytes (first at element %zu: want %04x got %04x)", label,
                   nm[ti], c, first / 2, want[first / 2], got[first / 2]);
            free(want);
            free(got);
        }
    } else {
        int gran = !strcmp(preset, "mxfp8") ? 32 : 1;
        size_t coff[3] = {L.q_codes, L.k_codes, L.v_codes}, eoff[3] = {L.q_exp, L.k_exp, L.v_exp};
        uint8_t *want_codes[3];
        for (int ti = 0; ti < 3; ti++) {
            size_t n = (size_t)T * H[ti] * D;
            uint8_t *wc = xmalloc(n), *gc = fetch(ws + coff[ti], n);
            int8_t *we = xmalloc((size_t)T * H[ti]), *ge = fetch(ws + eoff[ti], (size_t)T * H[ti]);
            expect_e4m3(in[ti], T, H[ti], D, cu, ndocs, gran, hadamard && ti < 2, wc, we);
            size_t c = count_diff_u8(wc, gc, n, &first);
            EXPECT(c == 0, "%s: %s codes differ in %zu of %zu (first %zu: want %02x got %02x)", label, nm[ti], c, n,
                   first, c ? wc[first] : 0, c ? gc[first] : 0);
            c = count_diff_u8((uint8_t *)we, (uint8_t *)ge, (size_t)T * H[ti], &first);
            EXPECT(c == 0, "%s: %s exponents differ in %zu (first token %zu head %zu: want %d got %d)", label,
                   nm[ti], c, c ? first / H[ti] : 0, c ? first % H[ti] : 0, c ? we[first] : 0, c ? ge[first] : 0);
            want_codes[ti] = wc;
            free(gc);
            free(we);
            free(ge);
        }
        /* V transposed [Hkv][D][t_vpad]: document d's tokens from align32(cu[d]) + 32 d on, the
         * gaps between documents and after the last zero */
        expect_transposed(label, "V", want_codes[2], cu, ndocs, Hkv, D, L.t_vpad, ws + L.vt_codes);
        if (D == 128) {
            /* The training call's quantize also writes Q^T and K^T in that layout (the
             * backward's operands; bwd_transpose with FLAMIA_SM90_QKT=bwd): checked in the
             * workspace a poisoned train step leaves (head_dim 128: the backward's only one) */
            uint16_t *dout = dmalloc(nq * 2), *o = dmalloc(nq * 2), *gq = dmalloc(nq * 2);
            uint16_t *gk = dmalloc(nk * 2), *gv = dmalloc(nk * 2);
            float *lse = dmalloc((size_t)T * Hq * sizeof(float));
            CK(cudaMemcpy(dout, dq, nq * 2, cudaMemcpyDeviceToDevice));
            CK(cudaMemset(ws, 0xCD, ws_bytes));
            FL(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, dout, o, lse, gq, gk, gv, ws, ws_bytes, NULL));
            CK(cudaDeviceSynchronize());
            expect_transposed(label, "Q (train step)", want_codes[0], cu, ndocs, Hq, D, L.t_vpad, ws + L.qt_codes);
            expect_transposed(label, "K (train step)", want_codes[1], cu, ndocs, Hkv, D, L.t_vpad, ws + L.kt_codes);
            expect_transposed(label, "V (train step)", want_codes[2], cu, ndocs, Hkv, D, L.t_vpad, ws + L.vt_codes);
            CK(cudaFree(dout));
            CK(cudaFree(o));
            CK(cudaFree(gq));
            CK(cudaFree(gk));
            CK(cudaFree(gv));
            CK(cudaFree(lse));
        }
        for (int ti = 0; ti < 3; ti++) free(want_codes[ti]);
    }

    /* non-finite input: E4M3 kinds raise err_flag, BF16 propagates */
    {
        int which = rng_int(&r, 0, 2);
        void *dst = which == 0 ? dq : which == 1 ? dk : dv;
        size_t n = which == 0 ? nq : nk;
        size_t at = (size_t)rng_int(&r, 0, (int)n - 1);
        uint16_t bad = rng_int(&r, 0, 1) ? 0x7fc0 /* NaN */ : 0xff80 /* -inf */;
        CK(cudaMemcpy((uint16_t *)dst + at, &bad, 2, cudaMemcpyHostToDevice));
        FL(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, ws_bytes, NULL));
        CK(cudaMemcpy(&err, ws + L.err_flag, 4, cudaMemcpyDeviceToHost));
        const flamia_status fin = flamia_cuda_check_finite(ws, ws_bytes, NULL);
        if (!strcmp(preset, "bf16")) {
            EXPECT(err == 0, "%s: err_flag %d for BF16 (non-finite values propagate there)", label, err);
            EXPECT(fin == FLAMIA_OK, "%s: check_finite %s for BF16: %s", label, flamia_status_string(fin),
                   flamia_last_error());
        } else {
            /* exactly the tensor's bit, and the API names that tensor alone */
            EXPECT(err == 1 << which, "%s: err_flag %d for a non-finite %s element (want %d)", label, err, nm[which],
                   1 << which);
            char want[32];
            snprintf(want, sizeof want, "elements in %s:", nm[which]);
            EXPECT(fin == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), want),
                   "%s: check_finite -> %s: '%s' (want '%s')", label, flamia_status_string(fin), flamia_last_error(),
                   want);
        }
        /* and a clean call clears it again */
        uint16_t good = 0x3f80;
        CK(cudaMemcpy((uint16_t *)dst + at, &good, 2, cudaMemcpyHostToDevice));
        FL(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, ws_bytes, NULL));
        CK(cudaMemcpy(&err, ws + L.err_flag, 4, cudaMemcpyDeviceToHost));
        EXPECT(err == 0, "%s: err_flag %d stays set after a clean call", label, err);
        EXPECT(flamia_cuda_check_finite(ws, ws_bytes, NULL) == FLAMIA_OK, "%s: check_finite after a clean call: %s",
               label, flamia_last_error());
    }

    printf("%-34s %-11s had=%d T=%5d docs=%4d Hq=%d Hkv=%d D=%3d  %s\n", label, preset, hadamard, T, ndocs, Hq, Hkv,
           D, failures ? "(failures so far)" : "ok");
    free(hq);
    free(hk);
    free(hv);
    CK(cudaFree(dq));
    CK(cudaFree(dk));
    CK(cudaFree(dv));
    CK(cudaFree(ws));
    CK(cudaFree(dcu));
}

int main(void) {
    gpu_skip_if_unavailable("test_gpu_quantize");
    rng_t r = {gpu_seed("test_gpu_quantize")};
    enum { CAP = 4096 };
    static int lens[CAP];
    static int32_t cu[CAP + 1];
    const char *presets[] = {"mxfp8", "mxfp8-exact", "bf16"};
    uint64_t seed = rng_u64(&r);
    for (int pi = 0; pi < 3; pi++)
        for (int had = 0; had <= 1; had++)
            for (int D = 64; D <= 128; D += 64) {
                int n = random_lens(&r, 1500, lens, CAP);
                cu_from_lens(lens, n, cu);
                run_case("random packed (GQA 4/2)", presets[pi], had, cu, n, 4, 2, D, seed++);
                lens[0] = 999;
                cu_from_lens(lens, 1, cu);
                run_case("one document of 999 (MHA 3/3)", presets[pi], had, cu, 1, 3, 3, D, seed++);
                for (int i = 0; i < 5; i++) lens[i] = 96;
                cu_from_lens(lens, 5, cu);
                run_case("5 x 96 (GQA 8/1)", presets[pi], had, cu, 5, 8, 1, D, seed++);
                for (int i = 0; i < 300; i++) lens[i] = 1;
                cu_from_lens(lens, 300, cu);
                run_case("300 one-token documents", presets[pi], had, cu, 300, 2, 2, D, seed++);
            }
    /* a larger pack to cover many CTAs and head slots per CTA */
    if (getenv("FLAMIA_TEST_SMALL")) { /* compute-sanitizer runs: small cases only */
        printf("test_gpu_quantize: FLAMIA_TEST_SMALL set, large packs skipped\n");
        return failures ? 1 : 0;
    }
    /* large packs: up to 8 head slots per CTA (the register prefetch crosses slots) */
    int n = random_lens(&r, 45000, lens, CAP);
    cu_from_lens(lens, n, cu);
    run_case("large random pack", "mxfp8", 0, cu, n, 16, 16, 128, seed++);
    n = random_lens(&r, 20000, lens, CAP);
    cu_from_lens(lens, n, cu);
    run_case("large random pack", "mxfp8-exact", 1, cu, n, 16, 4, 128, seed++);
    run_case("large random pack", "bf16", 1, cu, n, 16, 4, 128, seed++);
    if (failures) {
        fprintf(stderr, "test_gpu_quantize: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_quantize: all bit-exact\n");
    return 0;
}
