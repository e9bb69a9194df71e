/* dev/bound_study_common.h - helpers of the CPU bound studies (dev/backward/bound_study.c,
 * dev/forward/bound_study_fwd.c): the score shift of a perturbed score operand, in the
 * units of dev/forward/fp8_acc_probe.cu, nearest-rank quantiles, the eps selection by
 * BOUND_STUDY_LOG2EPS and the exit on a failed library call. */
#ifndef FLAMIA_BOUND_STUDY_COMMON_H
#define FLAMIA_BOUND_STUDY_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia.h"

/* mean over (head, doc, 128-query tile, 128-key tile) of max |s' - s| / max |s| over the
 * pairs attention evaluates; s = qa . k, s' = qb . k (FP64 sums), [T][H][D] operands */
static double bs_score_shift(const float *qa, const float *qb, const float *k, const flamia_shape *s) {
    const int D = s->head_dim, group = s->heads_q / s->heads_kv;
    double sum = 0;
    long ntile = 0;
    for (int h = 0; h < s->heads_q; h++)
        for (int d = 0; d < s->num_docs; d++) {
            const int d0 = s->cu_seqlens[d], L = s->cu_seqlens[d + 1] - d0;
            for (int i0 = 0; i0 < L; i0 += 128)
                for (int j0 = 0; j0 < L; j0 += 128) {
                    if (s->causal && j0 > i0 + 127) continue;
                    double smax = 0, dmax = 0;
                    for (int i = i0; i < i0 + 128 && i < L; i++) {
                        const float *a = qa + ((size_t)(d0 + i) * s->heads_q + h) * D;
                        const float *b = qb + ((size_t)(d0 + i) * s->heads_q + h) * D;
                        const int jend = s->causal ? (i + 1 < j0 + 128 ? i + 1 : j0 + 128) : j0 + 128;
                        for (int j = j0; j < jend && j < L; j++) {
                            const float *kj = k + ((size_t)(d0 + j) * s->heads_kv + h / group) * D;
                            double x = 0, y = 0;
                            for (int c = 0; c < D; c++) x += (double)a[c] * kj[c], y += (double)b[c] * kj[c];
                            if (fabs(x) > smax) smax = fabs(x);
                            if (fabs(y - x) > dmax) dmax = fabs(y - x);
                        }
                    }
                    if (smax > 0) sum += dmax / smax, ntile++;
                }
        }
    return ntile ? sum / ntile : 0;
}

static int bs_cmpd(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* q[i] = nearest-rank quantile ps[i] of x[n] (ps[i] = 1: the max) */
static void bs_quantiles(const double *x, int n, const double *ps, int np, double *q) {
    double *s = malloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, bs_cmpd);
    for (int i = 0; i < np; i++) {
        int k = (int)ceil(ps[i] * n) - 1;
        q[i] = s[k < 0 ? 0 : k > n - 1 ? n - 1 : k];
    }
    free(s);
}

/* a failed library call ends the study */
static void bs_die(flamia_status st, const char *what) {
    if (st != FLAMIA_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, flamia_status_string(st), flamia_last_error());
        exit(1);
    }
}

/* BOUND_STUDY_LOG2EPS=x keeps only eps 2^x of eps_log2[n] (eps_on[i] = 1 for it, 0 for the
 * others); unset: all stay on. Returns 0, or 2 after a message when x is not in the list. */
static int bs_select_eps(const double *eps_log2, int *eps_on, int n) {
    const char *sel = getenv("BOUND_STUDY_LOG2EPS");
    if (!sel) return 0;
    int found = 0;
    for (int i = 0; i < n; i++) found += eps_on[i] = eps_log2[i] == atof(sel);
    if (found) return 0;
    fprintf(stderr, "BOUND_STUDY_LOG2EPS=%s: not one of", sel);
    for (int i = 0; i < n; i++) fprintf(stderr, " %g", eps_log2[i]);
    fprintf(stderr, "\n");
    return 2;
}

#endif
