/* dev/backward/bound_study.c - CPU study (2026-11-29) of the FP8 bounds of tests/gpu/test_gpu_backward.c
 * (then kHwRatio 0.25, kHwF64Slack 1.05, kHwMaxRel 0.125; now its kBwd* bounds come from here, docs/numerics.md 8.2). The GPU is emulated as the
 * reference evaluated on a perturbed problem: the reference of the recipe with
 *   mode 2 (default) "S+dP": the score operand Q^ (Q quantized by the recipe) -> Q^ (1 + eps N(0,1)) and the
 *          dP operand V^ -> V^ (1 + eps N(0,1)) (recipe knobs q_score, v set to FP32 and fed those values;
 *          the gradient payload Q of dK = dS^T Q still re-quantizes to Q^ exactly, counted), so only the
 *          scores S and dP move, as FP8 wgmma accumulation moves them; O and lse are the recipe
 *          forward's, fed to both backward calls, as the test feeds the GPU's to the reference;
 *   mode 1 "S": the score operand only;
 *   mode 0 "Qin": the input Q -> Q (1 + eps N(0,1)), not re-rounded, unchanged recipe (re-quantized:
 *          flips whole E4M3 codes of Q in S and in dK's payload).
 * Cases of the test (inputs: q, k, v ~ N(0,1), dO ~ N(0,1e-2), BF16, 3 distinct K channels x8):
 *   A "one document of 512, MHA 4" (causal), B "random packed, non-causal" (random_lens 700, Hq 2, Hkv 1),
 *   C "64 one-token docs + 129" (causal, Hq = Hkv = 2); the test's other FP8 cases (all causal), not run by default:
 *   D "random packed, MHA" (random_lens 1400, Hq = Hkv = 4), E "random packed, GQA 8/2" (random_lens 900),
 *   F "one document of 1000, GQA 2/1", G "random packed, Hadamard" (random_lens 1000, Hq 4, Hkv 2, rec.hadamard = 1);
 *   recipes mxfp8 and mxfp8-exact (same inputs).
 *   Hadamard (G): the reference rotates its input Q (then quantizes Q_score and the payload Q from H Q), so the
 *   operands above are of H Q: Q^ = quantize(H Q); modes 1, 2 feed the reference x with H x = Q^ (1 + eps N):
 *   x = H (Q^ (1 + eps N)), refined (x += H (target - H x), FP32 as the reference rotates) until H x hits the
 *   target, or to within FP32 rounding (the count of elements missed and the largest miss relative to its row's
 *   max are printed; the payload check re-quantizes H x: a group max at 448 x 2^e overshot by the rounding bumps its
 *   exponent and re-rounds the group's subnormal codes). K is rotated by the reference alike in both calls; V, dO are
 *   not rotated.
 * Per gradient: (a) rel(pert,ref)/rel(ref,f64)  (b) max|pert-ref|/max|ref|  (c) max|pert-ref|/max|ref-f64|
 * (d) rel(pert,f64)/rel(ref,f64), over rows (one token, one head) of D elements: (e) max of ||pert-ref|| /
 * (||ref|| + 2^-5 max over rows ||ref||), (f) max of ||pert-ref|| / (||ref|| + ||ref-f64|| + 2^-8 max over rows ||ref||);
 * rel(x,y) = ||x-y||/||y||; the score shift of the emulation (mean over 128x128 tiles of max|dS|/max|S|) is printed
 * to compare with dev/forward/fp8_acc_probe.cu (H200: 2.5e-4 N(0,1), 4.1e-4 outlier K channels); and synthetic
 * faults on the perturbed gradients at eps = 2^-12: F1 one (token, head) row of dQ x2, F2 one 32-token block of dK rows of one kv head x2,
 * F3 one (token, kv head) row of dV zeroed, F4 all of dQ x (1+2^-3) (re-rounded to BF16).
 * Build: gcc -O2 -std=c11 -Ikernels/include -Ikernels/formats -Itests/gpu dev/backward/bound_study.c
 *        build/kernels/libflamia.a -lm -lpthread -fopenmp -o /tmp/bound_study
 *   (or, without a build dir, the sources: replace the .a by kernels/ref/ *.c (no space) kernels/formats/formats.c, add -Ikernels/ref)
 * Run:   /tmp/bound_study [SEEDS=100] [MODE=2] [CASES=ABC]   (CASES any of ABCDEFG; parallel over seeds: OMP_NUM_THREADS;
 *        BOUND_STUDY_DUMP=file appends per-seed lines "case mode seed recipe clean|F1..F4 gradient a b c d e f log2eps";
 *        BOUND_STUDY_LOG2EPS=-12 (one of -20 -16 -13 -12 -11) runs and prints that eps only, default all five) */
#define _DEFAULT_SOURCE /* setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "flamia.h"
#include "flamia_formats.h"
#include "test_inputs.h" /* tests/gpu: the test's own input draws */
#include "../bound_study_common.h" /* score shift, quantiles, eps selection, bs_die (shared with dev/forward/bound_study_fwd.c) */

/* not in the public header (kernels/ref/ref_internal.h) */
void flamia_ref_quantize_operand(const flamia_operand_quant *spec, const flamia_shape *s, int heads, int token_block,
                                 const float *x, float *xq);
void flamia_ref_hadamard(float *x, size_t rows, int D);

/* ---- statistics */
enum { NEPS = 5, NREC = 2, NG = 3, NST = 6, NF = 4, NCASE = 7, D = 128 };
static const double eps_log2[NEPS] = {-20, -16, -13, -12, -11};
static const int fault_eps = 3; /* faults at 2^-12 (the score shift nearest the H200 probe's) */
static const char *recs[NREC] = {"mxfp8", "mxfp8-exact"};
static const char *gname[NG] = {"dQ", "dK", "dV"};
static const char *cname[NCASE] = {"A one doc 512 MHA4", "B packed non-causal", "C 64x1 + 129",
                                   "D packed MHA 1400 Hq=Hkv=4", "E packed GQA 8/2 900", "F one doc 1000 GQA 2/1",
                                   "G packed Hadamard 1000 Hq 4 Hkv 2"};
static int eps_on[NEPS] = {1, 1, 1, 1, 1}; /* BOUND_STUDY_LOG2EPS selects one */

/* (a)..(e) of pert p against ref r and FP64 f; (e) over rows of D elements (one token, one head) */
static void stats(const float *p, const float *r, const double *f, size_t n, double out[NST]) {
    double pr = 0, rr = 0, rf = 0, ff = 0, pf = 0, dmax = 0, rmax = 0, emax = 0, rowd = 0, rowe = 0, rd = 0, re = 0;
    double rr2 = 0, rowf = 0, rowg = 0, rowr = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)p[i] - r[i], e = (double)r[i] - f[i], g = (double)p[i] - f[i];
        pr += d * d, rr += (double)r[i] * r[i], rf += e * e, ff += f[i] * f[i], pf += g * g;
        if (fabs(d) > dmax) dmax = fabs(d);
        if (fabs(r[i]) > rmax) rmax = fabs(r[i]);
        if (fabs(e) > emax) emax = fabs(e);
        rd += d * d, re += e * e, rr2 += (double)r[i] * r[i];
        if (i % D == D - 1) rowd = fmax(rowd, rd), rowe = fmax(rowe, re), rowr = fmax(rowr, rr2), rd = re = rr2 = 0;
    }
    /* rows far below the largest are judged against a floor: 2^-5 of the largest row for (e), 2^-8 for (f) */
    const double floor_ = ldexp(sqrt(rowr), -8), floor5 = ldexp(sqrt(rowr), -5);
    for (size_t i = 0; i < n; i++) {
        const double d = (double)p[i] - r[i], e = (double)r[i] - f[i];
        rd += d * d, re += e * e, rr2 += (double)r[i] * r[i];
        if (i % D == D - 1) {
            if (rd > 0) rowf = fmax(rowf, sqrt(rd) / (sqrt(rr2) + sqrt(re) + floor_)),
                        rowg = fmax(rowg, sqrt(rd) / (sqrt(rr2) + floor5));
            rd = re = rr2 = 0;
        }
    }
    out[4] = rowg;
    out[5] = rowf;
    const double rel_pr = sqrt(pr / (rr + 1e-300)), rel_rf = sqrt(rf / (ff + 1e-300)), rel_pf = sqrt(pf / (ff + 1e-300));
    out[0] = rel_pr / rel_rf;
    out[1] = dmax / (rmax + 1e-300);
    out[2] = dmax / (emax + 1e-300);
    out[3] = rel_pf / rel_rf;
}

typedef struct {
    double st[NREC][NEPS][NG][NST]; /* clean */
    double fs[NREC][NF][NST];       /* fault, on the faulted gradient, eps = 2^-12 */
    double sshift[NEPS];            /* mean over 128x128 tiles of max|dS|/max|S| (mxfp8 payloads) */
    long payload_mismatch;          /* mode 1/2: gradient payload of Q^(1+eps N) != Q^ */
    long rot_miss;                  /* Hadamard, mode 1/2: elements with H x != Q^(1+eps N) (pre-image x) */
    double rot_miss_rel;            /* max over (token, head) rows of max |H x - target| / max |target| */
    int T, ndocs;
} result;


static void run_one(int cs, int seed, int mode, result *res) {
    rng_t r = {0x5eed0000ull + (uint64_t)cs * 1000003ull + (uint64_t)seed * 7919ull};
    static const int CAP = 2048;
    int lens[2048], ndocs, Hq, Hkv, causal, hadamard = 0;
    int32_t cu[2049];
    if (cs == 0) lens[0] = 512, ndocs = 1, Hq = Hkv = 4, causal = 1;
    else if (cs == 1) ndocs = random_lens(&r, 700, lens, CAP), Hq = 2, Hkv = 1, causal = 0;
    else if (cs == 2) {
        for (int i = 0; i < 64; i++) lens[i] = 1;
        lens[64] = 129, ndocs = 65, Hq = Hkv = 2, causal = 1;
    } else if (cs == 3) ndocs = random_lens(&r, 1400, lens, CAP), Hq = Hkv = 4, causal = 1;
    else if (cs == 4) ndocs = random_lens(&r, 900, lens, CAP), Hq = 8, Hkv = 2, causal = 1;
    else if (cs == 5) lens[0] = 1000, ndocs = 1, Hq = 2, Hkv = 1, causal = 1;
    else ndocs = random_lens(&r, 1000, lens, CAP), Hq = 4, Hkv = 2, causal = 1, hadamard = 1;
    const int T = cu_from_lens(lens, ndocs, cu);
    res->T = T, res->ndocs = ndocs;
    const size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D;
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4), *g = malloc(nq * 4);
    fill_bf16(&r, q, NULL, nq, 1.0);
    fill_bf16(&r, k, NULL, nk, 1.0);
    fill_bf16(&r, v, NULL, nk, 1.0);
    fill_bf16(&r, g, NULL, nq, 1e-2);
    scale_channels(&r, k, NULL, (size_t)T * Hkv, D, 3, 8.0f);
    flamia_shape sh = {T, ndocs, cu, Hq, Hkv, D, causal, 0.0f, max_len(cu, ndocs), NULL};
    double *q64 = malloc(nq * 8), *k64 = malloc(nk * 8), *v64 = malloc(nk * 8);
    bs_die(flamia_ref64_backward(&sh, q, k, v, g, q64, k64, v64), "ref64_backward");
    float *o = malloc(nq * 4), *lse = malloc((size_t)T * Hq * 4);
    float *rq = malloc(nq * 4), *rk = malloc(nk * 4), *rv = malloc(nk * 4);
    float *pq = malloc(nq * 4), *pk = malloc(nk * 4), *pv = malloc(nk * 4);
    float *qh = malloc(nq * 4), *vh = malloc(nk * 4), *qp = malloc(nq * 4), *vp = malloc(nk * 4), *tmp = malloc(nq * 4);
    float *fq = malloc(nq * 4), *fk = malloc(nk * 4), *fv = malloc(nk * 4);
    /* Hadamard: the operands the recipe quantizes are H Q, H K (as the reference rotates them); qx: the
     * reference's input x with H x = Q^ (1 + eps N), hx: H x */
    float *qrot = NULL, *krot = NULL, *qx = NULL, *hx = NULL, *rtmp = NULL;
    if (hadamard) {
        qrot = malloc(nq * 4), krot = malloc(nk * 4), qx = malloc(nq * 4), hx = malloc(nq * 4), rtmp = malloc(nq * 4);
        memcpy(qrot, q, nq * 4), memcpy(krot, k, nk * 4);
        flamia_ref_hadamard(qrot, (size_t)T * Hq, D);
        flamia_ref_hadamard(krot, (size_t)T * Hkv, D);
    }
    const float *qop = hadamard ? qrot : q, *kop = hadamard ? krot : k;
    res->payload_mismatch = 0;
    res->rot_miss = 0, res->rot_miss_rel = 0;
    for (int ri = 0; ri < NREC; ri++) {
        flamia_recipe rec, recp;
        bs_die(flamia_recipe_preset(recs[ri], &rec), "preset");
        rec.hadamard = hadamard;
        bs_die(flamia_ref_forward(&rec, &sh, q, k, v, o, lse), "ref_forward");
        bs_die(flamia_ref_backward(&rec, &sh, q, k, v, o, lse, g, rq, rk, rv), "ref_backward");
        flamia_ref_quantize_operand(&rec.q_score, &sh, Hq, rec.token_block, qop, qh);
        flamia_ref_quantize_operand(&rec.v, &sh, Hkv, rec.token_block, v, vh);
        recp = rec;
        if (mode >= 1) recp.q_score.format = FLAMIA_FMT_FP32;
        if (mode >= 2) recp.v.format = FLAMIA_FMT_FP32;
        for (int ei = 0; ei < NEPS; ei++) {
            if (!eps_on[ei]) continue;
            const double eps = getenv("BOUND_STUDY_EPS0") ? 0.0 : ldexp(1.0, (int)eps_log2[ei]); /* check: 0 */
            rng_t pr = {0xabcdef12345ull ^ ((uint64_t)cs << 40) ^ ((uint64_t)seed << 16) ^ ((uint64_t)ri << 8) ^ (uint64_t)ei};
            const float *qbase = mode >= 1 ? qh : q;
            for (size_t i = 0; i < nq; i++) {
                double n = rng_normal(&pr);
                int ex;
                /* a Q^ value 1.75 x 2^k can be a group max at the top of E4M3 (448 x 2^e): pushed up, it
                 * would raise the group's CEIL exponent in the gradient payload; it moves down only */
                if (mode >= 1 && fabs(frexp(qbase[i], &ex)) == 0.875) n = -fabs(n);
                qp[i] = (float)(qbase[i] * (1.0 + eps * n));
            }
            const float *qin = qp, *sop = qp; /* the reference's Q input; the S operand it then uses (mode >= 1) */
            if (hadamard) {
                if (mode >= 1) { /* pre-image: H qx = qp (or within FP32 rounding) */
                    memcpy(qx, qp, nq * 4);
                    flamia_ref_hadamard(qx, (size_t)T * Hq, D);
                    for (int it = 0; it < 8; it++) {
                        memcpy(hx, qx, nq * 4);
                        flamia_ref_hadamard(hx, (size_t)T * Hq, D);
                        long miss = 0;
                        for (size_t i = 0; i < nq; i++) rtmp[i] = qp[i] - hx[i], miss += rtmp[i] != 0.0f;
                        if (!miss) break;
                        flamia_ref_hadamard(rtmp, (size_t)T * Hq, D);
                        for (size_t i = 0; i < nq; i++) qx[i] += rtmp[i];
                    }
                    memcpy(hx, qx, nq * 4);
                    flamia_ref_hadamard(hx, (size_t)T * Hq, D);
                    for (size_t r0 = 0; r0 < nq; r0 += D) { /* miss relative to the row's max |target| */
                        double dm = 0, tm = 0;
                        for (size_t i = r0; i < r0 + D; i++) {
                            res->rot_miss += hx[i] != qp[i];
                            dm = fmax(dm, fabs((double)hx[i] - qp[i])), tm = fmax(tm, fabs(qp[i]));
                        }
                        if (dm > 0) res->rot_miss_rel = fmax(res->rot_miss_rel, tm > 0 ? dm / tm : INFINITY);
                    }
                    qin = qx, sop = hx;
                } else { /* mode 0: the reference rotates the perturbed input */
                    memcpy(hx, qp, nq * 4);
                    flamia_ref_hadamard(hx, (size_t)T * Hq, D);
                    sop = hx;
                }
            }
            const float *vin = v;
            if (mode >= 2) {
                for (size_t i = 0; i < nk; i++) vp[i] = (float)(vh[i] * (1.0 + eps * rng_normal(&pr)));
                vin = vp;
            }
            if (mode >= 1) { /* the gradient payload must stay Q^ */
                flamia_ref_quantize_operand(&rec.q, &sh, Hq, rec.token_block, sop, tmp);
                for (size_t i = 0; i < nq; i++) res->payload_mismatch += tmp[i] != qh[i];
            }
            if (ri == 0) { /* score shift against the recipe's score payloads */
                float *kh = malloc(nk * 4);
                flamia_ref_quantize_operand(&rec.k_score, &sh, Hkv, rec.token_block, kop, kh);
                if (mode >= 1) res->sshift[ei] = bs_score_shift(qh, sop, kh, &sh);
                else {
                    flamia_ref_quantize_operand(&rec.q_score, &sh, Hq, rec.token_block, sop, tmp);
                    res->sshift[ei] = bs_score_shift(qh, tmp, kh, &sh);
                }
                free(kh);
            }
            bs_die(flamia_ref_backward(&recp, &sh, qin, k, vin, o, lse, g, pq, pk, pv), "pert backward");
            const float *P[3] = {pq, pk, pv}, *R[3] = {rq, rk, rv};
            const double *F[3] = {q64, k64, v64};
            const size_t N[3] = {nq, nk, nk};
            for (int gi = 0; gi < NG; gi++) stats(P[gi], R[gi], F[gi], N[gi], res->st[ri][ei][gi]);
            if (ei != fault_eps) continue;
            rng_t fr = {0xfa017ull ^ ((uint64_t)cs << 40) ^ ((uint64_t)seed << 16) ^ ((uint64_t)ri << 8)};
            /* F1: one (token, head) row of dQ x2 */
            memcpy(fq, pq, nq * 4);
            { const size_t row = (size_t)rng_int(&fr, 0, T * Hq - 1);
              for (int c = 0; c < D; c++) fq[row * D + c] *= 2.0f; }
            stats(fq, rq, q64, nq, res->fs[ri][0]);
            /* F2: one 32-token block of dK rows of one kv head x2 */
            memcpy(fk, pk, nk * 4);
            { const int b = rng_int(&fr, 0, (T + 31) / 32 - 1), h = rng_int(&fr, 0, Hkv - 1);
              for (int t = 32 * b; t < 32 * b + 32 && t < T; t++)
                  for (int c = 0; c < D; c++) fk[((size_t)t * Hkv + h) * D + c] *= 2.0f; }
            stats(fk, rk, k64, nk, res->fs[ri][1]);
            /* F3: one (token, kv head) row of dV zeroed */
            memcpy(fv, pv, nk * 4);
            { const size_t row = (size_t)rng_int(&fr, 0, T * Hkv - 1);
              for (int c = 0; c < D; c++) fv[row * D + c] = 0.0f; }
            stats(fv, rv, v64, nk, res->fs[ri][2]);
            /* F4: all of dQ x (1 + 2^-3), BF16 */
            for (size_t i = 0; i < nq; i++) fq[i] = flamia_round_bf16(pq[i] * 1.125f);
            stats(fq, rq, q64, nq, res->fs[ri][3]);
        }
    }
    free(q), free(k), free(v), free(g), free(q64), free(k64), free(v64), free(o), free(lse);
    free(rq), free(rk), free(rv), free(pq), free(pk), free(pv), free(qh), free(vh), free(qp), free(vp), free(tmp);
    free(fq), free(fk), free(fv);
    free(qrot), free(krot), free(qx), free(hx), free(rtmp);
}

/* median, p95, p99, max of x[n] (nearest rank) */
static void quant(const double *x, int n, double q[4]) {
    static const double ps[4] = {0.50, 0.95, 0.99, 1.0};
    bs_quantiles(x, n, ps, 4, q);
}

/* statistic st over bound b; st -1: S0 (the test's bounds now), -2: S1 (proposed) */
static int over(const double *v, int st, double b) {
    if (st == -1) return v[0] > 0.25 || v[1] > 0.125 || v[3] > 1.05;
    if (st == -2) return v[0] > 0.5 || v[1] > 0.25 || v[3] > 1.12 || v[4] > 0.5;
    return v[st] > b;
}

int main(int argc, char **argv) {
    const int seeds = argc > 1 ? atoi(argv[1]) : 100, mode = argc > 2 ? atoi(argv[2]) : 2;
    const char *cases = argc > 3 ? argv[3] : "ABC";
    if (bs_select_eps(eps_log2, eps_on, NEPS)) return 2;
    setenv("FLAMIA_REF_THREADS", "1", 1); /* parallel over seeds instead */
    static const char *mname[3] = {"Qin: q(1+eps N) at the input", "S: score operand Q^(1+eps N)",
                                   "S+dP: score operand Q^(1+eps N), dP operand V^(1+eps N)"};
    printf("bound_study: %d seeds per case, mode %d (%s), O and lse from the recipe's reference forward\n", seeds,
           mode, mname[mode]);
    enum { NB = 13 };
    static const double bnd[NB] = {0.25, 0.5, 0.125, 0.25, 1.0, 1.05, 1.12, 0.35, 0.5, 0.35, 0.5, 0, 0};
    static const int bst[NB] = {0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 5, -1, -2};
    static const char *bnm[NB] = {"a>.25", "a>.5",  "b>.125", "b>.25", "c>1", "d>1.05", "d>1.12",
                                  "e>.35", "e>.5",  "f>.35",  "f>.5",  "S0",  "S1"};
    printf("S0 = the test's bounds now: a>.25 or b>.125 or d>1.05; S1 = a>.5 or b>.25 or d>1.12 or e>.5\n");
    for (int cs = 0; cs < NCASE; cs++) {
        if (!strchr(cases, 'A' + cs)) continue;
        result *res = calloc(seeds, sizeof *res);
#pragma omp parallel for schedule(dynamic, 1)
        for (int sd = 0; sd < seeds; sd++) run_one(cs, sd, mode, &res[sd]);
        const char *dump = getenv("BOUND_STUDY_DUMP"); /* per-seed statistics, appended as text */
        if (dump) {
            FILE *fd = fopen(dump, "a");
            for (int sd = 0; sd < seeds && fd; sd++)
                for (int ri = 0; ri < NREC; ri++) {
                    for (int ei = 0; ei < NEPS; ei++)
                        for (int gi = 0; gi < NG; gi++) {
                            if (!eps_on[ei]) continue;
                            fprintf(fd, "%c %d %d %d %s %s", 'A' + cs, mode, sd, ri, "clean", gname[gi]);
                            for (int st = 0; st < NST; st++) fprintf(fd, " %.6g", res[sd].st[ri][ei][gi][st]);
                            fprintf(fd, " %.0f\n", eps_log2[ei]);
                        }
                    for (int f = 0; f < NF && eps_on[fault_eps]; f++) {
                        fprintf(fd, "%c %d %d %d F%d %s", 'A' + cs, mode, sd, ri, f + 1, gname[f == 1 ? 1 : f == 2 ? 2 : 0]);
                        for (int st = 0; st < NST; st++) fprintf(fd, " %.6g", res[sd].fs[ri][f][st]);
                        fprintf(fd, " %.0f\n", eps_log2[fault_eps]);
                    }
                }
            if (fd) fclose(fd);
        }
        long mism = 0;
        double Tm = 0;
        for (int sd = 0; sd < seeds; sd++) mism += res[sd].payload_mismatch, Tm += res[sd].T;
        printf("\n== case %s (mean T %.0f), payload re-quantization mismatches %ld\n", cname[cs], Tm / seeds, mism);
        if (cs == 6 && mode >= 1) {
            long miss = 0;
            double mrel = 0;
            for (int sd = 0; sd < seeds; sd++) miss += res[sd].rot_miss, mrel = fmax(mrel, res[sd].rot_miss_rel);
            printf("   Hadamard pre-image: %ld elements (all seeds, recipes, eps) with H x != Q^(1+eps N), max over rows of max miss / max |target| %.2e\n",
                   miss, mrel);
        }
        printf("   score shift (mean over 128x128 tiles of max|dS|/max|S|, mxfp8), median over seeds:");
        double *x = malloc(seeds * sizeof *x), qv[4];
        for (int ei = 0; ei < NEPS; ei++) {
            if (!eps_on[ei]) continue;
            for (int sd = 0; sd < seeds; sd++) x[sd] = res[sd].sshift[ei];
            quant(x, seeds, qv);
            printf("  2^%.0f: %.2e", eps_log2[ei], qv[0]);
        }
        printf("\n   columns: p50 p95 p99 max of (a) rel(pert,ref)/rel(ref,f64) | (b) max|d|/max|ref| | (c) max|d|/max|ref-f64|"
               " | (d) rel(pert,f64)/rel(ref,f64) | (e) max over rows ||d|| / (||ref|| + 2^-5 M)\n            | (f) max over rows"
               " ||d|| / (||ref|| + ||ref-f64|| + 2^-8 M), M = max row ||ref|| | %% of seeds over:");
        for (int b = 0; b < NB; b++) printf(" %s", bnm[b]);
        printf("\n");
        for (int ri = 0; ri < NREC; ri++)
            for (int ei = 0; ei < NEPS; ei++) {
                if (!eps_on[ei]) continue;
                for (int gi = 0; gi < NG; gi++) {
                    printf("   %-11s 2^%-4.0f %-2s |", recs[ri], eps_log2[ei], gname[gi]);
                    for (int st = 0; st < NST; st++) {
                        for (int sd = 0; sd < seeds; sd++) x[sd] = res[sd].st[ri][ei][gi][st];
                        quant(x, seeds, qv);
                        printf(" %.3f %.3f %.3f %.3f |", qv[0], qv[1], qv[2], qv[3]);
                    }
                    for (int b = 0; b < NB; b++) {
                        int f = 0;
                        for (int sd = 0; sd < seeds; sd++) f += over(res[sd].st[ri][ei][gi], bst[b], bnd[b]);
                        printf(" %4.1f", 100.0 * f / seeds);
                    }
                    printf("\n");
                }
                /* per run of the case: any of dQ, dK, dV over the bound */
                printf("   %-11s 2^%-4.0f any of dQ dK dV, %% of seeds over:", recs[ri], eps_log2[ei]);
                for (int b = 0; b < NB; b++) {
                    int f = 0;
                    for (int sd = 0; sd < seeds; sd++) {
                        int any = 0;
                        for (int gi = 0; gi < NG; gi++) any |= over(res[sd].st[ri][ei][gi], bst[b], bnd[b]);
                        f += any;
                    }
                    printf(" %s %.1f", bnm[b], 100.0 * f / seeds);
                }
                printf("\n");
            }
        static const char *fn[NF] = {"F1 dQ row x2", "F2 dK 32-blk x2", "F3 dV row =0", "F4 dQ x1.125"};
        if (!eps_on[fault_eps]) goto case_done;
        printf("   faults at eps 2^%.0f, on the faulted gradient: p50/min of (a) | (b) | (c) | (d) | (e) | (f) | %% of seeds detected by:",
               eps_log2[fault_eps]);
        for (int b = 0; b < NB; b++) printf(" %s", bnm[b]);
        printf("\n");
        for (int ri = 0; ri < NREC; ri++)
            for (int f = 0; f < NF; f++) {
                printf("   %-11s %-16s |", recs[ri], fn[f]);
                for (int st = 0; st < NST; st++) {
                    for (int sd = 0; sd < seeds; sd++) x[sd] = res[sd].fs[ri][f][st];
                    quant(x, seeds, qv);
                    double mn = 1e300;
                    for (int sd = 0; sd < seeds; sd++) mn = fmin(mn, x[sd]);
                    printf(" %.3f/%.3f |", qv[0], mn);
                }
                for (int b = 0; b < NB; b++) {
                    int d = 0;
                    for (int sd = 0; sd < seeds; sd++) d += over(res[sd].fs[ri][f], bst[b], bnd[b]);
                    printf(" %4.0f", 100.0 * d / seeds);
                }
                printf("\n");
            }
    case_done:
        fflush(stdout);
        free(x);
        free(res);
    }
    return 0;
}
