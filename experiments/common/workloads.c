/* workloads.c - the paper's workload catalogue and the spec grammar (xp.h).
 *
 * Catalogue (PAPER.md "Workloads": causal, packed, 16 heads, d = 128):
 *   equal:    4x4096 16x4096 16x1024 64x1024
 *   skewed:   8192+32x256 8192+224x256 (one long document among short ones)
 *   variable: logu-16k logu-64k (log-uniform lengths, fixed seed, see below)
 *   gqa:      gqa-16x1024 (16 query heads sharing 4 key/value heads)
 * Specs: "AxL" or "L" terms joined by '+' ("8192+32x256" = 1x8192 + 32x256; "160+96+45"),
 * "logu:T:MIN:MAX:SEED": lengths round(exp(U(ln MIN, ln MAX))) drawn with SEED until the
 * total reaches T, the last document truncated to what remains. "gqa-SPEC" (not a catalogue
 * name): SPEC with 16 query heads over 4 kv heads, as gqa-16x1024.
 * --scale S multiplies every length by S (rounded, at least 1) after generation, so a
 * scaled variable workload has the same shape as the full one.
 * data/workloads/catalogue.tsv is the output of `xp_workloads --tsv` (checked by a test). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

static const xp_catalogue_entry catalogue[] = {
    {"4x4096", "equal", "4x4096", 16, 16, 128, "4 documents of 4096 tokens"},
    {"16x4096", "equal", "16x4096", 16, 16, 128, "16 documents of 4096 tokens"},
    {"16x1024", "equal", "16x1024", 16, 16, 128, "16 documents of 1024 tokens"},
    {"64x1024", "equal", "64x1024", 16, 16, 128, "64 documents of 1024 tokens"},
    {"8192+32x256", "skewed", "8192+32x256", 16, 16, 128, "one 8192-token document + 32 of 256"},
    {"8192+224x256", "skewed", "8192+224x256", 16, 16, 128, "one 8192-token document + 224 of 256"},
    {"logu-16k", "variable", "logu:16384:32:8192:16", 16, 16, 128,
     "16384 tokens, lengths log-uniform in [32, 8192], seed 16"},
    {"logu-64k", "variable", "logu:65536:32:32768:64", 16, 16, 128,
     "65536 tokens, lengths log-uniform in [32, 32768], seed 64"},
    {"gqa-16x1024", "gqa", "16x1024", 16, 4, 128, "16x1024 with 16 query heads over 4 kv heads"},
};

const xp_catalogue_entry *xp_catalogue(int *n) {
    *n = (int)(sizeof catalogue / sizeof catalogue[0]);
    return catalogue;
}

typedef struct {
    int n, cap;
    int64_t *len;
} lenvec;

static void push(lenvec *v, int64_t L) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 64;
        int64_t *p = realloc(v->len, sizeof(int64_t) * (size_t)v->cap);
        if (!p) xp_die("out of memory");
        v->len = p;
    }
    v->len[v->n++] = L;
}

#define FAIL(...)                                    \
    do {                                             \
        if (err) snprintf(err, errlen, __VA_ARGS__); \
        free(v.len);                                 \
        return -1;                                   \
    } while (0)

static int parse_lengths(const char *spec, lenvec *out, char *err, size_t errlen) {
    lenvec v = {0, 0, NULL};
    const long long max_total = 1LL << 26;
    long long total = 0;
    if (!strncmp(spec, "logu:", 5)) {
        long long T, lo, hi;
        unsigned long long seed;
        char tail;
        if (sscanf(spec + 5, "%lld:%lld:%lld:%llu%c", &T, &lo, &hi, &seed, &tail) != 4)
            FAIL("workload '%s': expected logu:TOTAL:MIN:MAX:SEED", spec);
        if (T < 1 || T > max_total || lo < 1 || hi < lo)
            FAIL("workload '%s': need 1 <= TOTAL <= %lld and 1 <= MIN <= MAX", spec, max_total);
        xp_rng r;
        xp_rng_seed(&r, seed, 0x10605);
        while (total < T) {
            double u = xp_rng_uniform(&r);
            long long L = llround(exp(log((double)lo) + u * (log((double)hi) - log((double)lo))));
            if (L > T - total) L = T - total;
            push(&v, L);
            total += L;
        }
    } else {
        const char *p = spec;
        while (*p) {
            char *end;
            long long a = strtoll(p, &end, 10), L;
            if (end == p || a < 1) FAIL("workload '%s': not a catalogue name or spec (see --help)", spec);
            p = end;
            if (*p == 'x') {
                L = strtoll(p + 1, &end, 10);
                if (end == p + 1 || L < 1) FAIL("workload '%s': bad length after 'x'", spec);
                p = end;
            } else {
                L = a;
                a = 1;
            }
            if (a * L > max_total || total + a * L > max_total)
                FAIL("workload '%s': more than %lld tokens", spec, max_total);
            for (long long i = 0; i < a; i++) push(&v, L);
            total += a * L;
            if (*p == '+') p++;
            else if (*p) FAIL("workload '%s': unexpected '%c' (grammar: AxL+B+CxM)", spec, *p);
        }
    }
    if (v.n == 0) FAIL("workload '%s': no documents", spec);
    *out = v;
    return 0;
}

int xp_workload_make(const char *name, double scale, int heads, xp_workload *w, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    if (!name || !*name) {
        if (err) snprintf(err, errlen, "empty workload name");
        return -1;
    }
    if (!(scale > 0 && scale <= 1)) {
        if (err) snprintf(err, errlen, "scale %g outside (0, 1]", scale);
        return -1;
    }
    int n;
    const xp_catalogue_entry *c = xp_catalogue(&n), *e = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(c[i].name, name)) e = &c[i];
    xp_catalogue_entry custom = {name, "custom", name, 16, 16, 128, "custom spec"};
    if (!e && !strncmp(name, "gqa-", 4)) /* "gqa-SPEC": a custom spec with 16 query heads over 4 kv heads */
        custom = (xp_catalogue_entry){name, "gqa", name + 4, 16, 4, 128, "custom spec, 16 query heads over 4 kv heads"};
    if (!e) e = &custom;
    lenvec v;
    if (parse_lengths(e->spec, &v, err, errlen)) return -1;
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->kind, sizeof w->kind, "%s", e->kind);
    snprintf(w->spec, sizeof w->spec, "%s", e->spec);
    w->heads_q = e->heads_q;
    w->heads_kv = e->heads_kv;
    w->head_dim = e->head_dim;
    if (heads > 0) {
        int group = e->heads_q / e->heads_kv;
        if (heads % group) {
            if (err) snprintf(err, errlen, "workload '%s': --heads %d is not a multiple of its GQA group %d",
                              name, heads, group);
            free(v.len);
            return -1;
        }
        w->heads_q = heads;
        w->heads_kv = heads / group;
    }
    w->scale = scale;
    w->num_docs = v.n;
    w->cu_seqlens = xp_xmalloc(sizeof(int32_t) * (size_t)(v.n + 1));
    w->cu_seqlens[0] = 0;
    long long t = 0;
    for (int i = 0; i < v.n; i++) {
        long long L = scale == 1.0 ? v.len[i] : llround((double)v.len[i] * scale);
        if (L < 1) L = 1;
        if (L > w->max_len) w->max_len = (int)L;
        t += L;
        w->cu_seqlens[i + 1] = (int32_t)t;
    }
    w->total_tokens = (int)t;
    free(v.len);
    return 0;
}

void xp_workload_free(xp_workload *w) {
    free(w->cu_seqlens);
    w->cu_seqlens = NULL;
}

xp_workload *xp_workloads_make(const xp_opts *o, int *n) {
    char **names = xp_split_list(o->workloads, n);
    xp_workload *ws = xp_xmalloc(sizeof(xp_workload) * (size_t)(*n ? *n : 1));
    char err[256];
    for (int i = 0; i < *n; i++)
        if (xp_workload_make(names[i], o->scale, o->heads, &ws[i], err, sizeof err)) {
            fprintf(stderr, "error: %s\n", err);
            xp_workloads_free(ws, i);
            ws = NULL;
            break;
        }
    xp_strv_free(names);
    return ws;
}

void xp_workloads_free(xp_workload *ws, int n) {
    for (int i = 0; i < n; i++) xp_workload_free(&ws[i]);
    free(ws);
}

flamia_shape xp_workload_shape(const xp_workload *w) {
    flamia_shape s;
    memset(&s, 0, sizeof s);
    s.total_tokens = w->total_tokens;
    s.num_docs = w->num_docs;
    s.cu_seqlens = w->cu_seqlens;
    s.heads_q = w->heads_q;
    s.heads_kv = w->heads_kv;
    s.head_dim = w->head_dim;
    s.causal = 1;
    s.softmax_scale = 0.0f;
    s.max_seqlen = w->max_len;
    return s;
}

double xp_workload_causal_pairs(const xp_workload *w) {
    double p = 0;
    for (int d = 0; d < w->num_docs; d++) {
        double L = (double)(w->cu_seqlens[d + 1] - w->cu_seqlens[d]);
        p += L * (L + 1) / 2;
    }
    return p;
}
