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

static void train(const char *preset, const flamia_shape *sh, const void *dq_in, const void *dk_in,
                  const void *dv_in, const void *ddo, void *ws, size_t wsb, void *dO, float *dlse, void *dq, void *dk,
                  void *dv, size_t nq, size_t nk, int T, int Hq, outputs *out) {
    flamia_recipe rec;
    FL(flamia_recipe_preset(preset, &rec));
    CK(cudaMemset(dO, 0xFF, nq * 2)); /* BF16 NaN poison: every element must be written */
    CK(cudaMemset(dq, 0xFF, nq * 2));
    CK(cudaMemset(dk, 0xFF, nk * 2));
    CK(cudaMemset(dv, 0xFF, nk * 2));
    CK(cudaMemset(dlse, 0xFF, (size_t)T * Hq * 4));
    FL(flamia_cuda_train_step(&rec, sh, dq_in, dk_in, dv_in, ddo, dO, dlse, dq, dk, dv, ws, wsb, NULL));
    CK(cudaDeviceSynchronize());
    out->o = xmalloc(nq * 2), out->dq = xmalloc(nq * 2), out->dk = xmalloc(nk * 2), out->dv = xmalloc(nk * 2);
    out->lse = xmalloc((size_t)T * Hq * 4);
    CK(cudaMemcpy(out->o, dO, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->dq, dq, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->dk, dk, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->dv, dv, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->lse, dlse, (size_t)T * Hq * 4, cudaMemcpyDeviceToHost));
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
    const int ndocs = random_lens(&r, 1500, lens, CAP);
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
    flamia_shape base = {T, ndocs, dcu, Hq, Hkv, D, 1, 1.0f / sqrtf((float)D), max_len(cu, ndocs)};
    flamia_shape shifted = base;
    shifted.softmax_scale = ldexpf(base.softmax_scale, -E);

    void *dq_in = dupload(bq, nq * 2), *dk_in = dupload(bk, nk * 2), *dks_in = dupload(bks, nk * 2),
         *dv_in = dupload(bv, nk * 2), *ddo = dupload(bg, nq * 2);
    void *dO = dmalloc(nq * 2), *dq = dmalloc(nq * 2), *dk = dmalloc(nk * 2), *dv = dmalloc(nk * 2);
    float *dlse = dmalloc((size_t)T * Hq * 4);

    const int was_det = flamia_cuda_deterministic();
    FL(flamia_cuda_set_deterministic(1)); /* dQ summed in a fixed order: bit-identical run to run */
    const char *presets[] = {"mxfp8", "mxfp8-exact", "bf16"};
    for (int pi = 0; pi < 3; pi++) {
        flamia_recipe rec;
        FL(flamia_recipe_preset(presets[pi], &rec));
        size_t wsb = 0;
        FL(flamia_cuda_workspace_size(&rec, &base, &wsb));
        void *ws = dmalloc(wsb);
        outputs a, b;
        train(presets[pi], &base, dq_in, dk_in, dv_in, ddo, ws, wsb, dO, dlse, dq, dk, dv, nq, nk, T, Hq, &a);
        train(presets[pi], &shifted, dq_in, dks_in, dv_in, ddo, ws, wsb, dO, dlse, dq, dk, dv, nq, nk, T, Hq, &b);
        long lse_d = 0;
        for (size_t i = 0; i < (size_t)T * Hq; i++) lse_d += memcmp(a.lse + i, b.lse + i, 4) != 0;
        /* bits of finite pairs, and pairs with a non-finite side (poison left, or a NaN) */
        const bf16_diff o = bf16_compare(a.o, b.o, nq), q = bf16_compare(a.dq, b.dq, nq);
        const bf16_diff kk = bf16_compare(a.dk, b.dk, nk), v = bf16_compare(a.dv, b.dv, nk);
        const long o_d = o.differ, dq_d = q.differ, dv_d = v.differ, dk_d = dk_differ(b.dk, a.dk, nk, E);
        const long nf = o.nonfinite + q.nonfinite + kk.nonfinite + v.nonfinite;
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
        CK(cudaFree(ws));
    }
    FL(flamia_cuda_set_deterministic(was_det));
    void *frees[] = {dcu, dq_in, dk_in, dks_in, dv_in, ddo, dO, dq, dk, dv, dlse};
    for (size_t i = 0; i < sizeof frees / sizeof *frees; i++) CK(cudaFree(frees[i]));
    free(q), free(k), free(v), free(g), free(bq), free(bk), free(bks), free(bv), free(bg);
    if (failures) {
        fprintf(stderr, "test_gpu_scale_shift: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_scale_shift: ok\n");
    return 0;
}
