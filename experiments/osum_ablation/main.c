/*
 * osum_ablation - the forward's FP32 O sum: its interval against accuracy and time (GPU only).
 *
 * Not a paper item: an ablation of this implementation's fix for the FP8 tensor core's
 * accumulation (docs/numerics.md 8). FP8 `wgmma` keeps about 14 bits when it adds a new
 * P V product into the running O, so small new terms are truncated against a large O and a
 * long row's O comes out low when V has a nonzero mean. The sm90 forward adds its
 * accumulator into an FP32 sum every N key tiles (flamia_cuda_set_o_sum_interval; default
 * 4, 0 = never). For each workload, recipe and interval this driver measures
 *   - the bias: O with V = 1 exactly (then every row's exact O is 1, whatever Q and K are),
 *     mean(O - 1) over the rows at document positions [0, 512), [512, 2048), >= 2048, and
 *     the most negative O - 1;
 *   - the time: the forward alone on plain randn Q, K, V (quantized once), median of
 *     --iters CUDA-event timings after --warmup calls; causal-discounted TFLOP/s.
 *
 * Tables: osum (workload x recipe x interval).
 * Example: osum_ablation --backend cuda --out data/runs/cuda/osum_ablation_gpu.h5
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

enum { NBANDS = 3 };
static const int kBandLo[NBANDS] = {0, 512, 2048};
static const char *kBandCol[NBANDS] = {"bias_pos_0_512", "bias_pos_512_2048", "bias_pos_ge_2048"};
static const char *kBandWhat[NBANDS] = {"positions [0, 512)", "positions [512, 2048)", "positions >= 2048"};

/* mean(O - 1) per position band (NaN for an empty band) and min(O - 1), O of V = 1 */
static void o_bias(const xp_workload *w, const float *o, double bias[NBANDS], double *minv) {
    double sum[NBANDS] = {0}, cnt[NBANDS] = {0};
    const size_t row = (size_t)w->heads_q * (size_t)w->head_dim;
    *minv = INFINITY;
    for (int d = 0; d < w->num_docs; d++) {
        for (int t = w->cu_seqlens[d]; t < w->cu_seqlens[d + 1]; t++) {
            const int pos = t - w->cu_seqlens[d];
            int b = NBANDS - 1;
            while (pos < kBandLo[b]) b--;
            const float *r = o + (size_t)t * row;
            for (size_t i = 0; i < row; i++) {
                const double e = (double)r[i] - 1.0;
                sum[b] += e;
                if (e < *minv) *minv = e;
            }
            cnt[b] += (double)row;
        }
    }
    for (int b = 0; b < NBANDS; b++) bias[b] = cnt[b] > 0 ? sum[b] / cnt[b] : NAN;
}

/* --intervals: each value tried on flamia_cuda_set_o_sum_interval, the authority on what it
 * takes (0 and powers of two from 2 to 64), and the setting restored */
static int parse_intervals(const char *s, int **out, int *n) {
    char **v = xp_split_list(s, n);
    if (!v || *n == 0) {
        fprintf(stderr, "error: --intervals: empty list\n");
        xp_strv_free(v);
        return -1;
    }
    *out = xp_xmalloc(sizeof(int) * (size_t)*n);
    const int initial = flamia_cuda_o_sum_interval();
    for (int i = 0; i < *n; i++) {
        int x;
        if (xp_parse_int("--intervals", v[i], -1000000, 1000000, &x)) goto bad;
        if (flamia_cuda_set_o_sum_interval(x) != FLAMIA_OK) {
            fprintf(stderr, "error: --intervals: %s\n", flamia_last_error());
            goto bad;
        }
        (*out)[i] = x;
    }
    flamia_cuda_set_o_sum_interval(initial);
    xp_strv_free(v);
    return 0;
bad:
    flamia_cuda_set_o_sum_interval(initial);
    xp_strv_free(v);
    free(*out);
    *out = NULL;
    return -1;
}

static void usage(const xp_opts *d) {
    printf("usage: osum_ablation --backend cuda --out FILE.h5 [options]\n"
           "The sm90 forward's FP32 O sum every N key tiles: O's bias with V = 1 by document\n"
           "position, and the forward's time, per interval (GPU only).\n"
           "Driver options:\n"
           "  --intervals LIST     comma list of intervals in key tiles: 0 (no sum) or powers of\n"
           "                       two from 2 to 64 (default 0,2,4,8,16)\n"
           "  --warmup N           untimed forward calls before timing (default 5)\n"
           "  --iters N            timed forward calls, median reported (default 30)\n");
    xp_print_common_usage(d);
}

/* the driver's own options */
enum { O_INTERVALS = 1, O_WARMUP, O_ITERS };
static const struct option driver_options[] = {{"intervals", required_argument, 0, O_INTERVALS},
                                               {"warmup", required_argument, 0, O_WARMUP},
                                               {"iters", required_argument, 0, O_ITERS},
                                               {0, 0, 0, 0}};
typedef struct {
    const char *intervals;
    int warmup, iters;
} driver_args;

static int handle_opt(int c, const char *arg, void *ctx) {
    driver_args *a = ctx;
    switch (c) {
    case O_INTERVALS: a->intervals = arg; return 0;
    case O_WARMUP: return xp_parse_int("--warmup", arg, 0, 100000, &a->warmup);
    case O_ITERS: return xp_parse_int("--iters", arg, 1, 100000, &a->iters);
    }
    return 0;
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("osum_ablation");
    o.backend = "cuda";
    o.backends_supported = 2;
    o.workloads = "16x4096,2x8192";
    o.recipes = "mxfp8,mxfp8-exact";
    o.scale = 1.0;
    o.outliers = 0;
    driver_args args = {.intervals = "0,2,4,8,16", .warmup = 5, .iters = 30};
    int parsed = xp_parse_options(&o, argc, argv, driver_options, handle_opt, &args, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    int *iv = NULL, niv = 0;
    if (parse_intervals(args.intervals, &iv, &niv)) return 2;
    if (xp_opts_finish(&o)) return 2;
    int nrec = 0;
    char **recs = xp_recipe_names(o.recipes, &nrec);
    if (!recs) return 2;
    int nw;
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;

    xp_table *t = xp_table_new("osum", "the forward's O sum interval: O's bias with V = 1, and the forward's time");
    xp_table_col(t, "workload", XP_STR, "", "workload");
    xp_table_col(t, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(t, "interval", XP_I64, "key tiles", "O's accumulator added into its FP32 sum every this many key tiles (0: never)");
    char desc[128];
    for (int b = 0; b < NBANDS; b++) {
        snprintf(desc, sizeof desc, "mean(O - 1) with V = 1 over the rows at document %s", kBandWhat[b]);
        xp_table_col(t, kBandCol[b], XP_F64, "1", desc);
    }
    xp_table_col(t, "o_min", XP_F64, "1", "most negative O - 1 with V = 1");
    xp_table_col(t, "fwd_ms", XP_F64, "ms", "forward alone, randn Q, K, V: median of the timed calls");
    xp_table_col(t, "fwd_tflops", XP_F64, "TFLOP/s", "causal-discounted: 4 d (causal pairs) heads_q / time");

    const int initial = flamia_cuda_o_sum_interval();
    int rc = 1;
    xp_progress pr;
    xp_progress_init(&pr, "osum_ablation", (long)nw * nrec * niv, o.quiet);
    char what[192];
    for (int wi = 0; wi < nw; wi++) {
        const xp_workload *w = &ws[wi];
        xp_inputs in, ones;
        xp_input_cfg icfg = xp_opts_inputs(&o);
        xp_inputs_make(w, o.seed, &icfg, &in);
        xp_inputs_copy(&in, &ones);
        for (size_t i = 0; i < ones.nkv; i++) ones.v[i] = 1.0f;
        float *out = xp_xmalloc(sizeof(float) * in.nq);
        const double flops = 4.0 * w->head_dim * xp_workload_causal_pairs(w) * w->heads_q;
        for (int ri = 0; ri < nrec; ri++) {
            flamia_recipe r;
            if (flamia_recipe_preset(recs[ri], &r) != FLAMIA_OK) {
                fprintf(stderr, "error: recipe %s: %s\n", recs[ri], flamia_last_error());
                goto done;
            }
            /* both input sets on the GPU, quantized once; only the interval changes below */
            xp_cuda_fwd *frand = xp_cuda_fwd_open(&r, w, &in), *fones = frand ? xp_cuda_fwd_open(&r, w, &ones) : NULL;
            if (!fones) {
                xp_cuda_fwd_close(frand);
                goto done;
            }
            for (int k = 0; k < niv; k++) {
                double ms, none, bias[NBANDS], minv;
                const int bad = flamia_cuda_set_o_sum_interval(iv[k]) != FLAMIA_OK;
                if (bad) fprintf(stderr, "error: flamia_cuda_set_o_sum_interval(%d): %s\n", iv[k], flamia_last_error());
                if (bad || xp_cuda_fwd_run(frand, args.warmup, args.iters, &ms) ||
                    xp_cuda_fwd_run(fones, 0, 0, &none) || xp_cuda_fwd_output(fones, out)) {
                    xp_cuda_fwd_close(frand);
                    xp_cuda_fwd_close(fones);
                    goto done;
                }
                o_bias(w, out, bias, &minv);
                xp_row_begin(t);
                xp_set_s(t, "workload", w->name);
                xp_set_s(t, "recipe", recs[ri]);
                xp_set_i(t, "interval", iv[k]);
                for (int b = 0; b < NBANDS; b++) xp_set_f(t, kBandCol[b], bias[b]);
                xp_set_f(t, "o_min", minv);
                xp_set_f(t, "fwd_ms", ms);
                xp_set_f(t, "fwd_tflops", flops / (ms * 1e-3) / 1e12);
                xp_row_end(t);
                snprintf(what, sizeof what, "%.60s %s every %d", w->name, recs[ri], iv[k]);
                xp_progress_step(&pr, what);
            }
            xp_cuda_fwd_close(frand);
            xp_cuda_fwd_close(fones);
        }
        free(out);
        xp_inputs_free(&ones);
        xp_inputs_free(&in);
    }
    xp_progress_end(&pr);
    rc = 0;
done:
    flamia_cuda_set_o_sum_interval(initial);
    if (rc == 0) {
        xp_out *f = xp_out_open(&o, argc, argv);
        if (!f) rc = 1;
        else {
            xp_out_attr_s(f, "workloads", o.workloads);
            xp_out_attr_s(f, "intervals", args.intervals);
            xp_out_attr_f(f, "iters", args.iters);
            xp_out_attr_f(f, "warmup", args.warmup);
            xp_out_attr_s(f, "inputs_bias", "q, k ~ N(0,1) (--outliers as given), v = 1 exactly: exact O = 1 in every row");
            xp_out_table(f, t);
            rc = xp_out_commit(f) ? 1 : 0;
        }
    }
    xp_table_free(t);
    xp_strv_free(recs);
    xp_workloads_free(ws, nw);
    free(iv);
    return rc;
}
