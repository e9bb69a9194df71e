/*
 * sched_ablation - scheduler ablations, CPU simulation part.
 *
 * Paper item: Table D "no longest-first order costs 10-65%", "CLC (dynamic claiming) gains
 * 1.7-5.7%", and the scheduler text "work list built on the GPU in 0.26 ms for 131072
 * one-token documents (reference implementation 50.5 ms)" (PAPER.md, GPU-side scheduling;
 * DESIGN.md section 4.4). Hopper has no Cluster Launch Control: dynamic claiming is a
 * global atomic counter, simulated here as greedy list scheduling.
 *
 * Model. A packed batch becomes a tile work list per pass, one item per (document,
 * head, 128-token tile):
 *   forward : item = query tile m of a document with n tiles, cost m+1 key tiles (causal)
 *   backward: item = key tile m, cost n-m query tiles
 * Costs are in 128x128 tile units (diagonal tiles count whole: the MMA runs masked).
 * Orders: natural (document, head, tile ascending: a plain grid launch) and longest-first
 * (stable sort by cost, descending). Policies on W workers (default 132 = H200 SMs):
 * static round-robin (persistent grid, item k on worker k mod W) and dynamic greedy
 * claiming (the next item goes to the first worker to finish). Makespan is compared with
 * the lower bound max(total/W, largest item). List build time is measured on this CPU
 * for 131072 one-token documents (and each workload) with a counting sort by cost and,
 * for comparison, qsort.
 *
 * Tables: makespan (workload, pass, order, policy), summary (penalties and gains per
 * workload and pass), build_time.
 * Example: sched_ablation --out data/runs/cpu/sched_ablation.h5
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

typedef struct {
    int32_t doc, tile, head, cost;
} item;

static int tile_sz = 128;

/* natural order list for one pass: for doc, for head, for tile */
static item *build_list(const xp_workload *w, int heads, int bwd, size_t *n_out) {
    size_t n = 0;
    for (int d = 0; d < w->num_docs; d++) {
        int L = w->cu_seqlens[d + 1] - w->cu_seqlens[d];
        n += (size_t)((L + tile_sz - 1) / tile_sz) * (size_t)heads;
    }
    item *it = xp_xmalloc(sizeof(item) * n);
    size_t k = 0;
    for (int d = 0; d < w->num_docs; d++) {
        int L = w->cu_seqlens[d + 1] - w->cu_seqlens[d], nt = (L + tile_sz - 1) / tile_sz;
        for (int h = 0; h < heads; h++)
            for (int m = 0; m < nt; m++) {
                item x = {d, m, h, bwd ? nt - m : m + 1};
                it[k++] = x;
            }
    }
    *n_out = n;
    return it;
}

/* stable counting sort by cost, descending (what a GPU radix/merge pass does) */
static void sort_longest_first(const item *in, item *out, size_t n) {
    int32_t maxc = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i].cost > maxc) maxc = in[i].cost;
    size_t *cnt = calloc((size_t)maxc + 2, sizeof(size_t));
    if (!cnt) xp_die("out of memory");
    for (size_t i = 0; i < n; i++) cnt[maxc - in[i].cost]++;
    size_t run = 0;
    for (int32_t c = 0; c <= maxc; c++) {
        size_t t = cnt[c];
        cnt[c] = run;
        run += t;
    }
    for (size_t i = 0; i < n; i++) out[cnt[maxc - in[i].cost]++] = in[i];
    free(cnt);
}

static int cmp_cost_desc(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->cost != y->cost) return y->cost - x->cost;
    /* tie-break on original position to make qsort's result the stable one */
    if (x->doc != y->doc) return x->doc - y->doc;
    if (x->head != y->head) return x->head - y->head;
    return x->tile - y->tile;
}

static double makespan_static(const item *it, size_t n, int W) {
    double *load = calloc((size_t)W, sizeof(double)), worst = 0;
    if (!load) xp_die("out of memory");
    for (size_t i = 0; i < n; i++) load[i % (size_t)W] += it[i].cost;
    for (int w = 0; w < W; w++)
        if (load[w] > worst) worst = load[w];
    free(load);
    return worst;
}

/* greedy claiming: min-heap of worker finish times; ties go to the lower worker id */
static double makespan_dynamic(const item *it, size_t n, int W) {
    double *h = calloc((size_t)W, sizeof(double)), worst = 0;
    if (!h) xp_die("out of memory");
    for (size_t i = 0; i < n; i++) {
        h[0] += it[i].cost; /* the earliest-free worker takes the next item */
        size_t p = 0;
        for (;;) { /* sift down */
            size_t l = 2 * p + 1, r = l + 1, m = p;
            if (l < (size_t)W && h[l] < h[m]) m = l;
            if (r < (size_t)W && h[r] < h[m]) m = r;
            if (m == p) break;
            double t = h[p];
            h[p] = h[m];
            h[m] = t;
            p = m;
        }
    }
    for (int w = 0; w < W; w++)
        if (h[w] > worst) worst = h[w];
    free(h);
    return worst;
}

/* median build / sort times (ms) of the natural list of one pass */
static void time_build(const xp_workload *w, int heads, int reps, double *build_ms, double *sort_ms,
                       double *qsort_ms, size_t *n_items) {
    double *tb = xp_xmalloc(sizeof(double) * (size_t)reps), *ts = xp_xmalloc(sizeof(double) * (size_t)reps),
           *tq = xp_xmalloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++) {
        size_t n;
        double t0 = xp_now();
        item *it = build_list(w, heads, 0, &n);
        double t1 = xp_now();
        item *out = xp_xmalloc(sizeof(item) * n);
        sort_longest_first(it, out, n);
        double t2 = xp_now();
        qsort(it, n, sizeof(item), cmp_cost_desc);
        double t3 = xp_now();
        if (n && (memcmp(it, out, sizeof(item) * n) != 0)) xp_die("counting sort and qsort disagree");
        tb[r] = (t1 - t0) * 1e3;
        ts[r] = (t2 - t1) * 1e3;
        tq[r] = (t3 - t2) * 1e3;
        *n_items = n;
        free(it);
        free(out);
    }
    *build_ms = xp_median(tb, (size_t)reps);
    *sort_ms = xp_median(ts, (size_t)reps);
    *qsort_ms = xp_median(tq, (size_t)reps);
    free(tb);
    free(ts);
    free(tq);
}

static void usage(const xp_opts *d) {
    printf("usage: sched_ablation --out FILE.h5 [options]\n"
           "Simulates tile work lists of packed batches: natural vs longest-first order, static\n"
           "round-robin vs dynamic claiming on W workers; times the list build.\n"
           "Driver options:\n"
           "  --workers W          persistent workers (default 132: H200 SMs)\n"
           "  --tile N             tile size in tokens (default 128)\n"
           "  --reps N             timing repetitions, median reported (default 21)\n"
           "  --build-docs N       one-token documents in the list-build timing case (default 131072)\n");
    xp_print_common_usage(d);
}

/* the driver's own options (--tile sets tile_sz) */
enum { O_WORKERS = 1, O_TILE, O_REPS, O_BUILD };
static const struct option driver_options[] = {{"workers", required_argument, 0, O_WORKERS},
                                               {"tile", required_argument, 0, O_TILE},
                                               {"reps", required_argument, 0, O_REPS},
                                               {"build-docs", required_argument, 0, O_BUILD},
                                               {0, 0, 0, 0}};
typedef struct {
    int workers, reps, build_docs;
} driver_args;

static int handle_opt(int c, const char *arg, void *ctx) {
    driver_args *a = ctx;
    switch (c) {
    case O_WORKERS: return xp_parse_int("--workers", arg, 1, 1 << 20, &a->workers);
    case O_TILE: return xp_parse_int("--tile", arg, 16, 4096, &tile_sz);
    case O_REPS: return xp_parse_int("--reps", arg, 1, 10000, &a->reps);
    case O_BUILD: return xp_parse_int("--build-docs", arg, 1, 1 << 24, &a->build_docs);
    }
    return 0;
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("sched_ablation");
    o.workloads = "4x4096,16x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024";
    driver_args args = {.workers = 132, .reps = 21, .build_docs = 131072};
    int parsed = xp_parse_options(&o, argc, argv, driver_options, handle_opt, &args, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    if (xp_opts_finish(&o)) return 2;

    int nw;
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;
    char err[256];

    xp_table *mk = xp_table_new("makespan", "simulated makespan per workload, pass, order and claiming policy");
    xp_table_col(mk, "workload", XP_STR, "", "workload name");
    xp_table_col(mk, "pass", XP_STR, "", "fwd (items = query tiles) or bwd (items = key tiles)");
    xp_table_col(mk, "order", XP_STR, "", "natural or longest_first");
    xp_table_col(mk, "policy", XP_STR, "", "static (round-robin persistent grid) or dynamic (greedy claiming)");
    xp_table_col(mk, "workers", XP_I64, "workers", "persistent workers (SMs)");
    xp_table_col(mk, "items", XP_I64, "items", "work items (document x head x tile)");
    xp_table_col(mk, "total_cost", XP_F64, "tiles", "sum of item costs (128x128 tiles)");
    xp_table_col(mk, "max_item", XP_F64, "tiles", "largest item cost");
    xp_table_col(mk, "makespan", XP_F64, "tiles", "simulated makespan");
    xp_table_col(mk, "lower_bound", XP_F64, "tiles", "max(total/workers, largest item)");
    xp_table_col(mk, "efficiency", XP_F64, "1", "lower_bound / makespan");

    xp_table *sm = xp_table_new("summary", "penalty of natural order and gain of dynamic claiming");
    xp_table_col(sm, "workload", XP_STR, "", "workload name");
    xp_table_col(sm, "pass", XP_STR, "", "fwd or bwd");
    xp_table_col(sm, "total_tokens", XP_I64, "tokens", "packed tokens");
    xp_table_col(sm, "num_docs", XP_I64, "docs", "documents");
    xp_table_col(sm, "skewed", XP_I64, "1", "1 when the longest document is >= 4x the mean (paper's dynamic-claim rule)");
    xp_table_col(sm, "natural_penalty_static", XP_F64, "1",
                 "makespan(natural, static) / makespan(longest_first, static) - 1");
    xp_table_col(sm, "natural_penalty_dynamic", XP_F64, "1",
                 "makespan(natural, dynamic) / makespan(longest_first, dynamic) - 1");
    xp_table_col(sm, "dynamic_gain", XP_F64, "1",
                 "makespan(longest_first, static) / makespan(longest_first, dynamic) - 1");
    xp_table_col(sm, "best_efficiency", XP_F64, "1", "lower_bound / best makespan");

    xp_table *bt = xp_table_new("build_time", "time to build and order the forward work list on this CPU (median)");
    xp_table_col(bt, "case", XP_STR, "", "workload of the list");
    xp_table_col(bt, "items", XP_I64, "items", "items in the list (document x tile; heads expanded at claim time)");
    xp_table_col(bt, "build_ms", XP_F64, "ms", "build the natural list");
    xp_table_col(bt, "sort_ms", XP_F64, "ms", "stable counting sort by cost, longest first");
    xp_table_col(bt, "qsort_ms", XP_F64, "ms", "same order by C qsort (comparison sort)");
    xp_table_col(bt, "total_ms", XP_F64, "ms", "build_ms + sort_ms");
    xp_table_col(bt, "reps", XP_I64, "1", "repetitions (median reported)");

    xp_progress pr;
    xp_progress_init(&pr, "sched_ablation", (long)nw * 2 + nw + 1, o.quiet);
    static const char *orders[2] = {"natural", "longest_first"}, *pols[2] = {"static", "dynamic"};
    for (int i = 0; i < nw; i++) {
        const xp_workload *w = &ws[i];
        double mean = (double)w->total_tokens / w->num_docs;
        int skewed = w->max_len >= 4.0 * mean;
        for (int bwd = 0; bwd < 2; bwd++) {
            size_t n;
            item *nat = build_list(w, w->heads_q, bwd, &n), *lf = xp_xmalloc(sizeof(item) * n);
            sort_longest_first(nat, lf, n);
            double total = 0, maxc = 0;
            for (size_t k = 0; k < n; k++) {
                total += nat[k].cost;
                if (nat[k].cost > maxc) maxc = nat[k].cost;
            }
            double lb = fmax(total / args.workers, maxc), ms[2][2];
            for (int oi = 0; oi < 2; oi++)
                for (int pi = 0; pi < 2; pi++) {
                    const item *L = oi ? lf : nat;
                    ms[oi][pi] = pi ? makespan_dynamic(L, n, args.workers) : makespan_static(L, n, args.workers);
                    xp_row_begin(mk);
                    xp_set_s(mk, "workload", w->name);
                    xp_set_s(mk, "pass", bwd ? "bwd" : "fwd");
                    xp_set_s(mk, "order", orders[oi]);
                    xp_set_s(mk, "policy", pols[pi]);
                    xp_set_i(mk, "workers", args.workers);
                    xp_set_i(mk, "items", (int64_t)n);
                    xp_set_f(mk, "total_cost", total);
                    xp_set_f(mk, "max_item", maxc);
                    xp_set_f(mk, "makespan", ms[oi][pi]);
                    xp_set_f(mk, "lower_bound", lb);
                    xp_set_f(mk, "efficiency", lb / ms[oi][pi]);
                    xp_row_end(mk);
                }
            double best = fmin(fmin(ms[0][0], ms[0][1]), fmin(ms[1][0], ms[1][1]));
            xp_row_begin(sm);
            xp_set_s(sm, "workload", w->name);
            xp_set_s(sm, "pass", bwd ? "bwd" : "fwd");
            xp_set_i(sm, "total_tokens", w->total_tokens);
            xp_set_i(sm, "num_docs", w->num_docs);
            xp_set_i(sm, "skewed", skewed);
            xp_set_f(sm, "natural_penalty_static", ms[0][0] / ms[1][0] - 1);
            xp_set_f(sm, "natural_penalty_dynamic", ms[0][1] / ms[1][1] - 1);
            xp_set_f(sm, "dynamic_gain", ms[1][0] / ms[1][1] - 1);
            xp_set_f(sm, "best_efficiency", lb / best);
            xp_row_end(sm);
            free(nat);
            free(lf);
            xp_progress_step(&pr, w->name);
        }
    }
    /* list build timing: the paper's case plus every workload; heads expanded at claim time */
    for (int i = -1; i < nw; i++) {
        xp_workload tmp;
        const xp_workload *w = &tmp;
        char name[64];
        if (i < 0) {
            snprintf(name, sizeof name, "%dx1", args.build_docs);
            if (xp_workload_make(name, 1.0, 1, &tmp, err, sizeof err)) xp_die("%s", err);
        } else {
            w = &ws[i];
            snprintf(name, sizeof name, "%s", w->name);
        }
        size_t n = 0;
        double b, s, q;
        time_build(w, 1, args.reps, &b, &s, &q, &n);
        xp_row_begin(bt);
        xp_set_s(bt, "case", i < 0 ? "131072 one-token documents" : name);
        if (i < 0 && args.build_docs != 131072) xp_set_s(bt, "case", name);
        xp_set_i(bt, "items", (int64_t)n);
        xp_set_f(bt, "build_ms", b);
        xp_set_f(bt, "sort_ms", s);
        xp_set_f(bt, "qsort_ms", q);
        xp_set_f(bt, "total_ms", b + s);
        xp_set_i(bt, "reps", args.reps);
        xp_row_end(bt);
        if (i < 0) xp_workload_free(&tmp);
        xp_progress_step(&pr, name);
    }
    xp_progress_end(&pr);

    xp_out *f = xp_out_open(&o, argc, argv);
    if (!f) return 1;
    xp_out_attr_i(f, "workers", args.workers);
    xp_out_attr_i(f, "tile", tile_sz);
    xp_out_attr_s(f, "workloads", o.workloads);
    xp_out_attr_s(f, "cost_model", "fwd item = query tile m: m+1 key tiles; bwd item = key tile m: n-m query tiles");
    xp_out_table(f, mk);
    xp_out_table(f, sm);
    xp_out_table(f, bt);
    int rc = xp_out_commit(f);
    xp_table_free(mk);
    xp_table_free(sm);
    xp_table_free(bt);
    xp_workloads_free(ws, nw);
    return rc ? 1 : 0;
}
