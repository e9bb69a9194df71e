/*
 * test_gpu_leak.c - the leak probe on the GPU kernels (Table B's method).
 * For a document d and a position p inside it, Q, K and V at positions >= p of
 * d are perturbed so that they raise their scale groups' max (x64 and fresh
 * noise). Then, for the causal forward:
 *   mxfp8-exact, bf16 (and both with the row sum over P's values, PRESET-lsum):
 *                      O and lse at positions < p of d are bit-identical;
 *   every recipe:      every other document's O and lse are bit-identical
 *                      (no scale group, tile or frame crosses a document);
 *   mxfp8 (default):   the in-block residual is measured and printed only.
 * The backward runs too, with dO perturbed like Q, K, V (the training call):
 *   mxfp8-exact, bf16: dQ at positions < p of d within 2^-8 max|dQ row| (one BF16 step
 *                      at the row's scale) of the unperturbed run, and every other
 *                      document's dQ too: dQ is reduce-added across key tiles with FP32
 *                      atomics in CTA finishing order, so repeated runs may differ by
 *                      rounding (many BF16 steps on an element that cancels to near 0,
 *                      never more than an FP32 rounding of the row's terms); a scale that
 *                      saw the future moves elements by an E4M3 step, 2^-4..2^-3 relative;
 *   every recipe:      every other document's dK, dV bit-identical (fixed-order sums).
 *                      (dK, dV of keys before p legitimately see the later queries.)
 * Quantize runs as part of each call, so the probe covers all three kernels.
 */
#include "gpu_common.h"

typedef struct {
    int T, ndocs, Hq, Hkv, D;
    int32_t *dcu;
    void *ws, *dq, *dk, *dv, *dO, *ddo, *gq, *gk, *gv;
    float *dlse;
    size_t wsb;
} gpu_case;

typedef struct {
    uint16_t *o, *gq, *gk, *gv;
    float *lse;
} outputs;

static void run(const flamia_recipe *rec, gpu_case *g, const flamia_shape *sh, const uint16_t *q,
                const uint16_t *k, const uint16_t *v, const uint16_t *dout, outputs *out) {
    size_t nq = (size_t)g->T * g->Hq * g->D, nk = (size_t)g->T * g->Hkv * g->D;
    CK(cudaMemcpy(g->dq, q, nq * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->dk, k, nk * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->dv, v, nk * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->ddo, dout, nq * 2, cudaMemcpyHostToDevice));
    CK(cudaMemset(g->dO, 0xFF, nq * 2));
    CK(cudaMemset(g->dlse, 0xFF, (size_t)g->T * g->Hq * 4));
    CK(cudaMemset(g->gq, 0xFF, nq * 2));
    CK(cudaMemset(g->gk, 0xFF, nk * 2));
    CK(cudaMemset(g->gv, 0xFF, nk * 2));
    flamia_status s = flamia_cuda_train_step(rec, sh, g->dq, g->dk, g->dv, g->ddo, g->dO, g->dlse, g->gq, g->gk,
                                             g->gv, g->ws, g->wsb, NULL);
    if (s != FLAMIA_OK) {
        fprintf(stderr, "FAIL: flamia_cuda_train_step -> %s: %s\n", flamia_status_string(s), flamia_last_error());
        exit(1);
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(out->o, g->dO, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->lse, g->dlse, (size_t)g->T * g->Hq * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->gq, g->gq, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->gk, g->gk, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(out->gv, g->gv, nk * 2, cudaMemcpyDeviceToHost));
}

static outputs outputs_new(size_t nq, size_t nk, size_t nl) {
    outputs o = {xmalloc(nq * 2), xmalloc(nq * 2), xmalloc(nk * 2), xmalloc(nk * 2), xmalloc(nl * 4)};
    return o;
}

int main(void) {
    gpu_skip_if_unavailable("test_gpu_leak");
    rng_t r = {gpu_seed("test_gpu_leak")};
    enum { CAP = 512 };
    static int lens[CAP];
    static int32_t cu[CAP + 1];
    /* documents long enough to span several tiles, plus short ones around them */
    int n = 0;
    lens[n++] = 37;
    lens[n++] = 700;
    lens[n++] = 1;
    lens[n++] = 333;
    lens[n++] = 129;
    lens[n++] = 5;
    const int T = cu_from_lens(lens, n, cu);
    gpu_case g = {.T = T, .ndocs = n, .Hq = 4, .Hkv = 2, .D = 128};
    size_t nq = (size_t)T * g.Hq * g.D, nk = (size_t)T * g.Hkv * g.D;
    g.dcu = dmalloc((n + 1) * 4);
    CK(cudaMemcpy(g.dcu, cu, (n + 1) * 4, cudaMemcpyHostToDevice));
    flamia_shape sh = {T, n, g.dcu, g.Hq, g.Hkv, g.D, 1, 0.0f, max_len(cu, n), NULL};
    g.dq = dmalloc(nq * 2);
    g.dk = dmalloc(nk * 2);
    g.dv = dmalloc(nk * 2);
    g.dO = dmalloc(nq * 2);
    g.dlse = dmalloc((size_t)T * g.Hq * 4);
    g.ddo = dmalloc(nq * 2);
    g.gq = dmalloc(nq * 2);
    g.gk = dmalloc(nk * 2);
    g.gv = dmalloc(nk * 2);

    float *scratch = xmalloc(nq * 4);
    uint16_t *q = xmalloc(nq * 2), *k = xmalloc(nk * 2), *v = xmalloc(nk * 2);
    uint16_t *q2 = xmalloc(nq * 2), *k2 = xmalloc(nk * 2), *v2 = xmalloc(nk * 2);
    uint16_t *dout = xmalloc(nq * 2), *dout2 = xmalloc(nq * 2);
    const size_t nl = (size_t)T * g.Hq;
    outputs r0 = outputs_new(nq, nk, nl), r1 = outputs_new(nq, nk, nl);
    fill_bf16(&r, scratch, q, nq, 1.0);
    fill_bf16(&r, scratch, k, nk, 1.0);
    fill_bf16(&r, scratch, v, nk, 1.0);
    fill_bf16(&r, scratch, dout, nq, 1e-2);

    const char *presets[] = {"mxfp8-exact", "bf16", "mxfp8-exact-lsum", "bf16-lsum", "mxfp8"};
    for (int pi = 0; pi < 5; pi++) {
        flamia_recipe rec;
        FL(flamia_recipe_preset(presets[pi], &rec));
        const int exact = pi < 4;
        FL(flamia_cuda_workspace_size(&rec, &sh, &g.wsb));
        g.ws = dmalloc(g.wsb);
        run(&rec, &g, &sh, q, k, v, dout, &r0);
        double worst_same_doc = 0;
        double worst_dq = 0;
        for (int trial = 0; trial < 8; trial++) {
            int d = trial % 2 ? 1 : 3; /* the long documents */
            int len = cu[d + 1] - cu[d];
            int p = cu[d] + rng_int(&r, 1, len - 1);
            if (trial == 0) p = cu[d] + 128; /* a tile boundary */
            if (trial == 2) p = cu[d] + 32 * rng_int(&r, 1, len / 32 - 1) + 1; /* inside a token block */
            memcpy(q2, q, nq * 2);
            memcpy(k2, k, nk * 2);
            memcpy(v2, v, nk * 2);
            memcpy(dout2, dout, nq * 2);
            for (int t = p; t < cu[d + 1]; t++) {
                for (size_t i = (size_t)t * g.Hq * g.D; i < (size_t)(t + 1) * g.Hq * g.D; i++)
                    dout2[i] = flamia_bf16_bits((float)(0.64 * rng_normal(&r)));
                for (size_t i = (size_t)t * g.Hq * g.D; i < (size_t)(t + 1) * g.Hq * g.D; i++)
                    q2[i] = flamia_bf16_bits((float)(64.0 * rng_normal(&r)));
                for (size_t i = (size_t)t * g.Hkv * g.D; i < (size_t)(t + 1) * g.Hkv * g.D; i++) {
                    k2[i] = flamia_bf16_bits((float)(64.0 * rng_normal(&r)));
                    v2[i] = flamia_bf16_bits((float)(64.0 * rng_normal(&r)));
                }
            }
            run(&rec, &g, &sh, q2, k2, v2, dout2, &r1);
            long diff_before = 0, diff_other = 0, dq_before = 0, dq_other = 0, dkv_other = 0;
            double maxrel = 0;
            for (int t = 0; t < T; t++) {
                int in_doc = t >= cu[d] && t < cu[d + 1];
                if (in_doc && t >= p) continue;
                for (int h = 0; h < g.Hq; h++) {
                    size_t li = (size_t)t * g.Hq + h;
                    int ldiff = memcmp(&r0.lse[li], &r1.lse[li], 4) != 0;
                    int odiff = memcmp(r0.o + li * g.D, r1.o + li * g.D, (size_t)g.D * 2) != 0;
                    if (in_doc) diff_before += ldiff + odiff;
                    else diff_other += ldiff + odiff;
                    double rowmax = 0;
                    for (int e = 0; e < g.D; e++) rowmax = fmax(rowmax, fabs(flamia_bf16_value(r0.gq[li * g.D + e])));
                    for (int e = 0; e < g.D; e++) {
                        const double a = flamia_bf16_value(r0.gq[li * g.D + e]), b = flamia_bf16_value(r1.gq[li * g.D + e]);
                        const double rel = fabs(a - b) / (rowmax + 1e-30);
                        if (rel > worst_dq) worst_dq = rel;
                        if (!(rel <= 1.0 / 256)) *(in_doc ? &dq_before : &dq_other) += 1;
                    }
                    if (in_doc && odiff)
                        for (int e = 0; e < g.D; e++) {
                            double a = flamia_bf16_value(r0.o[li * g.D + e]), b = flamia_bf16_value(r1.o[li * g.D + e]);
                            double rel = fabs(a - b) / (fabs(a) + 1e-30);
                            if (rel > maxrel) maxrel = rel;
                        }
                }
            }
            for (int t = 0; t < T; t++) {
                if (t >= cu[d] && t < cu[d + 1]) continue;
                const size_t kb = (size_t)t * g.Hkv * g.D * 2;
                dkv_other += memcmp((char *)r0.gk + kb, (char *)r1.gk + kb, (size_t)g.Hkv * g.D * 2) != 0;
                dkv_other += memcmp((char *)r0.gv + kb, (char *)r1.gv + kb, (size_t)g.Hkv * g.D * 2) != 0;
            }
            EXPECT(dkv_other == 0, "%s: perturbing doc %d from %d changed dK/dV of %ld tokens of OTHER documents",
                   presets[pi], d, p - cu[d], dkv_other);
            EXPECT(dq_other == 0, "%s: perturbing doc %d from %d moved %ld dQ elements of OTHER documents by > "
                   "2^-8 max|row|", presets[pi], d, p - cu[d], dq_other);
            if (exact)
                EXPECT(dq_before == 0, "%s: perturbing doc %d at positions >= %d moved %ld earlier dQ elements by > "
                       "2^-8 max|row|: LEAK", presets[pi], d, p - cu[d], dq_before);
            if (maxrel > worst_same_doc) worst_same_doc = maxrel;
            EXPECT(diff_other == 0, "%s: perturbing doc %d from %d changed %ld rows of OTHER documents",
                   presets[pi], d, p - cu[d], diff_other);
            if (exact)
                EXPECT(diff_before == 0,
                       "%s: perturbing doc %d at positions >= %d changed %ld earlier rows (max rel %.3e): LEAK",
                       presets[pi], d, p - cu[d], diff_before, maxrel);
        }
        printf("leak probe %-11s: other documents bit-identical%s; max relative change of O before the "
               "perturbation %.3e; largest dQ change (before p, other documents) %.2e of its row's max\n",
               presets[pi], exact ? ", earlier positions bit-identical" : "", worst_same_doc, worst_dq);
        CK(cudaFree(g.ws));
    }
    if (failures) {
        fprintf(stderr, "test_gpu_leak: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_leak: ok\n");
    return 0;
}
