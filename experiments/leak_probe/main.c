/*
 * leak_probe - causal leakage through quantization scales.
 *
 * Paper item: Table B (leak probe: max relative change of earlier positions' O and dQ
 * when future positions are perturbed so that they raise their scale group's max), and
 * Table D's cross-document row (one document scaled x1e4: other documents' dK cosine
 * 0.99151 with tensor-wide scales vs 0.99805 with local scales). PAPER.md "Causal-safe
 * scaling"; docs/numerics.md section 6 states what each recipe must give: bf16 and
 * mxfp8-exact exactly 0, mxfp8 a small residual (E4M3 subnormals re-round), mx-floor and
 * fp8-tensor clearly non-zero.
 *
 * Within-document probe. For a document and a position t inside it (t not on a 32-token
 * block start, so earlier tokens share t's block), the inputs Q, K, V, dO of every head are
 * changed at positions >= t only, by one of these kinds:
 *   keys2x  the paper's probe: only the future KEY position t is changed (K and V), scaled
 *           so its max |x| is 2x its token block's max (per tensor and head)
 *   max2x   the same scaling applied to Q, K, V and dO of token t:
 *           the block exponent rises by one, the smallest change that moves a scale
 *   x1e4    token t multiplied by 1e4
 *   spike   one element of token t (same channel for all heads) set to 1e4 x the block max
 *   extreme every element of positions >= t set to +-1e9 (random signs): as large as the
 *           reference's FP32 arithmetic allows without overflow (scores ~1e20, dK ~1e30),
 *           so no NaN/Inf appears and nothing is rejected as non-finite
 * and O and dQ of positions [doc start, t) of the same document are compared with the
 * unperturbed run: max over (token, head) of ||delta||_2 / ||row||_2 (o_rel, dq_rel: the
 * strict reading; one BF16 rounding flip of a large element already gives ~1e-3), the
 * Frobenius relative change over all those rows (o_fro, dq_fro: the size of the leak) and
 * the fraction of elements whose bits changed. Several trials (documents, positions);
 * the summary takes the max.
 * Cross-document probe. Every token of one document (the longest) is multiplied by 1e4;
 * all other documents' O, dQ, dK are compared with the unperturbed run, and their dK
 * cosine with the FP64 reference (unperturbed and perturbed).
 *
 * Tables: probe (one row per workload, recipe, kind, trial), summary (recipe x kind),
 * cross_doc (workload x recipe).
 * Example: leak_probe --out data/runs/cpu/leak_probe.h5 --heads 4 --trials 3
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

enum { K_KEYS2X, K_MAX2X, K_X1E4, K_SPIKE, K_EXTREME, NKINDS };
static const char *kind_names[NKINDS] = {"keys2x", "max2x", "x1e4", "spike", "extreme"};

typedef struct {
    const xp_workload *w;
    int start, end; /* document tokens [start, end) */
} docref;

/* max |x| of head h over tokens [a, b) of a [T][H][D] tensor */
static float block_amax(const float *x, int a, int b, int H, int D, int h) {
    float m = 0;
    for (int t = a; t < b; t++)
        for (int d = 0; d < D; d++) {
            float v = fabsf(x[((size_t)t * H + h) * D + d]);
            if (v > m) m = v;
        }
    return m;
}

/* applies one kind at doc-local position t to one tensor */
static void perturb_tensor(float *x, int H, int D, docref dr, int t, int kind, int spike_ch, xp_rng *rng) {
    int g = dr.start + t;
    int b0 = dr.start + (t / 32) * 32, b1 = b0 + 32 < dr.end ? b0 + 32 : dr.end;
    for (int h = 0; h < H; h++) {
        float *row = x + ((size_t)g * H + h) * D;
        float bm = block_amax(x, b0, b1, H, D, h);
        float rm = block_amax(x, g, g + 1, H, D, h);
        if (bm == 0) bm = 1;
        switch (kind) {
        case K_KEYS2X:
        case K_MAX2X: {
            float f = rm > 0 ? 2 * bm / rm : 0;
            if (rm > 0)
                for (int d = 0; d < D; d++) row[d] *= f;
            else
                row[0] = 2 * bm;
            break;
        }
        case K_X1E4:
            for (int d = 0; d < D; d++) row[d] *= 1e4f;
            break;
        case K_SPIKE: row[spike_ch] = (row[spike_ch] < 0 ? -1e4f : 1e4f) * bm; break;
        case K_EXTREME:
            for (int tt = g; tt < dr.end; tt++)
                for (int d = 0; d < D; d++)
                    x[((size_t)tt * H + h) * D + d] = (xp_rng_u64(rng) & 1) ? 1e9f : -1e9f;
            break;
        }
    }
}

static void usage(const xp_opts *d) {
    printf("usage: leak_probe --out FILE.h5 [options]\n"
           "Perturbs future positions and measures the change of earlier O and dQ per recipe\n"
           "(Table B), plus the cross-document x1e4 probe.\n"
           "Driver options:\n"
           "  --trials N           (document, position) trials per kind (default 3)\n"
           "  --kinds LIST         subset of keys2x,max2x,x1e4,spike,extreme (default all)\n"
           "  --no-cross           skip the cross-document probe\n");
    xp_print_common_usage(d);
}

/* the driver's own options */
enum { O_TRIALS = 1, O_KINDS, O_NOCROSS };
static const struct option driver_options[] = {{"trials", required_argument, 0, O_TRIALS},
                                               {"kinds", required_argument, 0, O_KINDS},
                                               {"no-cross", no_argument, 0, O_NOCROSS},
                                               {0, 0, 0, 0}};
typedef struct {
    int trials, cross, kind_on[NKINDS];
} driver_args;

/* --kinds LIST: exactly the kinds listed */
static int parse_kinds(const char *list, int *kind_on) {
    memset(kind_on, 0, sizeof(int) * NKINDS);
    char **v = xp_split_list(list, NULL);
    for (char **p = v; *p; p++) {
        int found = 0;
        for (int k = 0; k < NKINDS; k++)
            if (!strcmp(*p, kind_names[k])) kind_on[k] = found = 1;
        if (!found) {
            fprintf(stderr, "error: --kinds: unknown kind '%s' (keys2x max2x x1e4 spike extreme)\n", *p);
            xp_strv_free(v);
            return -1;
        }
    }
    xp_strv_free(v);
    return 0;
}

static int handle_opt(int c, const char *arg, void *ctx) {
    driver_args *a = ctx;
    switch (c) {
    case O_TRIALS: return xp_parse_int("--trials", arg, 1, 1000, &a->trials);
    case O_NOCROSS: a->cross = 0; return 0;
    case O_KINDS: return parse_kinds(arg, a->kind_on);
    }
    return 0;
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("leak_probe");
    o.backends_supported = 3; /* cpu and cuda */
    o.workloads = "160+96+45+130+33";
    driver_args args = {.trials = 3, .cross = 1};
    for (int k = 0; k < NKINDS; k++) args.kind_on[k] = 1; /* every kind unless --kinds says otherwise */
    int parsed = xp_parse_options(&o, argc, argv, driver_options, handle_opt, &args, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    if (xp_opts_finish(&o)) return 2;
    if (!o.recipes && !strcmp(o.backend, "cuda")) o.recipes = "bf16,mxfp8,mxfp8-exact"; /* the GPU's recipes */

    int nw, nr, nk = 0;
    char **wl = xp_split_list(o.workloads, &nw);
    char **rl = xp_recipe_names(o.recipes, &nr);
    for (int k = 0; k < NKINDS; k++) nk += args.kind_on[k];
    xp_workload *ws = xp_xmalloc(sizeof(xp_workload) * (size_t)nw);
    char err[256];
    for (int i = 0; i < nw; i++) {
        if (xp_workload_make(wl[i], o.scale, o.heads, &ws[i], err, sizeof err)) {
            fprintf(stderr, "error: %s\n", err);
            return 2;
        }
        int ok = 0;
        for (int d = 0; d < ws[i].num_docs; d++) ok |= ws[i].cu_seqlens[d + 1] - ws[i].cu_seqlens[d] >= 2;
        if (!ok) {
            fprintf(stderr, "error: workload '%s' has no document of 2 or more tokens: nothing to probe\n",
                    wl[i]);
            return 2;
        }
        if (args.cross && ws[i].num_docs < 2) {
            fprintf(stderr, "error: workload '%s' has one document: the cross-document probe needs two "
                            "(or pass --no-cross)\n", wl[i]);
            return 2;
        }
    }

    xp_table *pt = xp_table_new("probe", "within-document leak probe, one row per trial");
    xp_table_col(pt, "workload", XP_STR, "", "workload");
    xp_table_col(pt, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(pt, "kind", XP_STR, "", "perturbation kind (keys2x, max2x, x1e4, spike, extreme)");
    xp_table_col(pt, "trial", XP_I64, "1", "trial index");
    xp_table_col(pt, "doc", XP_I64, "1", "perturbed document");
    xp_table_col(pt, "position", XP_I64, "tokens", "first perturbed position t, local to the document");
    xp_table_col(pt, "measured_tokens", XP_I64, "tokens", "earlier positions measured (t of them)");
    xp_table_col(pt, "o_rel", XP_F64, "1", "max over earlier (token, head) rows of ||dO_row||/||O_row||");
    xp_table_col(pt, "dq_rel", XP_F64, "1", "same for dQ");
    xp_table_col(pt, "o_fro", XP_F64, "1", "||dO|| / ||O|| over all earlier (token, head) rows (Frobenius)");
    xp_table_col(pt, "dq_fro", XP_F64, "1", "same for dQ");
    xp_table_col(pt, "o_changed", XP_F64, "1", "fraction of earlier O elements whose bits changed");
    xp_table_col(pt, "dq_changed", XP_F64, "1", "fraction of earlier dQ elements whose bits changed");
    xp_table_col(pt, "status", XP_STR, "", "ok, or why the perturbed run failed");

    xp_table *cd = xp_table_new("cross_doc", "one document x1e4: effect on the other documents");
    xp_table_col(cd, "workload", XP_STR, "", "workload");
    xp_table_col(cd, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(cd, "doc", XP_I64, "1", "perturbed document (the longest)");
    xp_table_col(cd, "factor", XP_F64, "1", "multiplier of the perturbed document's Q, K, V, dO");
    xp_table_col(cd, "o_rel", XP_F64, "1", "max row relative change of other documents' O");
    xp_table_col(cd, "dq_rel", XP_F64, "1", "same for dQ");
    xp_table_col(cd, "dk_rel", XP_F64, "1", "same for dK");
    xp_table_col(cd, "dk_cos_base", XP_F64, "1", "other documents' dK cosine vs FP64, unperturbed");
    xp_table_col(cd, "dk_cos_perturbed", XP_F64, "1",
                 "other documents' dK cosine vs FP64, one document x1e4 (0: their dK flushed to zero)");
    xp_table_col(cd, "status", XP_STR, "", "ok, or why the perturbed run failed");

    long total = (long)nw * nr * (1 + (long)nk * args.trials + args.cross) + (args.cross ? nw : 0);
    xp_progress pr;
    xp_progress_init(&pr, "leak_probe", total, o.quiet);
    char what[256];
    for (int wi = 0; wi < nw; wi++) {
        const xp_workload *w = &ws[wi];
        int Hq = w->heads_q, Hkv = w->heads_kv, D = w->head_dim;
        xp_inputs base;
        xp_input_cfg icfg = xp_opts_inputs(&o);
        xp_inputs_make(w, o.seed, &icfg, &base);
        /* trial positions, the same for every recipe and kind */
        int *tdoc = xp_xmalloc(sizeof(int) * (size_t)args.trials),
            *tpos = xp_xmalloc(sizeof(int) * (size_t)args.trials);
        xp_rng rng;
        xp_rng_seed(&rng, o.seed, 77);
        int d = (int)(xp_rng_u64(&rng) % (uint64_t)w->num_docs);
        for (int tr = 0; tr < args.trials; tr++) {
            int L;
            while ((L = w->cu_seqlens[d + 1] - w->cu_seqlens[d]) < 2) d = (d + 1) % w->num_docs;
            int t = 1 + (int)(xp_rng_u64(&rng) % (uint64_t)(L - 1));
            for (int k = 0; k < 16 && t % 32 == 0; k++) t = 1 + (int)(xp_rng_u64(&rng) % (uint64_t)(L - 1));
            tdoc[tr] = d;
            tpos[tr] = t;
            d = (d + 1) % w->num_docs;
        }
        int longest = 0;
        for (int dd = 0; dd < w->num_docs; dd++)
            if (w->cu_seqlens[dd + 1] - w->cu_seqlens[dd] > w->cu_seqlens[longest + 1] - w->cu_seqlens[longest])
                longest = dd;
        xp_result64 r64;
        int have64 = 0;
        if (args.cross) {
            if (xp_run_ref64(&o, w, &base, &r64)) return 1;
            have64 = 1;
            snprintf(what, sizeof what, "%s fp64", w->name);
            xp_progress_step(&pr, what);
        }
        for (int ri = 0; ri < nr; ri++) {
            flamia_recipe rc;
            flamia_recipe_preset(rl[ri], &rc);
            xp_result r0, r1;
            xp_result_alloc(&r0, w);
            xp_result_alloc(&r1, w);
            if (xp_run(&o, &rc, w, &base, &r0) < 0) return 1;
            snprintf(what, sizeof what, "%s %s baseline", w->name, rl[ri]);
            xp_progress_step(&pr, what);
            for (int k = 0; k < NKINDS; k++) {
                if (!args.kind_on[k]) continue;
                for (int tr = 0; tr < args.trials; tr++) {
                    docref dr = {w, w->cu_seqlens[tdoc[tr]], w->cu_seqlens[tdoc[tr] + 1]};
                    int t = tpos[tr];
                    xp_inputs p;
                    xp_inputs_copy(&base, &p);
                    xp_rng prng;
                    xp_rng_seed(&prng, o.seed, 1000 + (uint64_t)tr);
                    int ch = (int)(xp_rng_u64(&prng) % (uint64_t)D);
                    if (k != K_KEYS2X) perturb_tensor(p.q, Hq, D, dr, t, k, ch, &prng);
                    perturb_tensor(p.k, Hkv, D, dr, t, k, ch, &prng);
                    perturb_tensor(p.v, Hkv, D, dr, t, k, ch, &prng);
                    if (k != K_KEYS2X) perturb_tensor(p.dout, Hq, D, dr, t, k, ch, &prng);
                    int bad = xp_run(&o, &rc, w, &p, &r1) < 0;
                    int a = dr.start, b = dr.start + t;
                    xp_row_begin(pt);
                    xp_set_s(pt, "workload", w->name);
                    xp_set_s(pt, "recipe", rl[ri]);
                    xp_set_s(pt, "kind", kind_names[k]);
                    xp_set_i(pt, "trial", tr);
                    xp_set_i(pt, "doc", tdoc[tr]);
                    xp_set_i(pt, "position", t);
                    xp_set_i(pt, "measured_tokens", t);
                    if (!bad) {
                        xp_set_f(pt, "o_rel", xp_max_row_rel_change(r1.o, r0.o, a, b, Hq, D));
                        xp_set_f(pt, "dq_rel", xp_max_row_rel_change(r1.dq, r0.dq, a, b, Hq, D));
                        xp_set_f(pt, "o_fro", xp_rel_fro_change(r1.o, r0.o, a, b, Hq, D));
                        xp_set_f(pt, "dq_fro", xp_rel_fro_change(r1.dq, r0.dq, a, b, Hq, D));
                        xp_set_f(pt, "o_changed", xp_changed_fraction(r1.o, r0.o, a, b, Hq, D));
                        xp_set_f(pt, "dq_changed", xp_changed_fraction(r1.dq, r0.dq, a, b, Hq, D));
                    }
                    xp_set_s(pt, "status", bad ? flamia_last_error() : "ok");
                    xp_row_end(pt);
                    xp_inputs_free(&p);
                    snprintf(what, sizeof what, "%s %s %s trial %d", w->name, rl[ri], kind_names[k], tr);
                    xp_progress_step(&pr, what);
                }
            }
            if (args.cross) {
                const float factor = 1e4f;
                xp_inputs p;
                xp_inputs_copy(&base, &p);
                int a = w->cu_seqlens[longest], b = w->cu_seqlens[longest + 1];
                for (size_t i = (size_t)a * Hq * D; i < (size_t)b * Hq * D; i++) {
                    p.q[i] *= factor;
                    p.dout[i] *= factor;
                }
                for (size_t i = (size_t)a * Hkv * D; i < (size_t)b * Hkv * D; i++) {
                    p.k[i] *= factor;
                    p.v[i] *= factor;
                }
                int bad = xp_run(&o, &rc, w, &p, &r1) < 0;
                xp_row_begin(cd);
                xp_set_s(cd, "workload", w->name);
                xp_set_s(cd, "recipe", rl[ri]);
                xp_set_i(cd, "doc", longest);
                xp_set_f(cd, "factor", factor);
                /* other documents: [0, a) and [b, T) */
                double orel = 0, dqrel = 0, dkrel = 0;
                double ab0 = 0, aa0 = 0, bb = 0, ab1 = 0, aa1 = 0;
                for (int seg = 0; seg < 2 && !bad; seg++) {
                    int s0 = seg ? b : 0, s1 = seg ? w->total_tokens : a;
                    if (s0 >= s1) continue;
                    orel = fmax(orel, xp_max_row_rel_change(r1.o, r0.o, s0, s1, Hq, D));
                    dqrel = fmax(dqrel, xp_max_row_rel_change(r1.dq, r0.dq, s0, s1, Hq, D));
                    dkrel = fmax(dkrel, xp_max_row_rel_change(r1.dk, r0.dk, s0, s1, Hkv, D));
                    for (size_t i = (size_t)s0 * Hkv * D; i < (size_t)s1 * Hkv * D; i++) {
                        double g = have64 ? r64.dk[i] : 0;
                        ab0 += r0.dk[i] * g;
                        aa0 += (double)r0.dk[i] * r0.dk[i];
                        ab1 += r1.dk[i] * g;
                        aa1 += (double)r1.dk[i] * r1.dk[i];
                        bb += g * g;
                    }
                }
                if (!bad) {
                    xp_set_f(cd, "o_rel", orel);
                    xp_set_f(cd, "dq_rel", dqrel);
                    xp_set_f(cd, "dk_rel", dkrel);
                    /* an all-zero dK (every value flushed) has cosine 0 with a nonzero truth */
                    xp_set_f(cd, "dk_cos_base", bb > 0 ? (aa0 > 0 ? ab0 / sqrt(aa0 * bb) : 0.0) : NAN);
                    xp_set_f(cd, "dk_cos_perturbed", bb > 0 ? (aa1 > 0 ? ab1 / sqrt(aa1 * bb) : 0.0) : NAN);
                }
                xp_set_s(cd, "status", bad ? flamia_last_error() : "ok");
                xp_row_end(cd);
                xp_inputs_free(&p);
                snprintf(what, sizeof what, "%s %s cross-document", w->name, rl[ri]);
                xp_progress_step(&pr, what);
            }
            xp_result_free(&r0);
            xp_result_free(&r1);
        }
        if (have64) xp_result64_free(&r64);
        xp_inputs_free(&base);
        free(tdoc);
        free(tpos);
    }
    xp_progress_end(&pr);

    /* summary: max over workloads and trials per (recipe, kind) */
    xp_table *sm = xp_table_new("summary", "max over workloads and trials, per recipe and kind (Table B)");
    xp_table_col(sm, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(sm, "kind", XP_STR, "", "perturbation kind");
    xp_table_col(sm, "trials", XP_I64, "1", "trials (all workloads)");
    xp_table_col(sm, "failed", XP_I64, "1", "trials whose perturbed run failed");
    xp_table_col(sm, "o_rel_max", XP_F64, "1", "max o_rel");
    xp_table_col(sm, "dq_rel_max", XP_F64, "1", "max dq_rel");
    xp_table_col(sm, "o_fro_max", XP_F64, "1", "max o_fro (Frobenius relative change)");
    xp_table_col(sm, "dq_fro_max", XP_F64, "1", "max dq_fro");
    xp_table_col(sm, "o_changed_max", XP_F64, "1", "max fraction of changed earlier O elements");
    xp_table_col(sm, "dq_changed_max", XP_F64, "1", "max fraction of changed earlier dQ elements");
    for (int ri = 0; ri < nr; ri++)
        for (int k = 0; k < NKINDS; k++) {
            if (!args.kind_on[k]) continue;
            double om = 0, qm = 0, oc = 0, qc = 0, of = 0, qf = 0;
            long n = 0, failed = 0;
            for (size_t row = 0; row < xp_table_rows(pt); row++) {
                if (strcmp(xp_get_s(pt, "recipe", row), rl[ri]) || strcmp(xp_get_s(pt, "kind", row), kind_names[k]))
                    continue;
                n++;
                if (strcmp(xp_get_s(pt, "status", row), "ok")) {
                    failed++;
                    continue;
                }
                /* fmax ignores NaN: a NaN change is a failure of its own kind, keep it visible */
                double v[6] = {xp_get_f(pt, "o_rel", row), xp_get_f(pt, "dq_rel", row),
                               xp_get_f(pt, "o_changed", row), xp_get_f(pt, "dq_changed", row),
                               xp_get_f(pt, "o_fro", row), xp_get_f(pt, "dq_fro", row)};
                double *m[6] = {&om, &qm, &oc, &qc, &of, &qf};
                for (int z = 0; z < 6; z++) *m[z] = (isnan(v[z]) || isnan(*m[z])) ? NAN : fmax(*m[z], v[z]);
            }
            xp_row_begin(sm);
            xp_set_s(sm, "recipe", rl[ri]);
            xp_set_s(sm, "kind", kind_names[k]);
            xp_set_i(sm, "trials", n);
            xp_set_i(sm, "failed", failed);
            xp_set_f(sm, "o_rel_max", om);
            xp_set_f(sm, "dq_rel_max", qm);
            xp_set_f(sm, "o_fro_max", of);
            xp_set_f(sm, "dq_fro_max", qf);
            xp_set_f(sm, "o_changed_max", oc);
            xp_set_f(sm, "dq_changed_max", qc);
            xp_row_end(sm);
        }

    xp_out *f = xp_out_open(&o, argc, argv);
    if (!f) return 1;
    xp_out_attr_s(f, "workloads", o.workloads);
    xp_out_attr_i(f, "trials", args.trials);
    xp_out_attr_s(f, "perturbed_tensors", "Q, K, V, dO (all heads)");
    xp_out_attr_s(f, "metric", "max over earlier (token, head) rows of ||after - before||_2 / ||before||_2");
    xp_out_table(f, sm);
    xp_out_table(f, pt);
    if (args.cross) xp_out_table(f, cd);
    int rc = xp_out_commit(f);
    xp_table_free(sm);
    xp_table_free(pt);
    xp_table_free(cd);
    for (int i = 0; i < nw; i++) xp_workload_free(&ws[i]);
    free(ws);
    xp_strv_free(wl);
    xp_strv_free(rl);
    return rc ? 1 : 0;
}
