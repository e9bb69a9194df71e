/* compute.c - inputs, CPU reference calls and comparison metrics of the drivers (xp.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia_formats.h"
#include "xp.h"

/* ---------------------------------------------------------------- inputs */
uint16_t *xp_to_bf16(const float *x, size_t n) {
    uint16_t *b = xp_xmalloc(sizeof(uint16_t) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) b[i] = flamia_bf16_bits(x[i]);
    return b;
}

void xp_from_bf16(const uint16_t *b, float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = flamia_bf16_value(b[i]);
}

xp_input_cfg xp_input_defaults(void) {
    xp_input_cfg c = {4, 20.0f, 1.0f};
    return c;
}

static void fill_normal(float *x, size_t n, uint64_t seed, uint64_t stream, float mul) {
    xp_rng r;
    xp_rng_seed(&r, seed, stream);
    for (size_t i = 0; i < n; i++) x[i] = (float)xp_rng_normal(&r) * mul;
}

int xp_inputs_make(const xp_workload *w, uint64_t seed, const xp_input_cfg *cfg, xp_inputs *in) {
    xp_input_cfg c = cfg ? *cfg : xp_input_defaults();
    size_t T = (size_t)w->total_tokens, D = (size_t)w->head_dim;
    in->nq = T * (size_t)w->heads_q * D;
    in->nkv = T * (size_t)w->heads_kv * D;
    in->q = xp_xmalloc(sizeof(float) * in->nq);
    in->k = xp_xmalloc(sizeof(float) * in->nkv);
    in->v = xp_xmalloc(sizeof(float) * in->nkv);
    in->dout = xp_xmalloc(sizeof(float) * in->nq);
    fill_normal(in->q, in->nq, seed, 1, 1.0f);
    fill_normal(in->k, in->nkv, seed, 2, 1.0f);
    fill_normal(in->v, in->nkv, seed, 3, 1.0f);
    fill_normal(in->dout, in->nq, seed, 4, c.dout_scale);
    if (c.outliers > 0 && c.outlier_scale != 1.0f) {
        /* per kv head: `outliers` distinct channels, chosen by the seed */
        xp_rng r;
        xp_rng_seed(&r, seed, 5);
        int H = w->heads_kv, nout = c.outliers < (int)D ? c.outliers : (int)D;
        for (int h = 0; h < H; h++) {
            int ch[128 * 4];
            int nch = 0;
            while (nch < nout) {
                int x = (int)(xp_rng_u64(&r) % D), dup = 0;
                for (int i = 0; i < nch; i++) dup |= ch[i] == x;
                if (!dup) ch[nch++] = x;
            }
            for (size_t t = 0; t < T; t++)
                for (int i = 0; i < nch; i++) in->k[(t * (size_t)H + (size_t)h) * D + (size_t)ch[i]] *= c.outlier_scale;
        }
    }
    return 0;
}

int xp_inputs_copy(const xp_inputs *s, xp_inputs *d) {
    d->nq = s->nq;
    d->nkv = s->nkv;
    d->q = xp_xmalloc(sizeof(float) * s->nq);
    d->k = xp_xmalloc(sizeof(float) * s->nkv);
    d->v = xp_xmalloc(sizeof(float) * s->nkv);
    d->dout = xp_xmalloc(sizeof(float) * s->nq);
    memcpy(d->q, s->q, sizeof(float) * s->nq);
    memcpy(d->k, s->k, sizeof(float) * s->nkv);
    memcpy(d->v, s->v, sizeof(float) * s->nkv);
    memcpy(d->dout, s->dout, sizeof(float) * s->nq);
    return 0;
}

void xp_inputs_free(xp_inputs *in) {
    free(in->q);
    free(in->k);
    free(in->v);
    free(in->dout);
    memset(in, 0, sizeof *in);
}

/* ------------------------------------------------------------ attention */
int xp_result_alloc(xp_result *r, const xp_workload *w) {
    memset(r, 0, sizeof *r);
    size_t T = (size_t)w->total_tokens, D = (size_t)w->head_dim;
    r->nq = T * (size_t)w->heads_q * D;
    r->nkv = T * (size_t)w->heads_kv * D;
    r->nlse = T * (size_t)w->heads_q;
    r->o = xp_xmalloc(sizeof(float) * r->nq);
    r->dq = xp_xmalloc(sizeof(float) * r->nq);
    r->dk = xp_xmalloc(sizeof(float) * r->nkv);
    r->dv = xp_xmalloc(sizeof(float) * r->nkv);
    r->lse = xp_xmalloc(sizeof(float) * r->nlse);
    return 0;
}

void xp_result_free(xp_result *r) {
    free(r->o);
    free(r->dq);
    free(r->dk);
    free(r->dv);
    free(r->lse);
    memset(r, 0, sizeof *r);
}

int xp_run_ref(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in, xp_result *out) {
    flamia_shape s = xp_workload_shape(w);
    flamia_status st = flamia_ref_forward(rc, &s, in->q, in->k, in->v, out->o, out->lse);
    if (st != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_ref_forward (%s, %s): %s: %s\n", rc->name, w->name,
                flamia_status_string(st), flamia_last_error());
        return -1;
    }
    memset(&out->stats, 0, sizeof out->stats);
    st = flamia_ref_backward_ex(rc, &s, in->q, in->k, in->v, out->o, out->lse, in->dout, out->dq, out->dk,
                                out->dv, &out->stats);
    if (st != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_ref_backward_ex (%s, %s): %s: %s\n", rc->name, w->name,
                flamia_status_string(st), flamia_last_error());
        return -1;
    }
    return 0;
}

int xp_run_ref64(const xp_opts *o, const xp_workload *w, const xp_inputs *in, xp_result64 *r) {
    memset(r, 0, sizeof *r);
    size_t T = (size_t)w->total_tokens, D = (size_t)w->head_dim;
    r->nq = T * (size_t)w->heads_q * D;
    r->nkv = T * (size_t)w->heads_kv * D;
    r->o = xp_xmalloc(sizeof(double) * r->nq);
    r->dq = xp_xmalloc(sizeof(double) * r->nq);
    r->dk = xp_xmalloc(sizeof(double) * r->nkv);
    r->dv = xp_xmalloc(sizeof(double) * r->nkv);
    r->lse = xp_xmalloc(sizeof(double) * T * (size_t)w->heads_q);
    flamia_shape s = xp_workload_shape(w);
    if (!strcmp(o->oracle, "gpu")) {
        if (xp_ref64_gpu(&s, in, r) == 0) return 0;
        xp_result64_free(r);
        return -1;
    }
    flamia_status st = flamia_ref64_forward(&s, in->q, in->k, in->v, r->o, r->lse);
    if (st == FLAMIA_OK) st = flamia_ref64_backward(&s, in->q, in->k, in->v, in->dout, r->dq, r->dk, r->dv);
    if (st != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_ref64 (%s): %s: %s\n", w->name, flamia_status_string(st),
                flamia_last_error());
        xp_result64_free(r);
        return -1;
    }
    return 0;
}

int xp_inputs_with_truth(const xp_opts *o, const xp_workload *w, xp_inputs *in, xp_result64 *truth) {
    xp_input_cfg icfg = xp_opts_inputs(o);
    if (xp_inputs_make(w, o->seed, &icfg, in)) return -1;
    if (xp_run_ref64(o, w, in, truth)) {
        xp_inputs_free(in);
        return -1;
    }
    return 0;
}

void xp_result64_free(xp_result64 *r) {
    free(r->o);
    free(r->dq);
    free(r->dk);
    free(r->dv);
    free(r->lse);
    memset(r, 0, sizeof *r);
}

/* --------------------------------------------------------------- metrics */
double xp_cosine_f64(const float *a, const double *ref, int t0, int t1, int H, int D) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = (size_t)t0 * H * D; i < (size_t)t1 * H * D; i++) {
        ab += (double)a[i] * ref[i];
        aa += (double)a[i] * a[i];
        bb += ref[i] * ref[i];
    }
    if (aa == 0 && bb == 0) return 1.0;
    if (aa == 0 || bb == 0) return 0.0;
    return ab / sqrt(aa * bb);
}

double xp_cosine_ff(const float *a, const float *b, int t0, int t1, int H, int D) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = (size_t)t0 * H * D; i < (size_t)t1 * H * D; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    if (aa == 0 && bb == 0) return 1.0;
    if (aa == 0 || bb == 0) return 0.0;
    return ab / sqrt(aa * bb);
}

double xp_rel_l2_f64(const float *a, const double *ref, int t0, int t1, int H, int D) {
    double dd = 0, bb = 0;
    for (size_t i = (size_t)t0 * H * D; i < (size_t)t1 * H * D; i++) {
        double d = (double)a[i] - ref[i];
        dd += d * d;
        bb += ref[i] * ref[i];
    }
    return bb > 0 ? sqrt(dd / bb) : sqrt(dd);
}

double xp_max_row_rel_change(const float *a, const float *b, int t0, int t1, int H, int D) {
    double worst = 0;
    for (size_t row = (size_t)t0 * H; row < (size_t)t1 * H; row++) {
        double dd = 0, bb = 0;
        const float *x = a + row * D, *y = b + row * D;
        for (int d = 0; d < D; d++) {
            double e = (double)x[d] - y[d];
            dd += e * e;
            bb += (double)y[d] * y[d];
        }
        double r = bb > 0 ? sqrt(dd / bb) : sqrt(dd);
        if (isnan(r)) return NAN;
        if (r > worst) worst = r;
    }
    return worst;
}

double xp_rel_fro_change(const float *a, const float *b, int t0, int t1, int H, int D) {
    double dd = 0, bb = 0;
    for (size_t i = (size_t)t0 * H * D; i < (size_t)t1 * H * D; i++) {
        double e = (double)a[i] - b[i];
        dd += e * e;
        bb += (double)b[i] * b[i];
    }
    if (isnan(dd)) return NAN;
    return bb > 0 ? sqrt(dd / bb) : sqrt(dd);
}

double xp_changed_fraction(const float *a, const float *b, int t0, int t1, int H, int D) {
    size_t n = 0, c = 0;
    for (size_t i = (size_t)t0 * H * D; i < (size_t)t1 * H * D; i++, n++)
        c += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return n ? (double)c / (double)n : 0.0;
}
