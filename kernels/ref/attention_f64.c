/* attention_f64.c - FP64 textbook attention, no quantization: the ground truth
 * every recipe is measured against. Same packed/causal/GQA semantics.
 *
 * Parallel over (document, head) pairs, document-major (forward: query heads; backward: kv
 * heads, which own their dK, dV and their group's dQ; with 16 heads on 16 workers each
 * worker still has one head, with GQA's 4 kv heads 16 workers are busy instead of 4), and
 * over key rows within a tile of kRows queries, so that a K / V
 * row and its dK / dV accumulators stay in cache while the tile's queries use them; the
 * tile's dot products by flamia_ref_tile_dots (tile_dots.c). Every
 * sum runs in the order of the plain per-query loop (scores, softmax and dQ over keys
 * ascending; O over keys ascending; dK, dV over query heads, then queries, ascending):
 * results do not depend on the thread count or on kRows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_internal.h"

enum { kRows = FLAMIA_REF_DOT_ROWS }; /* queries per tile: the rows of one flamia_ref_tile_dots call */

static flamia_status checks(const flamia_shape *s, const void *q, const void *k, const void *v) {
    flamia_clear_error();
    flamia_status st = flamia_shape_validate(s);
    if (st) return st;
    if (!q || !k || !v) return flamia_fail(FLAMIA_ERR_INVALID, "ref64: NULL input pointer");
    return FLAMIA_OK;
}

static int max_doc_len(const flamia_shape *s) {
    int m = 0;
    for (int d = 0; d < s->num_docs; d++)
        if (s->cu_seqlens[d + 1] - s->cu_seqlens[d] > m) m = s->cu_seqlens[d + 1] - s->cu_seqlens[d];
    return m;
}

typedef struct {
    const flamia_shape *s;
    const float *q, *k, *v, *dout;
    double *o, *lse, *dq, *dk, *dv;
    double scale;
    double *scratch; /* per worker: 2 x kRows x the longest document (P, dP / dS rows) */
    int maxlen;
} f64_job;

/* One tile: queries [i0, i1) of a document starting at token d0 (doc-local indices), query
 * head hq. Row r = i - i0 of p holds the probabilities of keys j < jend(i), of dp (when
 * dout is given) dS; returns nothing, lse[r] gets the row's log-sum-exp. */
typedef struct {
    int d0, L, i0, i1, hq, hk;
} tile;

static int row_end(const flamia_shape *s, const tile *t, int i) { return s->causal ? i + 1 : t->L; }

static void tile_probs(const f64_job *jb, const tile *t, double *p, double *dp, double *lse) {
    const flamia_shape *s = jb->s;
    const int D = s->head_dim, M = jb->maxlen, n = t->i1 - t->i0, jmax = row_end(s, t, t->i1 - 1);
    /* scores and dO . V of the tile's rows, a key row at a time (tile_dots.c: the same bits
     * as the per-row loops; entries past a causal row's last key are written and unused) */
    flamia_ref_tile_dots(jb->q, s->heads_q, t->hq, jb->k, s->heads_kv, t->hk, D, t->d0, t->i0, n, jmax, jb->scale,
                         NULL, p, M);
    if (dp)
        flamia_ref_tile_dots(jb->dout, s->heads_q, t->hq, jb->v, s->heads_kv, t->hk, D, t->d0, t->i0, n, jmax, 1.0,
                             NULL, dp, M);
    for (int i = t->i0; i < t->i1; i++) {
        const int jend = row_end(s, t, i);
        double *pr = p + (size_t)(i - t->i0) * M;
        double m = -INFINITY;
        for (int j = 0; j < jend; j++)
            if (pr[j] > m) m = pr[j];
        double l = 0.0;
        for (int j = 0; j < jend; j++) l += (pr[j] = exp(pr[j] - m));
        for (int j = 0; j < jend; j++) pr[j] /= l;
        if (lse) lse[i - t->i0] = m + log(l);
        if (dp) { /* dS = P (dP - D_i) scale, D_i = sum_j P dP */
            double *dr = dp + (size_t)(i - t->i0) * M, Di = 0.0;
            for (int j = 0; j < jend; j++) Di += pr[j] * dr[j];
            for (int j = 0; j < jend; j++) dr[j] = pr[j] * (dr[j] - Di) * jb->scale;
        }
    }
}

/* task = doc x heads_q + hq: query head hq's O rows and lse in document doc */
static void fwd64_task(void *ctx, int task, int worker) {
    const f64_job *jb = ctx;
    const flamia_shape *s = jb->s;
    const int D = s->head_dim, M = jb->maxlen, hq = task % s->heads_q;
    double *p = jb->scratch + (size_t)worker * 2 * kRows * M, lse[kRows];
    const int doc = task / s->heads_q, d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
    for (int i0 = 0; i0 < L; i0 += kRows) {
        const tile t = {d0, L, i0, i0 + kRows < L ? i0 + kRows : L, hq, hq / (s->heads_q / s->heads_kv)};
        tile_probs(jb, &t, p, NULL, lse);
        for (int i = t.i0; i < t.i1; i++) {
            const size_t row = (size_t)(d0 + i) * s->heads_q + hq;
            jb->lse[row] = lse[i - t.i0];
            memset(jb->o + row * D, 0, (size_t)D * sizeof *jb->o);
        }
        for (int j = 0; j < row_end(s, &t, t.i1 - 1); j++) {
            const float *vj = jb->v + ((size_t)(d0 + j) * s->heads_kv + t.hk) * D;
            for (int i = t.i0; i < t.i1; i++) {
                if (j >= row_end(s, &t, i)) continue;
                const double pij = p[(size_t)(i - t.i0) * M + j];
                double *oi = jb->o + ((size_t)(d0 + i) * s->heads_q + hq) * D;
                for (int d = 0; d < D; d++) oi[d] += pij * vj[d];
            }
        }
    }
}

/* the job's per-worker scratch for `ntasks` tasks; 0 when out of memory */
static int f64_job_init(f64_job *jb, const flamia_shape *s, int ntasks, int *nworkers) {
    jb->s = s;
    jb->scale = flamia_effective_scale(s);
    jb->maxlen = max_doc_len(s);
    *nworkers = flamia_ref_threads(ntasks);
    jb->scratch = malloc((size_t)*nworkers * 2 * kRows * jb->maxlen * sizeof *jb->scratch);
    return jb->scratch != NULL;
}

flamia_status flamia_ref64_forward(const flamia_shape *s, const float *q, const float *k,
                                   const float *v, double *o, double *lse) {
    flamia_status st = checks(s, q, k, v);
    if (st) return st;
    if (!o || !lse) return flamia_fail(FLAMIA_ERR_INVALID, "ref64: NULL output pointer");
    f64_job jb = {.q = q, .k = k, .v = v, .o = o, .lse = lse};
    int nw;
    const int ntasks = s->num_docs * s->heads_q;
    if (!f64_job_init(&jb, s, ntasks, &nw)) return flamia_fail(FLAMIA_ERR_NOMEM, "ref64: out of host memory");
    flamia_ref_parallel_for(ntasks, nw, fwd64_task, &jb);
    free(jb.scratch);
    return FLAMIA_OK;
}

/* task = doc x heads_kv + hk: kv head hk's dK, dV rows and the dQ rows of its query heads
 * in document doc */
static void bwd64_task(void *ctx, int task, int worker) {
    const f64_job *jb = ctx;
    const flamia_shape *s = jb->s;
    const int D = s->head_dim, G = s->heads_q / s->heads_kv, M = jb->maxlen, hk = task % s->heads_kv;
    double *p = jb->scratch + (size_t)worker * 2 * kRows * M, *ds = p + (size_t)kRows * M;
    const int doc = task / s->heads_kv, d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
    for (int hq = hk * G; hq < (hk + 1) * G; hq++) {
        for (int i0 = 0; i0 < L; i0 += kRows) {
            const tile t = {d0, L, i0, i0 + kRows < L ? i0 + kRows : L, hq, hk};
            tile_probs(jb, &t, p, ds, NULL);
            for (int j = 0; j < row_end(s, &t, t.i1 - 1); j++) {
                const size_t krow = ((size_t)(d0 + j) * s->heads_kv + hk) * D;
                const float *kj = jb->k + krow;
                double *dkj = jb->dk + krow, *dvj = jb->dv + krow;
                for (int i = t.i0; i < t.i1; i++) {
                    if (j >= row_end(s, &t, i)) continue;
                    const size_t qrow = ((size_t)(d0 + i) * s->heads_q + hq) * D, r = (size_t)(i - t.i0) * M + j;
                    const double dsij = ds[r], pij = p[r];
                    const float *qi = jb->q + qrow, *doi = jb->dout + qrow;
                    double *dqi = jb->dq + qrow;
                    for (int d = 0; d < D; d++) {
                        dqi[d] += dsij * kj[d];
                        dkj[d] += dsij * qi[d];
                        dvj[d] += pij * doi[d];
                    }
                }
            }
        }
    }
}

flamia_status flamia_ref64_backward(const flamia_shape *s, const float *q, const float *k,
                                    const float *v, const float *dout, double *dq, double *dk,
                                    double *dv) {
    flamia_status st = checks(s, q, k, v);
    if (st) return st;
    if (!dout || !dq || !dk || !dv) return flamia_fail(FLAMIA_ERR_INVALID, "ref64: NULL pointer");
    const int D = s->head_dim, T = s->total_tokens;
    f64_job jb = {.q = q, .k = k, .v = v, .dout = dout, .dq = dq, .dk = dk, .dv = dv};
    int nw;
    const int ntasks = s->num_docs * s->heads_kv;
    if (!f64_job_init(&jb, s, ntasks, &nw)) return flamia_fail(FLAMIA_ERR_NOMEM, "ref64: out of host memory");
    memset(dq, 0, (size_t)T * s->heads_q * D * sizeof *dq);
    memset(dk, 0, (size_t)T * s->heads_kv * D * sizeof *dk);
    memset(dv, 0, (size_t)T * s->heads_kv * D * sizeof *dv);
    flamia_ref_parallel_for(ntasks, nw, bwd64_task, &jb);
    free(jb.scratch);
    return FLAMIA_OK;
}
