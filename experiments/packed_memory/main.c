/*
 * packed_memory - packed documents against the same documents padded: memory and time of the
 * training call, and the real tokens' outputs compared bit for bit.
 *
 * Paper item: "Packed layout, no repacking: peak memory 2.7 GB at T=131072 vs 16.8 GB padded"
 * (PAPER.md, GPU-side scheduling; DESIGN.md section 5, packed_memory). A framework without
 * packed-document attention pads every document of a microbatch to the longest one and runs
 * a batch of equal-length sequences; FLAMIA-H takes the packed tokens and cu_seqlens as they
 * are. For each workload and recipe this driver runs the training call (quantize + forward +
 * backward) on both layouts:
 *   packed   the workload's documents back to back (T tokens);
 *   padded   each document at the start of a slot of max_len tokens, the rest zero
 *            (num_docs x max_len tokens), which is what the padded framework would hold.
 * and records the bytes the caller's tensors and the workspace take (counted), the device
 * memory the run held (cuda: cudaMemGetInfo before the allocations and after the timed calls),
 * the call's median time, and how many output elements of the real tokens (O, lse, dQ, dK, dV)
 * differ bitwise between the two layouts. Blocks, tiles and frames are document-aligned
 * (docs/numerics.md), and padding tokens come after every real token of their document, so
 * under causal masking they change nothing a real token computes: the expected count is 0
 * (cuda: the compared call runs with deterministic dQ, so the reduce-add order is fixed; the
 * timed calls use the default mode). A padded layout the GPU cannot hold is a result
 * (padded_out_of_memory = 1), not an error.
 *
 * Tables: packed_memory (workload x recipe).
 * Example: packed_memory --backend cuda --out data/runs/cuda/packed_memory_gpu.h5
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packed_memory.h"
#include "xp.h"

/* w's documents, each padded to w->max_len tokens */
static void padded_layout(const xp_workload *w, xp_workload *p) {
    *p = *w;
    snprintf(p->name, sizeof p->name, "%.50s padded", w->name);
    snprintf(p->kind, sizeof p->kind, "padded");
    p->total_tokens = w->num_docs * w->max_len;
    p->cu_seqlens = xp_xmalloc(sizeof(int32_t) * (size_t)(w->num_docs + 1));
    for (int d = 0; d <= w->num_docs; d++) p->cu_seqlens[d] = d * w->max_len;
}

/* Each document's rows (row floats a token; its length from the packed workload w) from its
 * place in layout src_lay to its place in dst_lay */
static void copy_docs(float *dst, const xp_workload *dst_lay, const float *src, const xp_workload *src_lay, size_t row,
                      const xp_workload *w) {
    for (int d = 0; d < w->num_docs; d++)
        memcpy(dst + (size_t)dst_lay->cu_seqlens[d] * row, src + (size_t)src_lay->cu_seqlens[d] * row,
               sizeof(float) * (size_t)(w->cu_seqlens[d + 1] - w->cu_seqlens[d]) * row);
}

/* [T][row] floats of w -> the same rows at the start of lay's document slots, padding zero */
static float *pad_rows(const float *x, size_t row, const xp_workload *w, const xp_workload *lay) {
    const size_t n = (size_t)lay->total_tokens * row;
    float *y = xp_xmalloc(sizeof(float) * (n ? n : 1));
    memset(y, 0, sizeof(float) * n);
    copy_docs(y, lay, x, w, row, w);
    return y;
}

/* The compared outputs: their names (column suffixes), arrays and row widths [T][width] */
enum { NOUT = 5 };
static const char *kOuts[NOUT] = {"o", "lse", "dq", "dk", "dv"};
static void outputs_of(const xp_result *r, const xp_workload *w, float *p[NOUT], size_t width[NOUT]) {
    float *a[NOUT] = {r->o, r->lse, r->dq, r->dk, r->dv};
    const size_t D = (size_t)w->head_dim;
    const size_t wd[NOUT] = {w->heads_q * D, (size_t)w->heads_q, w->heads_q * D, w->heads_kv * D, w->heads_kv * D};
    for (int i = 0; i < NOUT; i++) p[i] = a[i], width[i] = wd[i];
}

/* The training call on the CPU reference, on layout lay; real (w's packed shape) gets the real
 * tokens' outputs. Bytes: the reference's FP32 tensors. */
static int cpu_run(const flamia_recipe *rc, const xp_workload *w, const xp_workload *lay, const xp_inputs *in,
                   xp_result *real, pm_cost *cost) {
    const size_t D = (size_t)w->head_dim, qrow = (size_t)w->heads_q * D, kvrow = (size_t)w->heads_kv * D;
    xp_inputs pin = {.nq = (size_t)lay->total_tokens * qrow, .nkv = (size_t)lay->total_tokens * kvrow};
    pin.q = pad_rows(in->q, qrow, w, lay);
    pin.k = pad_rows(in->k, kvrow, w, lay);
    pin.v = pad_rows(in->v, kvrow, w, lay);
    pin.dout = pad_rows(in->dout, qrow, w, lay);
    xp_result r;
    xp_result_alloc(&r, lay);
    const double t0 = xp_now();
    const int rv = xp_run_ref(rc, lay, &pin, &r);
    cost->train_ms = (xp_now() - t0) * 1e3;
    cost->tensor_bytes = pm_tensor_bytes(lay, 4.0);
    cost->workspace_bytes = cost->device_bytes = NAN;
    cost->out_of_memory = 0;
    if (rv == 0) {
        float *from[NOUT], *to[NOUT];
        size_t width[NOUT];
        outputs_of(&r, w, from, width);
        outputs_of(real, w, to, width);
        for (int i = 0; i < NOUT; i++) copy_docs(to[i], w, from[i], lay, width[i], w);
    }
    xp_result_free(&r);
    xp_inputs_free(&pin);
    return rv;
}

/* elements of a and b whose bits differ */
static int64_t differing(const float *a, const float *b, size_t n) {
    int64_t c = 0;
    for (size_t i = 0; i < n; i++) c += memcmp(&a[i], &b[i], sizeof(float)) != 0;
    return c;
}

static void usage(const xp_opts *d) {
    printf("usage: packed_memory --out FILE.h5 [options]\n"
           "The training call on packed documents and on the same documents padded to the\n"
           "longest: bytes held, time, and the real tokens' outputs compared bit for bit.\n"
           "Driver options:\n"
           "  --warmup N           untimed calls per layout before timing (cuda; default 2)\n"
           "  --iters N            timed calls per layout, median reported (cuda; default 5;\n"
           "                       the CPU reference is timed once)\n");
    xp_print_common_usage(d);
}

enum { O_WARMUP = 1, O_ITERS };
static const struct option driver_options[] = {{"warmup", required_argument, 0, O_WARMUP},
                                               {"iters", required_argument, 0, O_ITERS},
                                               {0, 0, 0, 0}};
typedef struct {
    int warmup, iters;
} driver_args;

static int handle_opt(int c, const char *arg, void *ctx) {
    driver_args *a = ctx;
    switch (c) {
    case O_WARMUP: return xp_parse_int("--warmup", arg, 0, 100000, &a->warmup);
    case O_ITERS: return xp_parse_int("--iters", arg, 1, 100000, &a->iters);
    }
    return 0;
}

static const char *kLayouts[2] = {"packed", "padded"};

static void add_columns(xp_table *t) {
    xp_table_col(t, "workload", XP_STR, "", "workload");
    xp_table_col(t, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(t, "num_docs", XP_I64, "documents", "documents in the microbatch");
    xp_table_col(t, "max_len", XP_I64, "tokens", "the longest document: the padded slot length");
    /* per layout: "<layout>_<suffix>" */
    static const struct {
        const char *suffix;
        xp_coltype type;
        const char *units, *what;
    } cols[] = {
        {"tokens", XP_I64, "tokens", "token rows of the tensors"},
        {"tensor_bytes", XP_F64, "B",
         "the caller's Q, K, V, dO, O, dQ, dK, dV, lse and cu_seqlens as the backend holds them (cuda: BF16, lse "
         "FP32; cpu: FP32)"},
        {"workspace_bytes", XP_F64, "B", "flamia_cuda_workspace_size (NaN on the CPU)"},
        {"device_bytes", XP_F64, "B",
         "device memory the run held, free before its allocations minus free after its timed calls "
         "(cudaMemGetInfo; NaN on the CPU or out of memory)"},
        {"train_ms", XP_F64, "ms", "one training call (quantize + forward + backward), median"},
        {"out_of_memory", XP_I64, "1", "1 when its allocations did not fit on the GPU"},
    };
    char name[64], desc[256];
    for (int l = 0; l < 2; l++)
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
            snprintf(name, sizeof name, "%s_%s", kLayouts[l], cols[c].suffix);
            snprintf(desc, sizeof desc, "%s layout: %s", kLayouts[l], cols[c].what);
            xp_table_col(t, name, cols[c].type, cols[c].units, desc);
        }
    for (int i = 0; i < NOUT; i++) {
        const char *out = kOuts[i];
        snprintf(name, sizeof name, "differing_%s", out);
        snprintf(desc, sizeof desc,
                 "elements of %s at real tokens whose bits differ between the padded and the packed run "
                 "(-1: not compared, padded out of memory)", out);
        xp_table_col(t, name, XP_I64, "elements", desc);
        snprintf(name, sizeof name, "change_%s", out);
        snprintf(desc, sizeof desc, "||%s padded - %s packed||_F / ||%s packed||_F over the real tokens (NaN: not compared)",
                 out, out, out);
        xp_table_col(t, name, XP_F64, "1", desc);
    }
}

static void set_cost(xp_table *t, int l, const xp_workload *lay, const pm_cost *c) {
    char name[64];
    const char *L = kLayouts[l];
#define SETF(suffix, v) (snprintf(name, sizeof name, "%s_" suffix, L), xp_set_f(t, name, v))
    snprintf(name, sizeof name, "%s_tokens", L);
    xp_set_i(t, name, lay->total_tokens);
    SETF("tensor_bytes", c->tensor_bytes);
    SETF("workspace_bytes", c->workspace_bytes);
    SETF("device_bytes", c->device_bytes);
    SETF("train_ms", c->train_ms);
#undef SETF
    snprintf(name, sizeof name, "%s_out_of_memory", L);
    xp_set_i(t, name, c->out_of_memory);
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("packed_memory");
    o.workloads = "8192+32x256,8192+224x256,logu-16k,logu-64k,logu:131072:32:32768:128";
    o.recipes = "mxfp8";
    o.backends_supported = 3;
    o.scale = 1.0;
    o.outliers = 0;
    driver_args args = {.warmup = 2, .iters = 5};
    int parsed = xp_parse_options(&o, argc, argv, driver_options, handle_opt, &args, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    if (xp_opts_finish(&o)) return 2;
    const int gpu = !strcmp(o.backend, "cuda");
    int nrec = 0, nw = 0;
    char **recs = xp_recipe_names(o.recipes, &nrec);
    if (!recs) return 2;
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;

    xp_table *t = xp_table_new("packed_memory", "the training call on packed and on padded documents");
    add_columns(t);
    int rc = 1;
    int64_t total_differing = 0;
    xp_progress pr;
    xp_progress_init(&pr, "packed_memory", (long)nw * nrec, o.quiet);
    for (int wi = 0; wi < nw; wi++) {
        const xp_workload *w = &ws[wi];
        xp_workload pad;
        padded_layout(w, &pad);
        xp_inputs in;
        xp_input_cfg icfg = xp_opts_inputs(&o);
        xp_inputs_make(w, o.seed, &icfg, &in);
        xp_result res[2];
        xp_result_alloc(&res[0], w);
        xp_result_alloc(&res[1], w);
        for (int ri = 0; ri < nrec; ri++) {
            flamia_recipe r;
            pm_cost cost[2];
            if (flamia_recipe_preset(recs[ri], &r) != FLAMIA_OK) {
                fprintf(stderr, "error: recipe %s: %s\n", recs[ri], flamia_last_error());
                goto next_fail;
            }
            for (int l = 0; l < 2; l++) {
                const xp_workload *lay = l ? &pad : w;
                const int bad = gpu ? pm_gpu_run(&r, w, lay, &in, args.warmup, args.iters, &res[l], &cost[l])
                                    : cpu_run(&r, w, lay, &in, &res[l], &cost[l]);
                if (bad) goto next_fail;
            }
            if (cost[0].out_of_memory) {
                fprintf(stderr, "error: %s (%s): the packed layout does not fit on the GPU\n", w->name, recs[ri]);
                goto next_fail;
            }
            xp_row_begin(t);
            xp_set_s(t, "workload", w->name);
            xp_set_s(t, "recipe", recs[ri]);
            xp_set_i(t, "num_docs", w->num_docs);
            xp_set_i(t, "max_len", w->max_len);
            for (int l = 0; l < 2; l++) set_cost(t, l, l ? &pad : w, &cost[l]);
            const int cmp = !cost[1].out_of_memory;
            float *pa[NOUT], *pb[NOUT];
            size_t width[NOUT];
            outputs_of(&res[0], w, pa, width);
            outputs_of(&res[1], w, pb, width);
            for (int i = 0; i < NOUT; i++) {
                const size_t n = (size_t)w->total_tokens * width[i];
                const int64_t diff = cmp ? differing(pa[i], pb[i], n) : -1;
                char col[32];
                snprintf(col, sizeof col, "change_%s", kOuts[i]);
                xp_set_f(t, col, cmp ? xp_rel_fro_change(pb[i], pa[i], 0, w->total_tokens, 1, (int)width[i]) : NAN);
                snprintf(col, sizeof col, "differing_%s", kOuts[i]);
                xp_set_i(t, col, diff);
                if (diff > 0) {
                    total_differing += diff;
                    fprintf(stderr, "packed_memory: %s (%s): %s differs at %lld real-token elements between the "
                                    "padded and the packed layout\n",
                            w->name, recs[ri], kOuts[i], (long long)diff);
                }
            }
            xp_row_end(t);
            char what[160];
            snprintf(what, sizeof what, "%.60s %s", w->name, recs[ri]);
            xp_progress_step(&pr, what);
        }
        xp_result_free(&res[0]);
        xp_result_free(&res[1]);
        xp_inputs_free(&in);
        xp_workload_free(&pad);
        continue;
    next_fail:
        xp_result_free(&res[0]);
        xp_result_free(&res[1]);
        xp_inputs_free(&in);
        xp_workload_free(&pad);
        goto done;
    }
    xp_progress_end(&pr);
    rc = 0;
done:
    if (rc == 0) {
        xp_out *f = xp_out_open(&o, argc, argv);
        if (!f) rc = 1;
        else {
            xp_out_attr_s(f, "workloads", o.workloads);
            xp_out_attr_f(f, "iters", args.iters);
            xp_out_attr_f(f, "warmup", args.warmup);
            xp_out_attr_i(f, "total_differing", total_differing);
            xp_out_attr_s(f, "padded_layout", "each document at the start of a slot of max_len tokens, the rest zero");
            xp_out_table(f, t);
            rc = xp_out_commit(f) ? 1 : 0;
        }
    }
    xp_table_free(t);
    xp_strv_free(recs);
    xp_workloads_free(ws, nw);
    return rc;
}
