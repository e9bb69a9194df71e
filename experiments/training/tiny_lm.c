/* tiny_lm.c - the small byte-level transformer of tiny_lm.h: forward, backward, Adam. */
#include "tiny_lm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

/* ---------------------------------------------------------------- parameter layout */
typedef struct {
    size_t emb, pos, gf, layer0, layer_stride;   /* whole-model offsets */
    size_t g1, wqkv, wo, g2, w1, w2;             /* offsets inside one layer */
} layout;

static layout layout_of(const tlm_config *c, int d) {
    layout L;
    L.emb = 0;
    L.pos = L.emb + (size_t)TLM_VOCAB * d;
    L.gf = L.pos + (size_t)c->max_pos * d;
    L.layer0 = L.gf + (size_t)d;
    L.g1 = 0;
    L.wqkv = L.g1 + (size_t)d;
    L.wo = L.wqkv + (size_t)d * 3 * d;
    L.g2 = L.wo + (size_t)d * d;
    L.w1 = L.g2 + (size_t)d;
    L.w2 = L.w1 + (size_t)d * c->ffn;
    L.layer_stride = L.w2 + (size_t)c->ffn * d;
    return L;
}

int tlm_init(tlm *m, const tlm_config *c, uint64_t seed) {
    memset(m, 0, sizeof *m);
    m->c = *c;
    m->d = c->heads * c->head_dim;
    const int d = m->d;
    const layout L = layout_of(c, d);
    m->n = L.layer0 + (size_t)c->layers * L.layer_stride;
    m->w = calloc(m->n, sizeof *m->w);
    m->g = calloc(m->n, sizeof *m->g);
    m->m = calloc(m->n, sizeof *m->m);
    m->v = calloc(m->n, sizeof *m->v);
    if (!m->w || !m->g || !m->m || !m->v) {
        tlm_free(m);
        return -1;
    }
    xp_rng r;
    xp_rng_seed(&r, seed, 0x7e41);
    const float sd = 0.02f, sd_out = 0.02f / sqrtf(2.0f * (float)c->layers); /* residual branches */
    for (size_t i = L.emb; i < L.gf; i++) m->w[i] = sd * (float)xp_rng_normal(&r);
    for (int i = 0; i < d; i++) m->w[L.gf + i] = 1.0f;
    for (int l = 0; l < c->layers; l++) {
        float *p = m->w + L.layer0 + (size_t)l * L.layer_stride;
        for (int i = 0; i < d; i++) p[L.g1 + i] = p[L.g2 + i] = 1.0f;
        for (size_t i = L.wqkv; i < L.wo; i++) p[i] = sd * (float)xp_rng_normal(&r);
        for (size_t i = L.wo; i < L.g2; i++) p[i] = sd_out * (float)xp_rng_normal(&r);
        for (size_t i = L.w1; i < L.w2; i++) p[i] = sd * (float)xp_rng_normal(&r);
        for (size_t i = L.w2; i < L.layer_stride; i++) p[i] = sd_out * (float)xp_rng_normal(&r);
    }
    return 0;
}

void tlm_free(tlm *m) {
    free(m->w), free(m->g), free(m->m), free(m->v);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- small dense kernels */
/* C[M][N] (+)= A[M][K] B[K][N] */
static void mm_nn(int M, int K, int N, const float *A, const float *B, float *C, int acc) {
    if (!acc) memset(C, 0, sizeof *C * (size_t)M * N);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            const float a = A[(size_t)i * K + k];
            const float *b = B + (size_t)k * N;
            float *c = C + (size_t)i * N;
            for (int j = 0; j < N; j++) c[j] += a * b[j];
        }
}
/* C[M][N] (+)= A[M][K] B[N][K]^T */
static void mm_nt(int M, int K, int N, const float *A, const float *B, float *C, int acc) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            const float *a = A + (size_t)i * K, *b = B + (size_t)j * K;
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += a[k] * b[k];
            C[(size_t)i * N + j] = acc ? C[(size_t)i * N + j] + s : s;
        }
}
/* D[K][N] += A[M][K]^T C[M][N] */
static void mm_tn_acc(int M, int K, int N, const float *A, const float *C, float *D) {
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            const float a = A[(size_t)i * K + k];
            const float *c = C + (size_t)i * N;
            float *dst = D + (size_t)k * N;
            for (int j = 0; j < N; j++) dst[j] += a * c[j];
        }
}

/* y = x / rms(x) * g per row; rinv[t] = 1 / rms */
static void rms_fwd(int T, int d, const float *x, const float *g, float *y, float *rinv) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * d;
        double ss = 0;
        for (int i = 0; i < d; i++) ss += (double)xr[i] * xr[i];
        const float ri = (float)(1.0 / sqrt(ss / d + 1e-6));
        rinv[t] = ri;
        for (int i = 0; i < d; i++) y[(size_t)t * d + i] = xr[i] * ri * g[i];
    }
}
/* dx (+)= the gradient through rms_fwd for dy; dg += dy x rinv */
static void rms_bwd(int T, int d, const float *x, const float *g, const float *rinv, const float *dy, float *dx,
                    float *dg, int acc) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * d, *dyr = dy + (size_t)t * d;
        float *dxr = dx + (size_t)t * d;
        const float ri = rinv[t];
        double s = 0;
        for (int i = 0; i < d; i++) s += (double)g[i] * dyr[i] * xr[i];
        const float k = (float)(s / d) * ri * ri * ri;
        for (int i = 0; i < d; i++) {
            const float v = ri * g[i] * dyr[i] - xr[i] * k;
            dxr[i] = acc ? dxr[i] + v : v;
            dg[i] += dyr[i] * xr[i] * ri;
        }
    }
}

/* ---------------------------------------------------------------- attention */
/* The recipe's reference attention, or with r == NULL the FP64 textbook one (no quantization,
 * no BF16 outputs) rounded once to FP32. */
static flamia_status attn_forward(const flamia_recipe *r, const flamia_shape *s, const float *q, const float *k,
                                  const float *v, float *o, float *lse) {
    if (r) return flamia_ref_forward(r, s, q, k, v, o, lse);
    const size_t no = (size_t)s->total_tokens * s->heads_q * s->head_dim, nl = (size_t)s->total_tokens * s->heads_q;
    double *o64 = malloc(sizeof(double) * no), *l64 = malloc(sizeof(double) * nl);
    flamia_status st = o64 && l64 ? flamia_ref64_forward(s, q, k, v, o64, l64) : FLAMIA_ERR_NOMEM;
    for (size_t i = 0; !st && i < no; i++) o[i] = (float)o64[i];
    for (size_t i = 0; !st && i < nl; i++) lse[i] = (float)l64[i];
    free(o64), free(l64);
    return st;
}

static flamia_status attn_backward(const flamia_recipe *r, const flamia_shape *s, const float *q, const float *k,
                                   const float *v, const float *o, const float *lse, const float *dout, float *dq,
                                   float *dk, float *dv) {
    if (r) return flamia_ref_backward(r, s, q, k, v, o, lse, dout, dq, dk, dv);
    const size_t n = (size_t)s->total_tokens * s->heads_q * s->head_dim; /* MHA: heads_kv = heads_q */
    double *g = malloc(sizeof(double) * 3 * n);
    flamia_status st = g ? flamia_ref64_backward(s, q, k, v, dout, g, g + n, g + 2 * n) : FLAMIA_ERR_NOMEM;
    for (size_t i = 0; !st && i < n; i++) dq[i] = (float)g[i], dk[i] = (float)g[n + i], dv[i] = (float)g[2 * n + i];
    free(g);
    return st;
}

/* ---------------------------------------------------------------- forward + backward */
typedef struct { /* one layer's saved activations */
    float *h_in, *a, *r1, *q, *k, *v, *o, *lse, *h_mid, *b, *r2, *u;
} layer_cache;

flamia_status tlm_loss(tlm *m, const flamia_recipe *rf, const flamia_recipe *rb, int want_grad,
                       const uint8_t *tokens, int T, int num_docs, const int32_t *cu_seqlens, double *loss) {
    const tlm_config *c = &m->c;
    const int d = m->d, H = c->heads, F = c->ffn, V = TLM_VOCAB, nl = c->layers;
    const layout L = layout_of(c, d);
    flamia_shape s = {T, num_docs, cu_seqlens, H, H, c->head_dim, /*causal*/ 1, 0.0f, 0, NULL};
    for (int i = 0; i < num_docs; i++)
        if (cu_seqlens[i + 1] - cu_seqlens[i] > c->max_pos) {
            fprintf(stderr, "error: tiny_lm: a document of %d tokens exceeds max_pos %d\n",
                    cu_seqlens[i + 1] - cu_seqlens[i], c->max_pos);
            return FLAMIA_ERR_INVALID;
        }

    /* one block for every activation: per layer 8 x T d + T F + 2 T + T H, then the head
     * (h, f, 1 / rms, probabilities) and the scratch (qkv, the wider of u and [dq dk dv], 4 x T d) */
    const size_t wide = (size_t)(F > 3 * d ? F : 3 * d);
    const size_t per_layer = (size_t)T * (8 * (size_t)d + F + 2 + H);
    const size_t head = (size_t)T * (2 * (size_t)d + 1 + V), scratch = (size_t)T * (3 * (size_t)d + wide + 4 * d);
    float *blk = malloc(sizeof(float) * (per_layer * nl + head + scratch));
    int *pos = malloc(sizeof(int) * (size_t)T);
    layer_cache *lc = calloc((size_t)nl, sizeof *lc);
    if (!blk || !pos || !lc) {
        free(blk), free(pos), free(lc);
        fprintf(stderr, "error: tiny_lm: out of host memory\n");
        return FLAMIA_ERR_NOMEM;
    }
    float *p = blk;
#define TAKE(n) (p += (n), p - (n))
    for (int l = 0; l < nl; l++) {
        layer_cache *x = &lc[l];
        x->h_in = TAKE((size_t)T * d), x->a = TAKE((size_t)T * d), x->q = TAKE((size_t)T * d);
        x->k = TAKE((size_t)T * d), x->v = TAKE((size_t)T * d), x->o = TAKE((size_t)T * d);
        x->h_mid = TAKE((size_t)T * d), x->b = TAKE((size_t)T * d), x->u = TAKE((size_t)T * F);
        x->r1 = TAKE((size_t)T), x->r2 = TAKE((size_t)T), x->lse = TAKE((size_t)T * H);
    }
    float *h = TAKE((size_t)T * d), *f = TAKE((size_t)T * d), *rfin = TAKE((size_t)T), *probs = TAKE((size_t)T * V);
    float *qkv = TAKE((size_t)T * 3 * d), *tmp = TAKE((size_t)T * wide), *dh = TAKE((size_t)T * d);
    float *dx = TAKE((size_t)T * d), *dd = TAKE((size_t)T * d), *dqkv3 = TAKE((size_t)T * d);
#undef TAKE
    for (int doc = 0; doc < num_docs; doc++)
        for (int t = cu_seqlens[doc]; t < cu_seqlens[doc + 1]; t++) pos[t] = t - cu_seqlens[doc];

    flamia_status st = FLAMIA_OK;
    /* ---- forward */
    for (int t = 0; t < T; t++)
        for (int i = 0; i < d; i++)
            h[(size_t)t * d + i] = m->w[L.emb + (size_t)tokens[t] * d + i] + m->w[L.pos + (size_t)pos[t] * d + i];
    for (int l = 0; l < nl && !st; l++) {
        const float *w = m->w + L.layer0 + (size_t)l * L.layer_stride;
        layer_cache *x = &lc[l];
        memcpy(x->h_in, h, sizeof(float) * (size_t)T * d);
        rms_fwd(T, d, h, w + L.g1, x->a, x->r1);
        mm_nn(T, d, 3 * d, x->a, w + L.wqkv, qkv, 0);
        for (int t = 0; t < T; t++) {
            memcpy(x->q + (size_t)t * d, qkv + (size_t)t * 3 * d, sizeof(float) * d);
            memcpy(x->k + (size_t)t * d, qkv + (size_t)t * 3 * d + d, sizeof(float) * d);
            memcpy(x->v + (size_t)t * d, qkv + (size_t)t * 3 * d + 2 * d, sizeof(float) * d);
        }
        if ((st = attn_forward(rf, &s, x->q, x->k, x->v, x->o, x->lse))) break;
        mm_nn(T, d, d, x->o, w + L.wo, h, 1);
        memcpy(x->h_mid, h, sizeof(float) * (size_t)T * d);
        rms_fwd(T, d, h, w + L.g2, x->b, x->r2);
        mm_nn(T, d, F, x->b, w + L.w1, x->u, 0);
        for (size_t i = 0; i < (size_t)T * F; i++) tmp[i] = x->u[i] > 0.0f ? x->u[i] : 0.0f;
        mm_nn(T, F, d, tmp, w + L.w2, h, 1);
    }
    double total = 0;
    int counted = 0;
    if (!st) {
        rms_fwd(T, d, h, m->w + L.gf, f, rfin);
        mm_nt(T, d, V, f, m->w + L.emb, probs, 0); /* logits, then probabilities in place */
        for (int t = 0; t < T; t++) {
            float *pr = probs + (size_t)t * V;
            float mx = pr[0];
            for (int j = 1; j < V; j++) mx = fmaxf(mx, pr[j]);
            double z = 0;
            for (int j = 0; j < V; j++) z += exp((double)(pr[j] - mx));
            for (int j = 0; j < V; j++) pr[j] = (float)(exp((double)(pr[j] - mx)) / z);
            const int has_next = t + 1 < T && pos[t + 1] == pos[t] + 1;
            if (has_next) total -= log(fmax((double)pr[tokens[t + 1]], 1e-300)), counted++;
        }
        *loss = counted ? total / counted : NAN;
    }

    /* ---- backward */
    if (!st && want_grad) {
        memset(m->g, 0, sizeof(float) * m->n);
        float *dlog = probs; /* d loss / d logits, in place */
        for (int t = 0; t < T; t++) {
            float *pr = dlog + (size_t)t * V;
            const int has_next = t + 1 < T && pos[t + 1] == pos[t] + 1;
            if (!has_next) {
                memset(pr, 0, sizeof(float) * V);
                continue;
            }
            pr[tokens[t + 1]] -= 1.0f;
            for (int j = 0; j < V; j++) pr[j] /= (float)counted;
        }
        mm_tn_acc(T, V, d, dlog, f, m->g + L.emb); /* tied output: dE += dlogits^T f */
        mm_nn(T, V, d, dlog, m->w + L.emb, dd, 0); /* df */
        rms_bwd(T, d, h, m->w + L.gf, rfin, dd, dh, m->g + L.gf, 0);
        for (int l = nl - 1; l >= 0 && !st; l--) {
            const float *w = m->w + L.layer0 + (size_t)l * L.layer_stride;
            float *gw = m->g + L.layer0 + (size_t)l * L.layer_stride;
            layer_cache *x = &lc[l];
            /* MLP: h = h_mid + relu(u) W2 */
            for (size_t i = 0; i < (size_t)T * F; i++) tmp[i] = x->u[i] > 0.0f ? x->u[i] : 0.0f;
            mm_tn_acc(T, F, d, tmp, dh, gw + L.w2);
            mm_nt(T, d, F, dh, w + L.w2, tmp, 0); /* d relu(u) */
            for (size_t i = 0; i < (size_t)T * F; i++)
                if (x->u[i] <= 0.0f) tmp[i] = 0.0f;
            mm_tn_acc(T, d, F, x->b, tmp, gw + L.w1);
            mm_nt(T, F, d, tmp, w + L.w1, dd, 0); /* d b */
            rms_bwd(T, d, x->h_mid, w + L.g2, x->r2, dd, dh, gw + L.g2, 1);
            /* attention: h_mid = h_in + O Wo */
            mm_tn_acc(T, d, d, x->o, dh, gw + L.wo);
            mm_nt(T, d, d, dh, w + L.wo, dd, 0); /* dO */
            float *dq = dx, *dk = qkv, *dv = qkv + (size_t)T * d;
            if ((st = attn_backward(rb, &s, x->q, x->k, x->v, x->o, x->lse, dd, dq, dk, dv))) break;
            for (int t = 0; t < T; t++) { /* [dq dk dv] per token, the layout of qkv */
                memcpy(tmp + (size_t)t * 3 * d, dq + (size_t)t * d, sizeof(float) * d);
                memcpy(tmp + (size_t)t * 3 * d + d, dk + (size_t)t * d, sizeof(float) * d);
                memcpy(tmp + (size_t)t * 3 * d + 2 * d, dv + (size_t)t * d, sizeof(float) * d);
            }
            mm_tn_acc(T, d, 3 * d, x->a, tmp, gw + L.wqkv);
            mm_nt(T, 3 * d, d, tmp, w + L.wqkv, dqkv3, 0); /* d a */
            rms_bwd(T, d, x->h_in, w + L.g1, x->r1, dqkv3, dh, gw + L.g1, 1);
        }
        if (!st)
            for (int t = 0; t < T; t++)
                for (int i = 0; i < d; i++) {
                    m->g[L.emb + (size_t)tokens[t] * d + i] += dh[(size_t)t * d + i];
                    m->g[L.pos + (size_t)pos[t] * d + i] += dh[(size_t)t * d + i];
                }
    }
    free(blk), free(pos), free(lc);
    return st;
}

double tlm_adam_step(tlm *m, double lr, double clip) {
    double ss = 0;
    for (size_t i = 0; i < m->n; i++) ss += (double)m->g[i] * m->g[i];
    const double norm = sqrt(ss);
    if (!isfinite(norm)) return norm; /* no update from a non-finite gradient */
    const double k = clip > 0 && norm > clip ? clip / norm : 1.0;
    m->t++;
    const double b1 = 0.9, b2 = 0.95, c1 = 1.0 - pow(b1, (double)m->t), c2 = 1.0 - pow(b2, (double)m->t);
    for (size_t i = 0; i < m->n; i++) {
        const double g = k * m->g[i];
        m->m[i] = (float)(b1 * m->m[i] + (1 - b1) * g);
        m->v[i] = (float)(b2 * m->v[i] + (1 - b2) * g * g);
        m->w[i] -= (float)(lr * (m->m[i] / c1) / (sqrt(m->v[i] / c2) + 1e-8));
    }
    return norm;
}
