/* attention_f64.c - FP64 textbook attention, no quantization: the ground truth
 * every recipe is measured against. Same packed/causal/GQA semantics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamia_internal.h"

static flamia_status checks(const flamia_shape *s, const void *q, const void *k, const void *v) {
    flamia_clear_error();
    flamia_status st = flamia_shape_validate(s);
    if (st) return st;
    if (!q || !k || !v) return flamia_fail(FLAMIA_ERR_INVALID, "ref64: NULL input pointer");
    return FLAMIA_OK;
}

static double dot64(const float *a, const float *b, int D) {
    double acc = 0.0;
    for (int d = 0; d < D; d++) acc += (double)a[d] * b[d];
    return acc;
}

/* Softmax row of doc-local query i: p[j] for j < jend; returns lse. */
static double softmax_row(const flamia_shape *s, const float *q, const float *k, int d0, int i,
                          int jend, int hq, double scale, double *p) {
    const int D = s->head_dim, hk = hq / (s->heads_q / s->heads_kv);
    const float *qi = q + ((size_t)(d0 + i) * s->heads_q + hq) * D;
    double m = -INFINITY;
    for (int j = 0; j < jend; j++) {
        p[j] = scale * dot64(qi, k + ((size_t)(d0 + j) * s->heads_kv + hk) * D, D);
        if (p[j] > m) m = p[j];
    }
    double l = 0.0;
    for (int j = 0; j < jend; j++) l += (p[j] = exp(p[j] - m));
    for (int j = 0; j < jend; j++) p[j] /= l;
    return m + log(l);
}

static int max_doc_len(const flamia_shape *s) {
    int m = 0;
    for (int d = 0; d < s->num_docs; d++)
        if (s->cu_seqlens[d + 1] - s->cu_seqlens[d] > m) m = s->cu_seqlens[d + 1] - s->cu_seqlens[d];
    return m;
}

flamia_status flamia_ref64_forward(const flamia_shape *s, const float *q, const float *k,
                                   const float *v, double *o, double *lse) {
    flamia_status st = checks(s, q, k, v);
    if (st) return st;
    if (!o || !lse) return flamia_fail(FLAMIA_ERR_INVALID, "ref64: NULL output pointer");
    const int D = s->head_dim, G = s->heads_q / s->heads_kv;
    const double scale = flamia_effective_scale(s);
    double *p = malloc((size_t)max_doc_len(s) * sizeof *p);
    if (!p) return flamia_fail(FLAMIA_ERR_NOMEM, "ref64: out of host memory");
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int hq = 0; hq < s->heads_q; hq++)
            for (int i = 0; i < L; i++) {
                const int jend = s->causal ? i + 1 : L;
                const size_t row = (size_t)(d0 + i) * s->heads_q + hq;
                lse[row] = softmax_row(s, q, k, d0, i, jend, hq, scale, p);
                double *oi = o + row * D;
                memset(oi, 0, (size_t)D * sizeof *oi);
                for (int j = 0; j < jend; j++) {
                    const float *vj = v + ((size_t)(d0 + j) * s->heads_kv + hq / G) * D;
                    for (int d = 0; d < D; d++) oi[d] += p[j] * vj[d];
                }
            }
    }
    free(p);
    return FLAMIA_OK;
}

flamia_status flamia_ref64_backward(const flamia_shape *s, const float *q, const float *k,
                                    const float *v, const float *dout, double *dq, double *dk,
                                    double *dv) {
    flamia_status st = checks(s, q, k, v);
    if (st) return st;
    if (!dout || !dq || !dk || !dv) return flamia_fail(FLAMIA_ERR_INVALID, "ref64: NULL pointer");
    const int D = s->head_dim, G = s->heads_q / s->heads_kv, T = s->total_tokens;
    const double scale = flamia_effective_scale(s);
    const int maxlen = max_doc_len(s);
    double *p = malloc((size_t)maxlen * sizeof *p), *dp = malloc((size_t)maxlen * sizeof *dp);
    if (!p || !dp) {
        free(p);
        free(dp);
        return flamia_fail(FLAMIA_ERR_NOMEM, "ref64: out of host memory");
    }
    memset(dq, 0, (size_t)T * s->heads_q * D * sizeof *dq);
    memset(dk, 0, (size_t)T * s->heads_kv * D * sizeof *dk);
    memset(dv, 0, (size_t)T * s->heads_kv * D * sizeof *dv);
    for (int doc = 0; doc < s->num_docs; doc++) {
        const int d0 = s->cu_seqlens[doc], L = s->cu_seqlens[doc + 1] - d0;
        for (int hq = 0; hq < s->heads_q; hq++) {
            const int hk = hq / G;
            for (int i = 0; i < L; i++) {
                const int jend = s->causal ? i + 1 : L;
                const size_t qrow = ((size_t)(d0 + i) * s->heads_q + hq) * D;
                softmax_row(s, q, k, d0, i, jend, hq, scale, p);
                double Di = 0.0;
                for (int j = 0; j < jend; j++) {
                    dp[j] = dot64(dout + qrow, v + ((size_t)(d0 + j) * s->heads_kv + hk) * D, D);
                    Di += p[j] * dp[j];
                }
                for (int j = 0; j < jend; j++) {
                    const size_t krow = ((size_t)(d0 + j) * s->heads_kv + hk) * D;
                    const double ds = p[j] * (dp[j] - Di) * scale;
                    for (int d = 0; d < D; d++) {
                        dq[qrow + d] += ds * k[krow + d];
                        dk[krow + d] += ds * q[qrow + d];
                        dv[krow + d] += p[j] * dout[qrow + d];
                    }
                }
            }
        }
    }
    free(p);
    free(dp);
    return FLAMIA_OK;
}
