/*
 * test_gpu_scale_shift.c - the training call under a power-of-two shift between K and the
 * softmax scale: flamia_cuda_train_step (deterministic dQ mode) on (Q, K, V, dO, scale)
 * and on (Q, K x 2^e, V, dO, scale x 2^-e), e = 96, on a random packed layout with
 * 1-token documents and GQA, recipes mxfp8, mxfp8-exact, bf16.
 *
 * The logits are the same, and every quantity the kernels form moves by an exact power of
 * two: K's codes are the same (its block / token exponents grow by e), the scaled score
 * t = s 2^eK c 2^eQ is the same product in both kernels' association (docs/numerics.md
 * 3.1), dQ's block factor 2^(eDS + eK) times the scale is the same number, dK's sum is
 * scaled by 2^-e at the end. Expected: O, lse, dQ, dV bit-identical; dK x 2^e equal to the
 * unshifted dK, except where a shifted value is at or below BF16's normal range (then
 * within its subnormal step 2^-133, scaled back). The CPU reference's side is
 * tests/cpu/test_scale_shift.c. Before 0d303fd the backward formed mxfp8's t as
 * fl(fl(s 2^eK) c 2^eQ); this test was written after that fix (sixteenth session) and had
 * not run on the H200 when it was added.
 *
 * e = 96 keeps every intermediate inside FP32's normal range for these inputs (K's
 * exponents reach ~90 in the workspace's int8 fields; c 2^eQ stays above 2^-126);
 * test_gpu_consistency's "wide range" case goes to e = 118, where c 2^eQ is subnormal.
 */
#include "gpu_common.h"
#include "../scale_shift_rule.h"

typedef struct {
    uint16_t *o, *dq, *dk, *dv;
    float *lse;
} outputs;

/* the call's device buffers: inputs (q, v, dout; K is passed per call) and outputs */
typedef struct {
    const void *q, *v, *dout;
    void *o, *dq, *dk, *dv, *ws;
    float *lse;
    size_t nq, nk, nlse, wsb;
} device_io;

/* one train step on poisoned outputs, copied back into *out */
static void train(const flamia_recipe *rec, const flamia_shape *sh, const void *k, const device_io *d,
                  outputs *out) {
    CK(cudaMemset(d->o, 0xFF, d->nq * 2)); /* BF16 NaN poison: every element must be written */
    CK(cudaMemset(d->dq, 0xFF, d->nq * 2));
    CK(cudaMemset(d->dk, 0xFF, d->nk * 2));
    CK(cudaMemset(d->dv, 0xFF, d->nk * 2));
    CK(cudaMemset(d->lse, 0xFF, d->nlse * 4));
    FL(flamia_cuda_train_step(rec, sh, d->q, k, d->v, d->dout, d->o, d->lse, d->dq, d->dk, d->dv, d->ws, d->wsb,
                              NULL));
    CK(cudaDeviceSynchronize());
    out->o = xmalloc(d->nq * 2), out->dq = xmalloc(d->nq * 2), out->dk = xmalloc(d->nk * 2);
    out->dv = xmalloc(d->nk * 2), out->lse = xmalloc(d->nlse * 4);
    CK(cudaMemcpy(out->o, d->o, d->nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->dq, d->dq, d->nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->dk, d->dk, d->nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->dv, d->dv, d->nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->lse, d->lse, d->nlse * 4, cudaMemcpyDeviceToHost));
}
static void free_out(outputs *o) { free(o->o), free(o->dq), free(o->dk), free(o->dv), free(o->lse); }

/* shifted dK against dK: elements outside scale_shift_rule.h's rule */
static long dk_differ(const uint16_t *shifted, const uint16_t *base, size_t n, int e) {
    long d = 0;
    for (size_t i = 0; i < n; i++) d += !scale_shift_matches(flamia_bf16_value(shifted[i]), flamia_bf16_value(base[i]), e);
    return d;
}

int main(void) {
    gpu_skip_if_unavailable("test_gpu_scale_shift");
    rng_t r = {gpu_seed("test_gpu_scale_shift")};
    enum { CAP = 256, E = 96 };
    int lens[CAP];
    int32_t cu[CAP + 1];
    /* FLAMIA_TEST_SMALL (compute-sanitizer runs): ~400 tokens, and a 1-token document last
     * (a pack this short may draw none) */
    const int small = getenv("FLAMIA_TEST_SMALL") != NULL;
    int ndocs = random_lens(&r, small ? 400 : 1500, lens, CAP - 1);
    if (small) lens[ndocs++] = 1;
    const int T = cu_from_lens(lens, ndocs, cu), Hq = 4, Hkv = 2, D = 128;
    const size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D;
    float *q = xmalloc(nq * 4), *k = xmalloc(nk * 4), *v = xmalloc(nk * 4), *g = xmalloc(nq * 4);
    uint16_t *bq = xmalloc(nq * 2), *bk = xmalloc(nk * 2), *bks = xmalloc(nk * 2), *bv = xmalloc(nk * 2),
             *bg = xmalloc(nq * 2);
    fill_bf16(&r, q, bq, nq, 1.0);
    fill_bf16(&r, k, bk, nk, 1.0);
    fill_bf16(&r, v, bv, nk, 1.0);
    fill_bf16(&r, g, bg, nq, 1e-2);
    scale_channels(&r, k, bk, (size_t)T * Hkv, D, 3, 8.0f); /* outlier K channels */
    for (size_t i = 0; i < nk; i++) bks[i] = flamia_bf16_bits(ldexpf(k[i], E)); /* exact: BF16's range kept */

    int32_t *dcu = dupload(cu, (ndocs + 1) * 4);
    flamia_shape base = {T, ndocs, dcu, Hq, Hkv, D, 1, 1.0f / sqrtf((float)D), max_len(cu, ndocs), NULL};
    flamia_shape shifted = base;
    shifted.softmax_scale = ldexpf(base.softmax_scale, -E);

    void *dk_in = dupload(bk, nk * 2), *dks_in = dupload(bks, nk * 2);
    device_io io = {dupload(bq, nq * 2), dupload(bv, nk * 2), dupload(bg, nq * 2), dmalloc(nq * 2), dmalloc(nq * 2),
                    dmalloc(nk * 2), dmalloc(nk * 2), NULL, dmalloc((size_t)T * Hq * 4), nq, nk, (size_t)T * Hq, 0};

    const int was_det = flamia_cuda_deterministic();
    FL(flamia_cuda_set_deterministic(1)); /* dQ summed in a fixed order: bit-identical run to run */
    const char *presets[] = {"mxfp8", "mxfp8-exact", "bf16"};
    for (int pi = 0; pi < 3; pi++) {
        flamia_recipe rec;
        FL(flamia_recipe_preset(presets[pi], &rec));
        FL(flamia_cuda_workspace_size(&rec, &base, &io.wsb));
        io.ws = dmalloc(io.wsb);
        outputs a, b;
        train(&rec, &base, dk_in, &io, &a);
        train(&rec, &shifted, dks_in, &io, &b);
        long lse_d = 0;
        for (size_t i = 0; i < (size_t)T * Hq; i++) lse_d += memcmp(a.lse + i, b.lse + i, 4) != 0;
        /* bits of finite pairs, and pairs with a non-finite side (poison left, or a NaN) */
        const bf16_diff co = bf16_compare(a.o, b.o, nq), cq = bf16_compare(a.dq, b.dq, nq);
        const bf16_diff ck = bf16_compare(a.dk, b.dk, nk), cv = bf16_compare(a.dv, b.dv, nk);
        const long o_d = co.differ, dq_d = cq.differ, dv_d = cv.differ, dk_d = dk_differ(b.dk, a.dk, nk, E);
        const long nf = co.nonfinite + cq.nonfinite + ck.nonfinite + cv.nonfinite;
        printf("%-11s T=%4d docs=%3d Hq=%d Hkv=%d, K x 2^%d, scale x 2^-%d | elements that differ: O %ld, lse %ld, "
               "dQ %ld, dV %ld, dK x 2^e %ld | non-finite %ld\n",
               presets[pi], T, ndocs, Hq, Hkv, E, E, o_d, lse_d, dq_d, dv_d, dk_d, nf);
        EXPECT(nf == 0, "%s: %ld outputs not written or not finite", presets[pi], nf);
        EXPECT(o_d == 0 && lse_d == 0, "%s: O / lse moved under the shift (%ld / %ld elements)", presets[pi], o_d,
               lse_d);
        EXPECT(dq_d == 0 && dv_d == 0, "%s: dQ / dV moved under the shift (%ld / %ld elements)", presets[pi], dq_d,
               dv_d);
        EXPECT(dk_d == 0, "%s: dK x 2^%d moved (%ld elements)", presets[pi], E, dk_d);
        free_out(&a), free_out(&b);
        CK(cudaFree(io.ws));
    }
    FL(flamia_cuda_set_deterministic(was_det));
    void *frees[] = {dcu, dk_in, dks_in, (void *)io.q, (void *)io.v, (void *)io.dout, io.o, io.dq, io.dk, io.dv, io.lse};
    for (size_t i = 0; i < sizeof frees / sizeof *frees; i++) CK(cudaFree(frees[i]));
    free(q), free(k), free(v), free(g), free(bq), free(bk), free(bks), free(bv), free(bg);
    if (failures) {
        fprintf(stderr, "test_gpu_scale_shift: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_scale_shift: ok\n");
    return 0;
}
