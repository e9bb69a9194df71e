/*
 * mismatch - forward/backward inconsistency, one training step.
 *
 * Paper item: "Forward/backward inconsistency. Backward recomputes P. If its quantized
 * representation, tiling, exponent evaluation or row-max scaling differ from forward,
 * training can diverge even at single-step dQ cosine 0.945" and the controlled-mismatch
 * experiments (PAPER.md, "Consistency mismatches"). The divergence itself needs training
 * runs (DESIGN.md: "training (later)"); this driver measures the single step.
 *
 * The forward runs with one recipe (it writes O and lse), the backward with another that
 * differs in one of the things the backward must recompute exactly as the forward did
 * (docs/numerics.md 5); the backward takes the forward's O and lse, as a framework would:
 *   matched     the base recipe both ways (the reference point)
 *   tiles       forward tiles 256 x 256, backward 128 x 128: other row frames, so other
 *               P codes (the paper's 256- vs 128-query tiles)
 *   p4-p8       forward P in NVFP4 (4-bit), backward P in E4M3 (the paper's 4-bit
 *               forward P with an 8-bit backward)
 *   p16-p8      forward P in BF16, backward P in E4M3 (the same, one step up)
 *   p8-p16      forward P in E4M3, backward P in BF16
 *   row-max     backward P placed 2^4 lower in E4M3's range than the forward's
 *               (p_offset_log2 4 instead of 8: a different row-max scaling)
 *   approx-exp  forward exponential by the bit-level approximation (Schraudolph),
 *               backward exact (the paper's approximate exp in forward only)
 * For each case and workload: dQ, dK, dV cosine and relative L2 error against FP64, the
 * change from the matched gradients (relative L2), and ||dQ|| / ||dQ_FP64||.
 *
 * Tables: mismatch (workload x case).
 * Example: mismatch --out data/runs/cpu/mismatch.h5 --scale 1/16 --heads 8
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

typedef struct {
    const char *name, *what;
    void (*fwd)(flamia_recipe *);
    void (*bwd)(flamia_recipe *);
} mcase;

static void tiles256(flamia_recipe *r) { r->tile_q = r->tile_k = 256; }
static void p_bf16(flamia_recipe *r) { r->p_format = FLAMIA_FMT_BF16; }
static void p_nvfp4(flamia_recipe *r) { r->p_format = FLAMIA_FMT_NVFP4; }
static void p_offset4(flamia_recipe *r) { r->p_offset_log2 = 4; }
static void exp_approx(flamia_recipe *r) { r->exp_mode = FLAMIA_EXP2_SCHRAUDOLPH; }

static const mcase kCases[] = {
    {"matched", "the base recipe in both passes", NULL, NULL},
    {"tiles", "forward tiles 256x256, backward 128x128", tiles256, NULL},
    {"p4-p8", "forward P in NVFP4 (4-bit), backward P in E4M3", p_nvfp4, NULL},
    {"p16-p8", "forward P in BF16, backward P in E4M3", p_bf16, NULL},
    {"p8-p16", "forward P in E4M3, backward P in BF16", NULL, p_bf16},
    {"row-max", "backward P offset 2^4 instead of 2^8 below E4M3's top", NULL, p_offset4},
    {"approx-exp", "forward exp2 approximated (Schraudolph), backward exact", exp_approx, NULL},
};
enum { NCASES = sizeof kCases / sizeof kCases[0] };

static double norm_ratio(const float *a, const double *b, size_t n) {
    double na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) na += (double)a[i] * a[i], nb += b[i] * b[i];
    return nb > 0 ? sqrt(na / nb) : NAN;
}

static void usage(const xp_opts *d) {
    printf("usage: mismatch --out FILE.h5 [options]\n"
           "One training step with the backward's P recomputed differently from the forward's:\n"
           "gradient error against FP64 and against the matched step, per case.\n"
           "Driver options:\n"
           "  --base RECIPE        recipe both passes start from (default mxfp8)\n");
    xp_print_common_usage(d);
    printf("Cases:\n");
    for (int i = 0; i < NCASES; i++) printf("  %-12s %s\n", kCases[i].name, kCases[i].what);
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("mismatch");
    o.workloads = "4x4096,16x1024,8192+32x256,logu-16k";
    o.scale = 1.0 / 16;
    o.recipes = NULL;
    const char *base = "mxfp8";
    int parsed = xp_parse_options(&o, argc, argv, xp_base_options, xp_base_option, &base, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    flamia_recipe rbase;
    if (xp_base_recipe(&o, base, "one recipe's passes", &rbase) || xp_opts_finish(&o)) return 2;
    if (rbase.p_format != FLAMIA_FMT_E4M3) {
        fprintf(stderr, "error: --base %s has no E4M3 P: the cases vary how E4M3 P codes are formed\n", base);
        return 2;
    }

    int nw;
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;

    xp_table *t = xp_table_new("mismatch", "one training step, backward P recomputed unlike the forward's");
    xp_table_col(t, "workload", XP_STR, "", "workload");
    xp_table_col(t, "case", XP_STR, "", "mismatch case (matched = none)");
    xp_table_col(t, "what", XP_STR, "", "how the passes differ");
    static const char *g3[3] = {"dq", "dk", "dv"};
    char name[64], desc[128];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "cos_%s", g3[k]);
        snprintf(desc, sizeof desc, "%s cosine vs FP64", g3[k]);
        xp_table_col(t, name, XP_F64, "1", desc);
        snprintf(name, sizeof name, "rel_l2_%s", g3[k]);
        snprintf(desc, sizeof desc, "%s relative L2 error vs FP64", g3[k]);
        xp_table_col(t, name, XP_F64, "1", desc);
        snprintf(name, sizeof name, "vs_matched_%s", g3[k]);
        snprintf(desc, sizeof desc, "norm of %s - %s(matched) over the norm of %s(matched)", g3[k], g3[k], g3[k]);
        xp_table_col(t, name, XP_F64, "1", desc);
    }
    xp_table_col(t, "norm_ratio_dq", XP_F64, "1", "norm of dQ over the norm of the FP64 dQ");
    xp_table_col(t, "cos_o", XP_F64, "1", "forward O cosine vs FP64");

    xp_progress pr;
    xp_progress_init(&pr, "mismatch", (long)nw * (NCASES + 1), o.quiet);
    char what[256];
    for (int wi = 0; wi < nw; wi++) {
        const xp_workload *w = &ws[wi];
        const flamia_shape s = xp_workload_shape(w);
        xp_inputs in;
        xp_result64 g;
        if (xp_inputs_with_truth(&o, w, &in, &g)) return 1;
        snprintf(what, sizeof what, "%s fp64", w->name);
        xp_progress_step(&pr, what);
        xp_result r, m; /* this case, the matched case */
        xp_result_alloc(&r, w);
        xp_result_alloc(&m, w);
        for (int k = 0; k < NCASES; k++) {
            flamia_recipe rf = rbase, rb = rbase;
            if (kCases[k].fwd) kCases[k].fwd(&rf);
            if (kCases[k].bwd) kCases[k].bwd(&rb);
            flamia_status st = flamia_ref_forward(&rf, &s, in.q, in.k, in.v, r.o, r.lse);
            if (st == FLAMIA_OK)
                st = flamia_ref_backward_ex(&rb, &s, in.q, in.k, in.v, r.o, r.lse, in.dout, r.dq, r.dk, r.dv,
                                            &r.stats);
            if (st != FLAMIA_OK) {
                fprintf(stderr, "error: case %s on %s: %s: %s\n", kCases[k].name, w->name, flamia_status_string(st),
                        flamia_last_error());
                return 1;
            }
            if (k == 0) { /* the matched step, the reference of the vs_matched columns */
                memcpy(m.dq, r.dq, r.nq * sizeof *r.dq);
                memcpy(m.dk, r.dk, r.nkv * sizeof *r.dk);
                memcpy(m.dv, r.dv, r.nkv * sizeof *r.dv);
            }
            const float *a[3] = {r.dq, r.dk, r.dv}, *am[3] = {m.dq, m.dk, m.dv};
            const double *b[3] = {g.dq, g.dk, g.dv};
            const int H[3] = {w->heads_q, w->heads_kv, w->heads_kv};
            xp_row_begin(t);
            xp_set_s(t, "workload", w->name);
            xp_set_s(t, "case", kCases[k].name);
            xp_set_s(t, "what", kCases[k].what);
            for (int q = 0; q < 3; q++) {
                snprintf(name, sizeof name, "cos_%s", g3[q]);
                xp_set_f(t, name, xp_cosine_f64(a[q], b[q], 0, w->total_tokens, H[q], w->head_dim));
                snprintf(name, sizeof name, "rel_l2_%s", g3[q]);
                xp_set_f(t, name, xp_rel_l2_f64(a[q], b[q], 0, w->total_tokens, H[q], w->head_dim));
                snprintf(name, sizeof name, "vs_matched_%s", g3[q]);
                xp_set_f(t, name, xp_rel_fro_change(a[q], am[q], 0, w->total_tokens, H[q], w->head_dim));
            }
            xp_set_f(t, "norm_ratio_dq", norm_ratio(r.dq, g.dq, r.nq));
            xp_set_f(t, "cos_o", xp_cosine_f64(r.o, g.o, 0, w->total_tokens, w->heads_q, w->head_dim));
            xp_row_end(t);
            snprintf(what, sizeof what, "%.60s %s", w->name, kCases[k].name);
            xp_progress_step(&pr, what);
        }
        xp_result_free(&r);
        xp_result_free(&m);
        xp_result64_free(&g);
        xp_inputs_free(&in);
    }
    xp_progress_end(&pr);

    int rc = xp_out_base_table(&o, argc, argv, base, t);
    xp_table_free(t);
    xp_workloads_free(ws, nw);
    return rc;
}
