/*
 * accuracy - O, dQ, dK, dV of every recipe against the FP64 textbook attention.
 *
 * Paper item: the accuracy paragraph (MXFP8 O/dQ cosine 0.9988/0.9979, NVFP4 hybrid
 * 0.9920/0.9906; PAPER.md "Numbers to reproduce") and the "O/dQ cosine vs FP32 reference"
 * secondary metric. On the CPU the workloads are shrunk with --scale (and --heads).
 *
 * For each workload: one FP64 forward + backward (flamia_ref64_*) on the same inputs, then
 * for each recipe the CPU reference forward + backward (flamia_ref_forward /
 * flamia_ref_backward_ex): cosine and relative L2 error of O, dQ, dK, dV over all tokens
 * and heads, plus the dS statistics of the backward and the reference's wall time.
 *
 * Tables: accuracy (workload x recipe), summary (per recipe: min / mean cosine).
 * Example: accuracy --out data/runs/cpu/accuracy.h5 --scale 1/16 --heads 4
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

static void usage(const xp_opts *d) {
    printf("usage: accuracy --out FILE.h5 [options]\n"
           "Cosine and relative L2 of O, dQ, dK, dV vs FP64 for every recipe and workload.\n");
    xp_print_common_usage(d);
}

/* The file as it stands: the rows of the first ndone workloads and their per-recipe
 * summary. Written after every workload (FILE.h5 replaced whole: xp_out_commit renames a
 * finished temporary), so a run stopped by a time limit keeps what it finished;
 * attribute complete = 1 only on the last write, workloads = those in the file. */
static int write_results(const xp_opts *o, int argc, char **argv, xp_table *t, char **rl, int nr,
                         const xp_workload *ws, int ndone, int complete) {
    static const char *outs[4] = {"o", "dq", "dk", "dv"};
    char name[64], desc[128];
    xp_table *s = xp_table_new("summary", "per recipe over all workloads");
    xp_table_col(s, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(s, "workloads", XP_I64, "1", "workloads");
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "mean_cos_%s", outs[k]);
        snprintf(desc, sizeof desc, "mean cosine of %s over workloads", outs[k]);
        xp_table_col(s, name, XP_F64, "1", desc);
        snprintf(name, sizeof name, "min_cos_%s", outs[k]);
        snprintf(desc, sizeof desc, "min cosine of %s over workloads", outs[k]);
        xp_table_col(s, name, XP_F64, "1", desc);
    }
    for (int ri = 0; ri < nr; ri++) {
        double sum[4] = {0}, mn[4] = {2, 2, 2, 2};
        int n = 0;
        for (size_t row = 0; row < xp_table_rows(t); row++) {
            if (strcmp(xp_get_s(t, "recipe", row), rl[ri])) continue;
            n++;
            for (int k = 0; k < 4; k++) {
                snprintf(name, sizeof name, "cos_%s", outs[k]);
                double v = xp_get_f(t, name, row);
                sum[k] += v;
                mn[k] = fmin(mn[k], v);
            }
        }
        xp_row_begin(s);
        xp_set_s(s, "recipe", rl[ri]);
        xp_set_i(s, "workloads", n);
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "mean_cos_%s", outs[k]);
            xp_set_f(s, name, n ? sum[k] / n : NAN);
            snprintf(name, sizeof name, "min_cos_%s", outs[k]);
            xp_set_f(s, name, n ? mn[k] : NAN);
        }
        xp_row_end(s);
    }

    size_t len = 1;
    for (int i = 0; i < ndone; i++) len += strlen(ws[i].name) + 1;
    char *done = calloc(len, 1); /* the names, comma-separated */
    for (int i = 0; done && i < ndone; i++) {
        if (i) strcat(done, ",");
        strcat(done, ws[i].name);
    }
    xp_out *f = done ? xp_out_open(o, argc, argv) : NULL;
    if (!f) {
        free(done);
        xp_table_free(s);
        return 1;
    }
    xp_out_attr_s(f, "workloads", done);
    free(done);
    xp_out_attr_s(f, "workloads_requested", o->workloads);
    xp_out_attr_i(f, "complete", complete);
    xp_out_table(f, s);
    xp_out_table(f, t);
    const int rc = xp_out_commit(f);
    xp_table_free(s);
    return rc;
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("accuracy");
    o.backends_supported = 3; /* cpu and cuda */
    o.workloads = "4x4096,16x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024";
    o.scale = 1.0 / 16;
    int parsed = xp_parse_options(&o, argc, argv, NULL, NULL, NULL, usage); /* common options only */
    if (parsed) return parsed == 1 ? 0 : 2;
    if (xp_opts_finish(&o)) return 2;
    if (!o.recipes && !strcmp(o.backend, "cuda")) o.recipes = "bf16,mxfp8,mxfp8-exact"; /* the GPU's recipes */

    int nw, nr;
    char **rl = xp_recipe_names(o.recipes, &nr);
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;

    xp_table *t = xp_table_new("accuracy", "recipe outputs vs FP64 textbook attention");
    xp_table_col(t, "workload", XP_STR, "", "workload");
    xp_table_col(t, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(t, "total_tokens", XP_I64, "tokens", "packed tokens after --scale");
    xp_table_col(t, "num_docs", XP_I64, "docs", "documents");
    xp_table_col(t, "heads_q", XP_I64, "heads", "query heads");
    xp_table_col(t, "heads_kv", XP_I64, "heads", "key/value heads");
    static const char *outs[4] = {"o", "dq", "dk", "dv"};
    char name[64], desc[128];
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "cos_%s", outs[k]);
        snprintf(desc, sizeof desc, "cosine similarity of %s with FP64", outs[k]);
        xp_table_col(t, name, XP_F64, "1", desc);
    }
    for (int k = 0; k < 4; k++) {
        snprintf(name, sizeof name, "rel_l2_%s", outs[k]);
        snprintf(desc, sizeof desc, "||%s - FP64|| / ||FP64||", outs[k]);
        xp_table_col(t, name, XP_F64, "1", desc);
    }
    xp_table_col(t, "ds_zero_rate", XP_F64, "1", "nonzero dS entries flushed to zero by quantization");
    xp_table_col(t, "ds_norm_err", XP_F64, "1", "||dS_q - dS|| / ||dS||");
    xp_table_col(t, "p_mismatch", XP_F64, "1", "fraction of P codes differing forward vs backward");
    xp_table_col(t, "ref_seconds", XP_F64, "s", "wall time of the recipe's forward + backward (CPU reference, or the kernels with --backend cuda, copies included)");

    xp_progress pr;
    xp_progress_init(&pr, "accuracy", (long)nw * (nr + 1), o.quiet);
    char what[256];
    for (int wi = 0; wi < nw; wi++) {
        const xp_workload *w = &ws[wi];
        xp_inputs in;
        xp_result64 g;
        if (xp_inputs_with_truth(&o, w, &in, &g)) return 1;
        snprintf(what, sizeof what, "%s fp64 (%d tokens)", w->name, w->total_tokens);
        xp_progress_step(&pr, what);
        xp_result r;
        xp_result_alloc(&r, w);
        for (int ri = 0; ri < nr; ri++) {
            flamia_recipe rc;
            flamia_recipe_preset(rl[ri], &rc);
            double t0 = xp_now();
            if (xp_run(&o, &rc, w, &in, &r) < 0) return 1;
            double sec = xp_now() - t0;
            const float *a[4] = {r.o, r.dq, r.dk, r.dv};
            const double *b[4] = {g.o, g.dq, g.dk, g.dv};
            int H[4] = {w->heads_q, w->heads_q, w->heads_kv, w->heads_kv};
            xp_row_begin(t);
            xp_set_s(t, "workload", w->name);
            xp_set_s(t, "recipe", rl[ri]);
            xp_set_i(t, "total_tokens", w->total_tokens);
            xp_set_i(t, "num_docs", w->num_docs);
            xp_set_i(t, "heads_q", w->heads_q);
            xp_set_i(t, "heads_kv", w->heads_kv);
            for (int k = 0; k < 4; k++) {
                snprintf(name, sizeof name, "cos_%s", outs[k]);
                xp_set_f(t, name, xp_cosine_f64(a[k], b[k], 0, w->total_tokens, H[k], w->head_dim));
                snprintf(name, sizeof name, "rel_l2_%s", outs[k]);
                xp_set_f(t, name, xp_rel_l2_f64(a[k], b[k], 0, w->total_tokens, H[k], w->head_dim));
            }
            xp_set_f(t, "ds_zero_rate", r.stats.ds_nonzero > 0 ? r.stats.ds_flushed / r.stats.ds_nonzero : 0);
            xp_set_f(t, "ds_norm_err", r.stats.ds_norm_err);
            xp_set_f(t, "p_mismatch", r.stats.p_codes > 0 ? r.stats.p_mismatch / r.stats.p_codes : 0);
            xp_set_f(t, "ref_seconds", sec);
            xp_row_end(t);
            snprintf(what, sizeof what, "%s %s", w->name, rl[ri]);
            xp_progress_step(&pr, what);
        }
        xp_result_free(&r);
        xp_result64_free(&g);
        xp_inputs_free(&in);
        if (write_results(&o, argc, argv, t, rl, nr, ws, wi + 1, wi == nw - 1)) return 1;
    }
    xp_progress_end(&pr);

    xp_table_free(t);
    xp_workloads_free(ws, nw);
    xp_strv_free(rl);
    return 0;
}
