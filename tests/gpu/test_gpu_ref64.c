/* test_gpu_ref64.c - the FP64 ground truth on the GPU (flamia_cuda_ref64, cuBLAS) against
 * the CPU's (flamia_ref64_forward / _backward): O, lse, dQ, dK, dV agree to FP64 rounding
 * (their sums run in other orders: relative max difference <= 1e-11 of each output's
 * largest magnitude, where the FP8 recipes it judges differ by ~1e-3). Random packed
 * layouts with 1-token documents and odd lengths, GQA, causal and not, head_dim 64 and 128,
 * a document longer than one block of queries (4096); the forward-only call gives the
 * same O and lse; bad input is refused with nothing written. */
#include "gpu_common.h"
#include "ref64_gpu.h"

static double max_rel(const double *a, const double *b, size_t n) {
    double diff = 0.0, mag = 0.0;
    for (size_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - b[i])); /* NaN in a or b: fmax keeps the other; checked below */
        mag = fmax(mag, fabs(b[i]));
    }
    return mag > 0 ? diff / mag : diff;
}
static size_t non_finite(const double *a, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += !isfinite(a[i]);
    return c;
}

static void run_case(const char *label, const int32_t *cu, int ndocs, int Hq, int Hkv, int D, int causal,
                     rng_t *r) {
    const int T = cu[ndocs];
    const size_t nq = (size_t)T * Hq * D, nkv = (size_t)T * Hkv * D, nl = (size_t)T * Hq;
    float *q = xmalloc(nq * 4), *k = xmalloc(nkv * 4), *v = xmalloc(nkv * 4), *g = xmalloc(nq * 4);
    fill_bf16(r, q, NULL, nq, 1.0);
    fill_bf16(r, k, NULL, nkv, 1.0);
    fill_bf16(r, v, NULL, nkv, 1.0);
    fill_bf16(r, g, NULL, nq, 1e-2);
    flamia_shape s = {T, ndocs, cu, Hq, Hkv, D, causal, 0.0f, max_len(cu, ndocs), NULL};
    double *ref[5], *gpu[5], *fwd[2];
    const size_t n[5] = {nq, nl, nq, nkv, nkv};
    static const char *name[5] = {"O", "lse", "dQ", "dK", "dV"};
    for (int i = 0; i < 5; i++) {
        ref[i] = xmalloc(n[i] * 8);
        gpu[i] = xmalloc(n[i] * 8);
        memset(gpu[i], 0xFF, n[i] * 8); /* poison: NaN */
    }
    for (int i = 0; i < 2; i++) {
        fwd[i] = xmalloc(n[i] * 8);
        memset(fwd[i], 0xFF, n[i] * 8);
    }
    FL(flamia_ref64_forward(&s, q, k, v, ref[0], ref[1]));
    FL(flamia_ref64_backward(&s, q, k, v, g, ref[2], ref[3], ref[4]));
    FL(flamia_cuda_ref64(&s, q, k, v, g, gpu[0], gpu[1], gpu[2], gpu[3], gpu[4]));
    FL(flamia_cuda_ref64(&s, q, k, v, NULL, fwd[0], fwd[1], NULL, NULL, NULL));
    printf("%-34s T=%5d Hq/Hkv %d/%d D %3d %s:", label, T, Hq, Hkv, D, causal ? "causal" : "non-causal");
    for (int i = 0; i < 5; i++) {
        const double e = max_rel(gpu[i], ref[i], n[i]);
        const size_t bad = non_finite(gpu[i], n[i]);
        printf(" %s %.1e", name[i], e);
        EXPECT(bad == 0, "%s: %s: %zu elements unwritten or non-finite", label, name[i], bad);
        EXPECT(e <= 1e-11, "%s: %s differs from the CPU's FP64 by %.2e of its max (> 1e-11)", label, name[i], e);
    }
    printf("\n");
    EXPECT(!memcmp(fwd[0], gpu[0], nq * 8) && !memcmp(fwd[1], gpu[1], nl * 8),
           "%s: the forward-only call's O / lse differ from the training call's", label);
    for (int i = 0; i < 5; i++) free(ref[i]), free(gpu[i]);
    free(fwd[0]), free(fwd[1]);
    free(q), free(k), free(v), free(g);
}

static void bad_input(void) {
    int32_t cu[2] = {0, 8};
    flamia_shape s = {8, 1, cu, 2, 2, 128, 1, 0.0f, 8, NULL};
    float x[8 * 2 * 128] = {0};
    double o[8 * 2 * 128], lse[16], d[8 * 2 * 128];
    memset(o, 0x5A, sizeof o);
    flamia_status st = flamia_cuda_ref64(NULL, x, x, x, NULL, o, lse, NULL, NULL, NULL);
    EXPECT(st == FLAMIA_ERR_INVALID, "NULL shape: status %d, want FLAMIA_ERR_INVALID", (int)st);
    st = flamia_cuda_ref64(&s, x, x, x, x, o, lse, NULL, d, d);
    EXPECT(st == FLAMIA_ERR_INVALID && strstr(flamia_last_error(), "dq"),
           "dout without dq: status %d (%s), want FLAMIA_ERR_INVALID naming dq", (int)st, flamia_last_error());
    s.head_dim = 96;
    st = flamia_cuda_ref64(&s, x, x, x, NULL, o, lse, NULL, NULL, NULL);
    EXPECT(st == FLAMIA_ERR_UNSUPPORTED, "head_dim 96: status %d, want FLAMIA_ERR_UNSUPPORTED", (int)st);
    unsigned char poison[sizeof o];
    memset(poison, 0x5A, sizeof poison);
    EXPECT(!memcmp(o, poison, sizeof o), "a refused call wrote its output");
    printf("bad input: refused, nothing written\n");
}

int main(void) {
    gpu_skip_if_unavailable("test_gpu_ref64");
    rng_t r = {gpu_seed("test_gpu_ref64")};
    enum { CAP = 1024 };
    static int lens[CAP];
    static int32_t cu[CAP + 1];
    int n = random_lens(&r, 1400, lens, CAP);
    cu_from_lens(lens, n, cu);
    run_case("random packed, GQA", cu, n, 4, 2, 128, 1, &r);
    n = random_lens(&r, 900, lens, CAP);
    cu_from_lens(lens, n, cu);
    run_case("random packed, non-causal, d 64", cu, n, 2, 2, 64, 0, &r);
    lens[0] = 5000, lens[1] = 1, lens[2] = 77; /* 5000: two query blocks of the GPU's */
    cu_from_lens(lens, 3, cu);
    run_case("5000 + 1 + 77, GQA 2/1", cu, 3, 2, 1, 128, 1, &r);
    run_case("5000 + 1 + 77, non-causal", cu, 3, 2, 2, 128, 0, &r);
    bad_input();
    if (failures) {
        fprintf(stderr, "test_gpu_ref64: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_ref64: ok\n");
    return 0;
}
