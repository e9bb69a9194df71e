/*
 * attention_ref.c - the CPU reference of every recipe: packed (varlen) causal
 * attention forward and backward computing exactly the function of
 * docs/numerics.md (sections 3-5).  Sums run in FP64 in a fixed order; every
 * row's result depends only on the inputs that row may see, which is what the
 * causal-safety tests rely on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamia_formats.h"
#include "ref_internal.h"

#define LOG2E_F 1.44269504088896341f
#define LN2 0.69314718055994530942

/* The quantized operands of one call, as exact dequantized values. */
typedef struct {
    const flamia_recipe *r;
    const flamia_shape *s;
    int T, Hq, Hkv, D, group;
    float scale, c; /* softmax scale; c = scale * log2(e) */
    float *qs, *ks; /* Q, K in the score product */
    float *qg, *kg; /* Q, K in the gradient products (alias qs/ks when identical) */
    float *v, *dout;
} ref_ctx;

static void ctx_free(ref_ctx *x) {
    if (x->qg != x->qs) free(x->qg);
    if (x->kg != x->ks) free(x->kg);
    free(x->qs);
    free(x->ks);
    free(x->v);
    free(x->dout);
    memset(x, 0, sizeof *x);
}

static int same_quant(flamia_operand_quant a, flamia_operand_quant b) {
    return a.format == b.format && a.granularity == b.granularity && a.exp_rule == b.exp_rule;
}

/* Quantizes Q or K for the score and the gradient products (one payload when the
 * specs agree, as in every preset but nvfp4). */
static int quantize_qk(const ref_ctx *x, const float *in, int heads, flamia_operand_quant score,
                       flamia_operand_quant grad, float **out_s, float **out_g) {
    size_t n = (size_t)x->T * heads * x->D;
    float *rot = NULL;
    if (x->r->hadamard) {
        if (!(rot = malloc(n * sizeof *rot))) return 0;
        memcpy(rot, in, n * sizeof *rot);
        flamia_ref_hadamard(rot, (size_t)x->T * heads, x->D);
        in = rot;
    }
    *out_s = malloc(n * sizeof **out_s);
    *out_g = same_quant(score, grad) ? *out_s : malloc(n * sizeof **out_g);
    if (*out_s && *out_g) {
        flamia_ref_quantize_operand(&score, x->s, heads, x->r->token_block, in, *out_s);
        if (*out_g != *out_s) flamia_ref_quantize_operand(&grad, x->s, heads, x->r->token_block, in, *out_g);
    }
    free(rot);
    return *out_s && *out_g;
}

static int recipe_has_codes(const flamia_recipe *r) {
    const flamia_operand_quant *ops[] = {&r->q_score, &r->k_score, &r->q, &r->k, &r->v, &r->dout};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (ops[i]->format == FLAMIA_FMT_E4M3 || ops[i]->format == FLAMIA_FMT_NVFP4) return 1;
    return 0;
}

static flamia_status check_finite(const flamia_recipe *r, const char *what, const float *x, size_t n) {
    if (!recipe_has_codes(r)) return FLAMIA_OK; /* BF16/FP32 recipes propagate IEEE specials */
    long bad = flamia_ref_first_nonfinite(x, n);
    if (bad >= 0)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s[%ld] = %g is not finite: recipe '%s' cannot represent it (E4M3 has no "
                           "inf/NaN; one would poison its whole scale group)",
                           what, bad, (double)x[bad], r->name);
    return FLAMIA_OK;
}

static flamia_status ctx_init(ref_ctx *x, const flamia_recipe *r, const flamia_shape *s,
                              const float *q, const float *k, const float *v, const float *dout) {
    memset(x, 0, sizeof *x);
    x->r = r;
    x->s = s;
    x->T = s->total_tokens;
    x->Hq = s->heads_q;
    x->Hkv = s->heads_kv;
    x->D = s->head_dim;
    x->group = s->heads_q / s->heads_kv;
    x->scale = flamia_effective_scale(s);
    x->c = x->scale * LOG2E_F;
    size_t nkv = (size_t)x->T * x->Hkv * x->D, nq = (size_t)x->T * x->Hq * x->D;
    int ok = quantize_qk(x, q, x->Hq, r->q_score, r->q, &x->qs, &x->qg) &&
             quantize_qk(x, k, x->Hkv, r->k_score, r->k, &x->ks, &x->kg) &&
             (!v || (x->v = malloc(nkv * sizeof *x->v)) != NULL);
    if (ok && v) flamia_ref_quantize_operand(&r->v, s, x->Hkv, r->token_block, v, x->v);
    if (ok && dout) {
        ok = (x->dout = malloc(nq * sizeof *x->dout)) != NULL;
        if (ok) flamia_ref_quantize_operand(&r->dout, s, x->Hq, r->token_block, dout, x->dout);
    }
    if (!ok) {
        ctx_free(x);
        return flamia_fail(FLAMIA_ERR_NOMEM, "reference: out of host memory for the quantized operands");
    }
    return FLAMIA_OK;
}

static flamia_status common_checks(const flamia_recipe *r, const flamia_shape *s, int training,
                                   const void *a, const void *b, const void *c) {
    flamia_status st;
    if ((st = flamia_recipe_validate(r, training))) return st;
    if ((st = flamia_shape_validate(s))) return st;
    if (!a || !b || !c) return flamia_fail(FLAMIA_ERR_INVALID, "reference: NULL tensor pointer");
    return FLAMIA_OK;
}

static inline double dot(const float *a, const float *b, int D) {
    double acc = 0.0;
    for (int d = 0; d < D; d++) acc += (double)a[d] * (double)b[d];
    return acc;
}

enum { kDotRows = FLAMIA_REF_DOT_ROWS }; /* query rows whose scores are computed together */

/* Scores of the doc-local rows [i0, i0 + n) (n <= kDotRows) against keys [0, jmax):
 * s[r * ld + j] (FP32; entries past a causal row's last key are computed and unused). */
static void tile_scores(const ref_ctx *x, int d0, int i0, int n, int jmax, int hq, float *s, size_t ld) {
    flamia_ref_tile_dots(x->qs, x->Hq, hq, x->ks, x->Hkv, hq / x->group, x->D, d0, i0, n, jmax, 1.0, s, NULL, ld);
}

/* The frames of one row with scores s[0, jend): frame[n] after visiting key tile n (tiles
 * visited from the last down to 0). Returns the number of tiles. */
static int row_frames(const ref_ctx *x, const float *s, int jend, float *frame) {
    const int tk = x->r->tile_k;
    const int ntiles = (jend + tk - 1) / tk;
    float m = -INFINITY;
    for (int n = ntiles - 1; n >= 0; n--) {
        const int j1 = (n + 1) * tk < jend ? (n + 1) * tk : jend;
        float smax = -INFINITY;
        for (int j = n * tk; j < j1; j++) smax = fmaxf(smax, s[j]);
        m = fmaxf(m, ceilf(smax * x->c));
        frame[n] = m;
    }
    return ntiles;
}

/* The exponential of score s in frame `frame` (docs/numerics.md 3.3): t = fl(s*c) is
 * split into ti = trunc(t) and tf = t - ti (exact, in (-1, 1)), and exp2(t - frame) is
 * evaluated as exp2(tf) * 2^(ti - frame), rounded once. The rounded part is a function of
 * t alone and never sees the frame, so one entry's value in two frames differs by an exact
 * power of two. (trunc, not floor: the hardware's ex2.approx(t) is this split bit for bit,
 * so the GPU evaluates it as ex2(t) * 2^-frame.) */
static inline float p_in_frame(const ref_ctx *x, float s, float frame, int key) {
    const float t = s * x->c;
    const float ti = truncf(t);
    float k = ti - frame; /* integer */
    if (k < -400.0f) return 0.0f;
    return flamia_ldexpf(flamia_ref_exp2(x->r, t - ti, key), (int)k);
}

/* Row i (doc-local) of the document at d0 of length L, query head hq, as the forward
 * evaluates it: the scores (kDotRows rows at a time into stile, rows ld apart, computed when
 * i reaches a multiple of kDotRows), the frames (row_frames), and its P: pf[j] the exponential
 * in key j's tile frame (what the default row sum adds), pq[j] the value P V uses, codes[j]
 * (may be NULL) its code. *jend gets the row's key count; returns its number of key tiles. */
static int forward_row(const ref_ctx *x, int d0, int L, int i, int hq, float *stile, size_t ld, float *frame,
                       float *pf, float *pq, uint8_t *codes, int *jend) {
    const int causal = x->s->causal, tk = x->r->tile_k;
    *jend = causal ? i + 1 : L;
    if (i % kDotRows == 0) { /* the next rows' scores */
        const int n = L - i < kDotRows ? L - i : kDotRows;
        tile_scores(x, d0, i, n, causal ? i + n : L, hq, stile, ld);
    }
    const float *srow = stile + (size_t)(i % kDotRows) * ld;
    const int ntiles = row_frames(x, srow, *jend, frame);
    for (int j = 0; j < *jend; j++) pf[j] = p_in_frame(x, srow[j], frame[j / tk], j);
    flamia_ref_p_quantize_row(x->r, pf, *jend, pq, codes);
    return ntiles;
}

typedef struct {
    const ref_ctx *x;
    float *o, *lse;    /* outputs (temporaries of the call) */
    float **srow, **frame; /* per worker: kDotRows score rows of maxlen, the frames */
    float **pf, **pq;  /* per worker: one row's P, unquantized and as P V uses it */
    double **acc;      /* per-worker scratch */
    int maxlen;
} fwd_job;

static int max_doc_len(const flamia_shape *s) {
    int maxlen = 0;
    for (int d = 0; d < s->num_docs; d++)
        if (s->cu_seqlens[d + 1] - s->cu_seqlens[d] > maxlen) maxlen = s->cu_seqlens[d + 1] - s->cu_seqlens[d];
    return maxlen;
}

/* One query head over every document (rows never share outputs). */
static void fwd_task(void *p, int hq, int worker) {
    const fwd_job *job = p;
    const ref_ctx *x = job->x;
    const flamia_shape *s = x->s;
    const int D = x->D, tk = x->r->tile_k, hk = hq / x->group;
    float *stile = job->srow[worker], *frame = job->frame[worker], *pf = job->pf[worker], *pq = job->pq[worker];
    double *acc = job->acc[worker];
    const size_t ld = (size_t)job->maxlen;
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int i = 0; i < L; i++) {
            int jend;
            const int ntiles = forward_row(x, d0, L, i, hq, stile, ld, frame, pf, pq, NULL, &jend);
            const float m = frame[0];
            const float *lsum = x->r->row_sum == FLAMIA_ROWSUM_P_VALUES ? pq : pf; /* numerics.md 3.4 */
            double l = 0.0;
            memset(acc, 0, (size_t)D * sizeof *acc);
            for (int n = ntiles - 1; n >= 0; n--) {
                const double rescale = ldexp(1.0, (int)(frame[n] - m)); /* exact power of two */
                const int j1 = (n + 1) * tk < jend ? (n + 1) * tk : jend;
                for (int j = n * tk; j < j1; j++) {
                    const double pv = (double)pq[j] * rescale;
                    l += (double)lsum[j] * rescale;
                    const float *vj = x->v + ((size_t)(d0 + j) * x->Hkv + hk) * D;
                    for (int d = 0; d < D; d++) acc[d] += pv * vj[d];
                }
            }
            float *oi = job->o + ((size_t)(d0 + i) * x->Hq + hq) * D;
            for (int d = 0; d < D; d++) oi[d] = flamia_round_bf16((float)(acc[d] / l));
            job->lse[(size_t)(d0 + i) * x->Hq + hq] = (float)(LN2 * ((double)m + log2(l)));
        }
    }
}

flamia_status flamia_ref_forward(const flamia_recipe *r, const flamia_shape *s, const float *q,
                                 const float *k, const float *v, float *o, float *lse) {
    flamia_clear_error();
    flamia_status st = common_checks(r, s, 0, q, k, v);
    if (st) return st;
    if (!o || !lse) return flamia_fail(FLAMIA_ERR_INVALID, "flamia_ref_forward: NULL output pointer");
    const size_t nq = (size_t)s->total_tokens * s->heads_q * s->head_dim,
                 nkv = (size_t)s->total_tokens * s->heads_kv * s->head_dim,
                 nlse = (size_t)s->total_tokens * s->heads_q;
    if ((st = check_finite(r, "q", q, nq)) || (st = check_finite(r, "k", k, nkv)) || (st = check_finite(r, "v", v, nkv)))
        return st;
    ref_ctx x;
    if ((st = ctx_init(&x, r, s, q, k, v, NULL))) return st;

    const int maxlen = max_doc_len(s), nw = flamia_ref_threads(s->heads_q);
    float *srow[64] = {0}, *frame[64] = {0}, *pf[64] = {0}, *pq[64] = {0};
    double *acc[64] = {0};
    fwd_job job = {&x, malloc(nq * sizeof(float)), malloc(nlse * sizeof(float)), srow, frame, pf, pq, acc, maxlen};
    int ok = job.o && job.lse;
    for (int w = 0; w < nw; w++) {
        srow[w] = malloc((size_t)kDotRows * maxlen * sizeof(float));
        frame[w] = malloc(((size_t)maxlen / r->tile_k + 1) * sizeof(float));
        pf[w] = malloc((size_t)maxlen * sizeof(float));
        pq[w] = malloc((size_t)maxlen * sizeof(float));
        acc[w] = malloc((size_t)x.D * sizeof(double));
        ok = ok && srow[w] && frame[w] && pf[w] && pq[w] && acc[w];
    }
    if (ok) {
        flamia_ref_parallel_for(s->heads_q, nw, fwd_task, &job);
        memcpy(o, job.o, nq * sizeof *o);
        memcpy(lse, job.lse, nlse * sizeof *lse);
    } else {
        st = flamia_fail(FLAMIA_ERR_NOMEM, "flamia_ref_forward: out of host memory");
    }
    for (int w = 0; w < nw; w++) free(srow[w]), free(frame[w]), free(pf[w]), free(pq[w]), free(acc[w]);
    free(job.o);
    free(job.lse);
    ctx_free(&x);
    return st;
}

flamia_status flamia_ref_p_codes(const flamia_recipe *r, const flamia_shape *s, const float *q,
                                 const float *k, int head, uint8_t *codes) {
    flamia_clear_error();
    flamia_status st = common_checks(r, s, 0, q, k, codes);
    if (st) return st;
    if (r->p_format != FLAMIA_FMT_E4M3 && r->p_format != FLAMIA_FMT_NVFP4)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "flamia_ref_p_codes: recipe '%s' has no P codes (P is %s)",
                           r->name, r->p_format == FLAMIA_FMT_BF16 ? "BF16" : "FP32");
    if (head < 0 || head >= s->heads_q)
        return flamia_fail(FLAMIA_ERR_INVALID, "flamia_ref_p_codes: head %d outside [0, %d)", head, s->heads_q);
    const size_t T = (size_t)s->total_tokens;
    if ((st = check_finite(r, "q", q, T * s->heads_q * s->head_dim)) ||
        (st = check_finite(r, "k", k, T * s->heads_kv * s->head_dim)))
        return st;
    ref_ctx x;
    if ((st = ctx_init(&x, r, s, q, k, NULL, NULL))) return st;
    const int maxlen = max_doc_len(s);
    float *srow = malloc((size_t)kDotRows * maxlen * sizeof *srow),
          *frame = malloc(((size_t)maxlen / r->tile_k + 1) * sizeof *frame), *pf = malloc((size_t)maxlen * sizeof *pf),
          *pq = malloc((size_t)maxlen * sizeof *pq);
    if (srow && frame && pf && pq) {
        memset(codes, 0xFF, T * T);
        for (int doc = 0; doc < s->num_docs; doc++) {
            const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
            for (int i = 0; i < L; i++) {
                int jend;
                forward_row(&x, d0, L, i, head, srow, (size_t)maxlen, frame, pf, pq, codes + (size_t)(d0 + i) * T + d0,
                            &jend);
            }
        }
    } else {
        st = flamia_fail(FLAMIA_ERR_NOMEM, "flamia_ref_p_codes: out of host memory");
    }
    free(srow), free(frame), free(pf), free(pq);
    ctx_free(&x);
    return st;
}

/* ------------------------------------------------------------------ backward */

typedef struct {
    ref_ctx *x;
    const float *o, *lse;
    float *srow, *dprow; /* [kDotRows][maxlen] scores and dO . V of the chunk's next rows */
    float *frame;
    float *ds;       /* [tile_q][maxlen] dS rows of the current chunk */
    int maxlen;
    double *dv_acc;  /* [T][Hkv][D] or NULL (first pass of a tensor-wide dS scale) */
    flamia_ref_stats *st;
    double ds_sum2;  /* ||dS||^2 for the relative norm error */
    int ds_tensor_exp; /* exponent of a tensor-wide dS scale (first pass) */
} bwd_ws;

/* dS rows [i0, i1) of (doc, hq) into w->ds (zero beyond each row's keys); with
 * w->dv_acc also dV += P^T dO^ and the P-code consistency counts. */
static void ds_chunk(bwd_ws *w, int d0, int L, int hq, int i0, int i1) {
    ref_ctx *x = w->x;
    const int D = x->D, hk = hq / x->group, tk = x->r->tile_k;
    const int p_codes = x->r->p_format != FLAMIA_FMT_FP32;
    const size_t ld = (size_t)w->maxlen;
    for (int i = i0; i < i1; i++) {
        float *dsr = w->ds + (size_t)(i - i0) * w->maxlen;
        memset(dsr, 0, (size_t)L * sizeof *dsr);
        const int jend = x->s->causal ? i + 1 : L;
        if ((i - i0) % kDotRows == 0) { /* the next rows' scores and dO . V */
            const int n = i1 - i < kDotRows ? i1 - i : kDotRows, jmax = x->s->causal ? i + n : L;
            tile_scores(x, d0, i, n, jmax, hq, w->srow, ld);
            flamia_ref_tile_dots(x->dout, x->Hq, hq, x->v, x->Hkv, hk, D, d0, i, n, jmax, 1.0, w->dprow, NULL, ld);
        }
        const float *srow = w->srow + (size_t)((i - i0) % kDotRows) * ld;
        const float *dprow = w->dprow + (size_t)((i - i0) % kDotRows) * ld;
        row_frames(x, srow, jend, w->frame);
        const size_t row = (size_t)(d0 + i) * x->Hq + hq;
        const float m = w->frame[0];
        const float norm = (float)exp2((double)m - (double)w->lse[row] / LN2);
        const float *doi = x->dout + row * D;
        const float Di = (float)dot(doi, w->o + row * D, D);
        for (int j = 0; j < jend; j++) {
            const float pb = flamia_ref_p_quantize(x->r, p_in_frame(x, srow[j], m, j));
            const float P = pb * norm;
            const float dP = dprow[j];
            dsr[j] = P * (dP - Di);
            if (!w->dv_acc) continue;
            double *dvj = w->dv_acc + ((size_t)(d0 + j) * x->Hkv + hk) * D;
            for (int d = 0; d < D; d++) dvj[d] += (double)P * doi[d];
            if (p_codes) { /* forward code (tile frame) vs backward code (final frame) */
                const float fr = w->frame[j / tk];
                const float pf = flamia_ref_p_quantize(x->r, p_in_frame(x, srow[j], fr, j));
                w->st->p_codes += 1;
                if ((double)pf * ldexp(1.0, (int)(fr - m)) != (double)pb) {
                    w->st->p_mismatch += 1;
                    /* documented class: the frame grew after this tile and the final-frame
                     * value lies below the format's normal range (E4M3: 2^-6 after the
                     * offset, possibly rounded up onto it; BF16: FP32's 2^-126) */
                    const float normal_min = x->r->p_format == FLAMIA_FMT_E4M3
                                                 ? flamia_pow2f(-6 - x->r->p_offset_log2)
                                                 : flamia_pow2f(-126);
                    const int in_class = fr < m && pb <= normal_min;
                    if (!in_class) w->st->p_mismatch_unexplained += 1;
                }
            }
        }
    }
}

static float ds_group_amax(const bwd_ws *w, int r0, int r1, int k0, int k1) {
    float a = 0.0f;
    for (int r = r0; r < r1; r++)
        for (int j = k0; j < k1; j++) a = fmaxf(a, fabsf(w->ds[(size_t)r * w->maxlen + j]));
    return a;
}

static void ds_quantize_group(bwd_ws *w, int r0, int r1, int k0, int k1, int e) {
    const flamia_recipe *rc = w->x->r;
    for (int r = r0; r < r1; r++)
        for (int j = k0; j < k1; j++) {
            float *p = &w->ds[(size_t)r * w->maxlen + j];
            const float before = *p;
            if (rc->ds_format == FLAMIA_FMT_E4M3) *p = flamia_e4m3_dequant(flamia_e4m3_quant(before, e), e);
            else if (rc->ds_format == FLAMIA_FMT_BF16) *p = flamia_round_bf16(before);
            if (before != 0.0f) {
                w->st->ds_nonzero += 1;
                if (*p == 0.0f) w->st->ds_flushed += 1;
            }
            const double diff = (double)*p - before;
            w->st->ds_norm_err += diff * diff; /* squared sums: finished by the caller */
            w->ds_sum2 += (double)before * before;
        }
}

/* Quantizes the chunk's dS rows [0, rows) (doc-local rows i0 + r) by the recipe's
 * group rule (docs/numerics.md section 4.5). Groups are document-aligned because
 * chunks start at multiples of tile_q from the document start. */
static void ds_quantize_chunk(bwd_ws *w, int L, int i0, int rows) {
    const flamia_recipe *r = w->x->r;
    const int causal = w->x->s->causal, tk = r->tile_k;
    const int keys = causal ? i0 + rows : L; /* keys any row of the chunk can see */
    const int rule = r->ds_exp_rule == FLAMIA_EXP_FLOOR_OCP;
    if (r->ds_format != FLAMIA_FMT_E4M3) {
        ds_quantize_group(w, 0, rows, 0, keys, 0);
        return;
    }
    int rstep, kstep;
    switch (r->ds_scale) {
    case FLAMIA_DS_BLOCK32: rstep = 32; kstep = 32; break;
    case FLAMIA_DS_ROW32: rstep = 1; kstep = 32; break;
    case FLAMIA_DS_TILE: rstep = rows; kstep = tk; break;
    case FLAMIA_DS_ROW: rstep = 1; kstep = keys; break;
    default: /* TENSOR, FIXED: one exponent for everything */
        ds_quantize_group(w, 0, rows, 0, keys,
                          r->ds_scale == FLAMIA_DS_FIXED ? r->ds_fixed_exponent : w->ds_tensor_exp);
        return;
    }
    for (int r0 = 0; r0 < rows; r0 += rstep) {
        const int r1 = r0 + rstep < rows ? r0 + rstep : rows;
        for (int k0 = 0; k0 < keys; k0 += kstep) {
            const int k1 = k0 + kstep < keys ? k0 + kstep : keys;
            const float amax = ds_group_amax(w, r0, r1, k0, k1);
            ds_quantize_group(w, r0, r1, k0, k1, flamia_fmt_block_exponent(amax, rule));
        }
    }
}

/* The shared state of one backward call; workers own one kv head (its query
 * group) at a time, so dq/dk/dv rows are never shared between threads. */
typedef struct {
    ref_ctx *x;
    double *dq_acc, *dk_acc, *dv_acc;
    bwd_ws *ws;          /* per worker */
    flamia_ref_stats *task_stats; /* per kv head: summed in task order afterwards */
    double *task_sum2;
    float *task_amax;    /* first pass of a tensor-wide dS scale */
} bwd_job;

/* First pass of a tensor-wide dS scale: the max |dS| of one kv head's group. */
static void ds_amax_task(void *p, int hk, int worker) {
    bwd_job *job = p;
    bwd_ws *w = &job->ws[worker];
    const flamia_shape *s = job->x->s;
    const int tq = job->x->r->tile_q;
    float amax = 0.0f;
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int hq = hk * job->x->group; hq < (hk + 1) * job->x->group; hq++)
            for (int i0 = 0; i0 < L; i0 += tq) {
                const int i1 = i0 + tq < L ? i0 + tq : L;
                ds_chunk(w, d0, L, hq, i0, i1);
                amax = fmaxf(amax, ds_group_amax(w, 0, i1 - i0, 0, L));
            }
    }
    job->task_amax[hk] = amax;
}

static void bwd_task(void *p, int hk, int worker) {
    bwd_job *job = p;
    bwd_ws *w = &job->ws[worker];
    ref_ctx *x = job->x;
    const flamia_shape *s = x->s;
    const int D = x->D, tq = x->r->tile_q;
    memset(w->st, 0, sizeof *w->st);
    w->ds_sum2 = 0.0;
    w->dv_acc = job->dv_acc;
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int hq = hk * x->group; hq < (hk + 1) * x->group; hq++) {
            for (int i0 = 0; i0 < L; i0 += tq) {
                const int i1 = i0 + tq < L ? i0 + tq : L;
                ds_chunk(w, d0, L, hq, i0, i1);
                ds_quantize_chunk(w, L, i0, i1 - i0);
                for (int i = i0; i < i1; i++) {
                    const float *dsr = w->ds + (size_t)(i - i0) * w->maxlen;
                    const int jend = s->causal ? i + 1 : L;
                    const size_t qrow = ((size_t)(d0 + i) * x->Hq + hq) * D;
                    for (int j = 0; j < jend; j++) {
                        const double g = (double)dsr[j] * x->scale;
                        if (g == 0.0) continue;
                        const size_t krow = ((size_t)(d0 + j) * x->Hkv + hk) * D;
                        for (int d = 0; d < D; d++) {
                            job->dq_acc[qrow + d] += g * x->kg[krow + d];
                            job->dk_acc[krow + d] += g * x->qg[qrow + d];
                        }
                    }
                }
            }
        }
    }
    job->task_stats[hk] = *w->st;
    job->task_sum2[hk] = w->ds_sum2;
}

flamia_status flamia_ref_backward_ex(const flamia_recipe *r, const flamia_shape *s,
                                     const float *q, const float *k, const float *v,
                                     const float *o, const float *lse, const float *dout,
                                     float *dq, float *dk, float *dv, flamia_ref_stats *stats) {
    flamia_clear_error();
    flamia_status st = common_checks(r, s, 1, q, k, v);
    if (st) return st;
    if (!o || !lse || !dout) return flamia_fail(FLAMIA_ERR_INVALID, "flamia_ref_backward: NULL input pointer (o, lse or dout)");
    if (!dq || !dk || !dv) return flamia_fail(FLAMIA_ERR_INVALID, "flamia_ref_backward: NULL output pointer");
    const int T = s->total_tokens, D = s->head_dim, Hkv = s->heads_kv;
    const size_t nq = (size_t)T * s->heads_q * D, nkv = (size_t)T * Hkv * D;
    if ((st = check_finite(r, "q", q, nq)) || (st = check_finite(r, "k", k, nkv)) ||
        (st = check_finite(r, "v", v, nkv)) || (st = check_finite(r, "dout", dout, nq)) ||
        (st = check_finite(r, "o", o, nq)) || (st = check_finite(r, "lse", lse, (size_t)T * s->heads_q)))
        return st;
    ref_ctx x;
    if ((st = ctx_init(&x, r, s, q, k, v, dout))) return st;

    const int nw = flamia_ref_threads(Hkv), maxlen = max_doc_len(s);
    bwd_ws ws[64];
    flamia_ref_stats wstats[64];
    memset(ws, 0, sizeof ws);
    bwd_job job = {&x, calloc(nq, sizeof(double)), calloc(nkv, sizeof(double)), calloc(nkv, sizeof(double)), ws,
                   calloc((size_t)Hkv, sizeof(flamia_ref_stats)), calloc((size_t)Hkv, sizeof(double)),
                   calloc((size_t)Hkv, sizeof(float))};
    float *tmp = malloc((nq > nkv ? nq : nkv) * sizeof *tmp);
    int ok = job.dq_acc && job.dk_acc && job.dv_acc && job.task_stats && job.task_sum2 && job.task_amax && tmp;
    for (int w = 0; w < nw; w++) {
        ws[w] = (bwd_ws){.x = &x, .o = o, .lse = lse, .maxlen = maxlen, .st = &wstats[w]};
        ws[w].srow = malloc((size_t)kDotRows * maxlen * sizeof(float));
        ws[w].dprow = malloc((size_t)kDotRows * maxlen * sizeof(float));
        ws[w].frame = malloc(((size_t)maxlen / r->tile_k + 1) * sizeof(float));
        ws[w].ds = malloc((size_t)r->tile_q * maxlen * sizeof(float));
        ok = ok && ws[w].srow && ws[w].dprow && ws[w].frame && ws[w].ds;
    }
    if (!ok) {
        st = flamia_fail(FLAMIA_ERR_NOMEM, "flamia_ref_backward: out of host memory");
        goto done;
    }
    if (r->ds_format == FLAMIA_FMT_E4M3 && r->ds_scale == FLAMIA_DS_TENSOR) {
        flamia_ref_parallel_for(Hkv, nw, ds_amax_task, &job);
        float amax = 0.0f;
        for (int h = 0; h < Hkv; h++) amax = fmaxf(amax, job.task_amax[h]);
        const int e = flamia_fmt_block_exponent(amax, r->ds_exp_rule == FLAMIA_EXP_FLOOR_OCP);
        for (int w = 0; w < nw; w++) ws[w].ds_tensor_exp = e;
    }
    flamia_ref_parallel_for(Hkv, nw, bwd_task, &job);

    /* outputs: rotate dQ, dK back when Q, K were rotated; round to BF16 */
    for (size_t i = 0; i < nq; i++) tmp[i] = (float)job.dq_acc[i];
    if (r->hadamard) flamia_ref_hadamard(tmp, (size_t)T * s->heads_q, D);
    for (size_t i = 0; i < nq; i++) dq[i] = flamia_round_bf16(tmp[i]);
    for (size_t i = 0; i < nkv; i++) tmp[i] = (float)job.dk_acc[i];
    if (r->hadamard) flamia_ref_hadamard(tmp, (size_t)T * Hkv, D);
    for (size_t i = 0; i < nkv; i++) dk[i] = flamia_round_bf16(tmp[i]);
    for (size_t i = 0; i < nkv; i++) dv[i] = flamia_round_bf16((float)job.dv_acc[i]);
    if (stats) {
        flamia_ref_stats sum;
        memset(&sum, 0, sizeof sum);
        double sum2 = 0.0;
        for (int h = 0; h < Hkv; h++) { /* task order: independent of the thread count */
            const flamia_ref_stats *t = &job.task_stats[h];
            sum.ds_nonzero += t->ds_nonzero, sum.ds_flushed += t->ds_flushed, sum.ds_norm_err += t->ds_norm_err;
            sum.p_codes += t->p_codes, sum.p_mismatch += t->p_mismatch;
            sum.p_mismatch_unexplained += t->p_mismatch_unexplained;
            sum2 += job.task_sum2[h];
        }
        sum.ds_norm_err = sum2 > 0.0 ? sqrt(sum.ds_norm_err / sum2) : 0.0;
        *stats = sum;
    }
done:
    for (int w = 0; w < nw; w++) free(ws[w].srow), free(ws[w].dprow), free(ws[w].frame), free(ws[w].ds);
    free(job.dq_acc), free(job.dk_acc), free(job.dv_acc), free(job.task_stats), free(job.task_sum2);
    free(job.task_amax), free(tmp);
    ctx_free(&x);
    return st;
}

flamia_status flamia_ref_backward(const flamia_recipe *r, const flamia_shape *s, const float *q,
                                  const float *k, const float *v, const float *o,
                                  const float *lse, const float *dout, float *dq, float *dk,
                                  float *dv) {
    return flamia_ref_backward_ex(r, s, q, k, v, o, lse, dout, dq, dk, dv, NULL);
}
