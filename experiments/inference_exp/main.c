/*
 * inference_exp - the inference-only bit-level exponentials: what they do to O.
 *
 * Paper item: "Schraudolph variant for 8-bit P (BF16 bit field, zero-mean offset, on 5 of
 * every 8 exp pairs, output cosine change < 1e-4). Not for training: backward must rebuild
 * forward P exactly"; "Mitchell-P for 4-bit P ... E2M1 code match 98.7%" (PAPER.md,
 * "Inference-only bit-level exponentials").
 *
 * The forward of one recipe (default mxfp8: 8-bit P) with its exponential replaced
 * (docs/numerics.md 3.3, "Inference-only approximations"), then with a 4-bit P:
 *   exact              exp2 (the recipe as trained; the reference point of the next three)
 *   schraudolph-mixed  Schraudolph's exponential in BF16's bit field on 5 of every 8 key
 *                      pairs, exact on the rest (FLAMIA_EXP2_SCHRAUDOLPH_MIXED: the paper's)
 *   schraudolph        the same approximation in FP32's bit field on every key
 *                      (FLAMIA_EXP2_SCHRAUDOLPH: the approx-exp case of `mismatch`)
 *   mitchell           Mitchell's (no offset) on every key, still with the recipe's P
 *   p4-exact           P in NVFP4 (E2M1, E4M3 scale per row and 16 keys), exp2: the
 *                      reference point of the next
 *   p4-mitchell        4-bit P with Mitchell's exponential: the paper's Mitchell-P
 * For each workload: O's cosine and relative L2 error against FP64 and how much that cosine
 * drops from its reference point's (the paper's "output cosine change", read as the change of
 * the accuracy metric), and O's change from the reference point's O itself: 1 - cosine,
 * relative L2 (Frobenius), the largest row's relative change. The two differ: E4M3 P rounds the
 * approximation's ~2 % weight errors into whole code steps on a share of the keys, which moves O
 * more than it moves O's distance to FP64. And the share of P codes that stay the reference
 * point's (flamia_ref_p_codes, every head, every pair the forward evaluates; also over the pairs
 * where either code is nonzero): E2M1's steps of >= 33 % absorb Mitchell's <= 6.1 %, E4M3's
 * 6-12 % steps do not.
 *
 * Tables: inference_exp (workload x exponential).
 * Example: inference_exp --out data/runs/cpu/inference_exp.h5 --scale 1/16 --heads 4
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp.h"

static const struct {
    const char *name, *what;
    flamia_exp_mode mode;
    int four_bit_p; /* P in NVFP4 instead of the recipe's format */
    int ref;        /* the row this one is compared with (a reference point is its own) */
} kExps[] = {
    {"exact", "exp2, as in training", FLAMIA_EXP2_EXACT, 0, 0},
    {"schraudolph-mixed", "Schraudolph in BF16's bit field on 5 of every 8 key pairs", FLAMIA_EXP2_SCHRAUDOLPH_MIXED, 0, 0},
    {"schraudolph", "Schraudolph in FP32's bit field on every key", FLAMIA_EXP2_SCHRAUDOLPH, 0, 0},
    {"mitchell", "Mitchell (no offset) in FP32's bit field on every key", FLAMIA_EXP2_MITCHELL, 0, 0},
    {"p4-exact", "exp2, P in NVFP4", FLAMIA_EXP2_EXACT, 1, 4},
    {"p4-mitchell", "Mitchell on every key, P in NVFP4 (Mitchell-P)", FLAMIA_EXP2_MITCHELL, 1, 4},
};
enum { NEXPS = sizeof kExps / sizeof kExps[0], kCodesMaxBytes = 1 << 28 };

static const char *p_name(flamia_format f) {
    return f == FLAMIA_FMT_NVFP4 ? "nvfp4" : f == FLAMIA_FMT_E4M3 ? "e4m3" : f == FLAMIA_FMT_BF16 ? "bf16" : "fp32";
}

/* P codes of every head into codes [Hq][T][T]; 0 on success */
static int head_codes(const flamia_recipe *r, const flamia_shape *s, const xp_inputs *in, uint8_t *codes) {
    const size_t tt = (size_t)s->total_tokens * (size_t)s->total_tokens;
    for (int h = 0; h < s->heads_q; h++)
        if (flamia_ref_p_codes(r, s, in->q, in->k, h, codes + h * tt) != FLAMIA_OK) return 1;
    return 0;
}

/* Share of the evaluated pairs (not 0xFF) whose codes agree; *nonzero_match over the pairs
 * where either code is nonzero (E4M3 and E2M1 codes of P are nonnegative: 0 is the zero code) */
static double code_match(const uint8_t *a, const uint8_t *b, size_t n, double *nonzero_match) {
    double pairs = 0, same = 0, nz = 0, nz_same = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i] == 0xFF) continue;
        pairs++, same += a[i] == b[i];
        if (a[i] || b[i]) nz++, nz_same += a[i] == b[i];
    }
    *nonzero_match = nz ? nz_same / nz : NAN;
    return pairs ? same / pairs : NAN;
}

static void usage(const xp_opts *d) {
    printf("usage: inference_exp --out FILE.h5 [options]\n"
           "O's change, and the P codes kept, when the forward's exponential is an inference-only\n"
           "bit-level approximation, with the recipe's P and with a 4-bit P.\n"
           "Driver options:\n"
           "  --base RECIPE        recipe whose exponential is replaced (default mxfp8)\n");
    xp_print_common_usage(d);
    printf("Variants (P's format; the row each is compared with):\n");
    for (int i = 0; i < NEXPS; i++)
        printf("  %-18s P %-8s vs %-9s %s\n", kExps[i].name, kExps[i].four_bit_p ? "nvfp4" : "recipe's",
               kExps[kExps[i].ref].name, kExps[i].what);
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("inference_exp");
    o.workloads = "4x4096,16x1024,8192+32x256,logu-16k";
    o.scale = 1.0 / 16;
    o.recipes = NULL;
    const char *base = "mxfp8";
    int parsed = xp_parse_options(&o, argc, argv, xp_base_options, xp_base_option, &base, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    flamia_recipe rbase; /* CPU only (the default backends): the kernels take the exact exponential alone */
    if (xp_base_recipe(&o, base, "the exponential of one recipe", &rbase) || xp_opts_finish(&o)) return 2;

    int nw;
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;

    xp_table *t = xp_table_new("inference_exp", "O with the forward's exponential replaced, against FP64 and "
                                                "against the exact exponential's O");
    xp_table_col(t, "workload", XP_STR, "", "workload");
    xp_table_col(t, "exp", XP_STR, "", "exponential (exact = the recipe as trained)");
    xp_table_col(t, "what", XP_STR, "", "how it is evaluated");
    xp_table_col(t, "p", XP_STR, "", "P's format (e4m3, bf16, nvfp4)");
    xp_table_col(t, "ref", XP_STR, "", "the row this one is compared with");
    xp_table_col(t, "cos_o", XP_F64, "1", "O cosine vs FP64");
    xp_table_col(t, "rel_l2_o", XP_F64, "1", "O relative L2 error vs FP64");
    xp_table_col(t, "cos_o_drop", XP_F64, "1", "cos_o of the ref row minus this cos_o");
    xp_table_col(t, "cos_change", XP_F64, "1", "1 - cosine of O against the ref row's O");
    xp_table_col(t, "rel_change", XP_F64, "1", "||O - O_ref|| / ||O_ref|| (Frobenius)");
    xp_table_col(t, "max_row_change", XP_F64, "1", "largest (token, head) row's ||O - O_ref|| / ||O_ref||");
    xp_table_col(t, "code_match", XP_F64, "1",
                 "share of the evaluated (head, query, key) pairs whose P code is the ref row's (NaN: P without "
                 "codes, or heads x tokens^2 above 256 MiB)");
    xp_table_col(t, "code_match_nonzero", XP_F64, "1", "code_match over the pairs where either code is nonzero");
    xp_table_col(t, "seconds", XP_F64, "s", "wall time of the CPU reference forward");

    xp_progress pr;
    xp_progress_init(&pr, "inference_exp", (long)nw * (NEXPS + 1), o.quiet);
    char what[256];
    int rc = 0;
    for (int wi = 0; wi < nw && !rc; wi++) {
        const xp_workload *w = &ws[wi];
        const flamia_shape s = xp_workload_shape(w);
        xp_inputs in;
        xp_input_cfg icfg = xp_opts_inputs(&o);
        xp_inputs_make(w, o.seed, &icfg, &in);
        const size_t nq = in.nq, nlse = (size_t)w->total_tokens * (size_t)w->heads_q;
        double *o64 = xp_xmalloc(sizeof(double) * nq), *lse64 = xp_xmalloc(sizeof(double) * nlse);
        float *oref[2] = {xp_xmalloc(sizeof(float) * nq), xp_xmalloc(sizeof(float) * nq)},
              *oq = xp_xmalloc(sizeof(float) * nq), *lse = xp_xmalloc(sizeof(float) * nlse);
        const size_t ncodes = (size_t)w->heads_q * (size_t)w->total_tokens * (size_t)w->total_tokens;
        const int with_codes = ncodes <= kCodesMaxBytes; /* else the code columns are NaN */
        uint8_t *cref[2] = {NULL, NULL}, *codes = with_codes ? xp_xmalloc(ncodes) : NULL;
        if (flamia_ref64_forward(&s, in.q, in.k, in.v, o64, lse64) != FLAMIA_OK) {
            fprintf(stderr, "error: flamia_ref64_forward (%s): %s\n", w->name, flamia_last_error());
            rc = 1;
        }
        snprintf(what, sizeof what, "%s fp64", w->name);
        xp_progress_step(&pr, what);
        double cos_ref[2] = {NAN, NAN};
        for (int e = 0; e < NEXPS && !rc; e++) {
            flamia_recipe r = rbase;
            r.exp_mode = kExps[e].mode;
            if (kExps[e].four_bit_p) r.p_format = FLAMIA_FMT_NVFP4;
            const int fb = kExps[e].four_bit_p, is_ref = kExps[e].ref == e;
            float *out = is_ref ? oref[fb] : oq;
            const double t0 = xp_now();
            if (flamia_ref_forward(&r, &s, in.q, in.k, in.v, out, lse) != FLAMIA_OK) {
                fprintf(stderr, "error: flamia_ref_forward (%s, %s): %s\n", w->name, kExps[e].name, flamia_last_error());
                rc = 1;
                break;
            }
            const double secs = xp_now() - t0;
            double match = NAN, match_nz = NAN;
            if (with_codes && r.p_format != FLAMIA_FMT_BF16 && r.p_format != FLAMIA_FMT_FP32) {
                uint8_t *c = is_ref ? (cref[fb] = xp_xmalloc(ncodes)) : codes;
                if (head_codes(&r, &s, &in, c)) {
                    fprintf(stderr, "error: flamia_ref_p_codes (%s, %s): %s\n", w->name, kExps[e].name,
                            flamia_last_error());
                    rc = 1;
                    break;
                }
                match = code_match(cref[fb], c, ncodes, &match_nz);
            }
            xp_row_begin(t);
            xp_set_s(t, "workload", w->name);
            xp_set_s(t, "exp", kExps[e].name);
            xp_set_s(t, "what", kExps[e].what);
            xp_set_s(t, "p", p_name(r.p_format));
            xp_set_s(t, "ref", kExps[kExps[e].ref].name);
            const double cos_o = xp_cosine_f64(out, o64, 0, w->total_tokens, w->heads_q, w->head_dim);
            if (is_ref) cos_ref[fb] = cos_o;
            xp_set_f(t, "cos_o", cos_o);
            xp_set_f(t, "cos_o_drop", cos_ref[fb] - cos_o);
            xp_set_f(t, "rel_l2_o", xp_rel_l2_f64(out, o64, 0, w->total_tokens, w->heads_q, w->head_dim));
            xp_set_f(t, "cos_change", 1.0 - xp_cosine_ff(out, oref[fb], 0, w->total_tokens, w->heads_q, w->head_dim));
            xp_set_f(t, "rel_change", xp_rel_fro_change(out, oref[fb], 0, w->total_tokens, w->heads_q, w->head_dim));
            xp_set_f(t, "max_row_change",
                     xp_max_row_rel_change(out, oref[fb], 0, w->total_tokens, w->heads_q, w->head_dim));
            xp_set_f(t, "code_match", match);
            xp_set_f(t, "code_match_nonzero", match_nz);
            xp_set_f(t, "seconds", secs);
            xp_row_end(t);
            snprintf(what, sizeof what, "%.60s %s", w->name, kExps[e].name);
            xp_progress_step(&pr, what);
        }
        free(o64), free(lse64), free(oref[0]), free(oref[1]), free(oq), free(lse);
        free(cref[0]), free(cref[1]), free(codes);
        xp_inputs_free(&in);
    }
    xp_progress_end(&pr);
    if (rc) {
        xp_table_free(t);
        xp_workloads_free(ws, nw);
        return rc;
    }

    rc = xp_out_base_table(&o, argc, argv, base, t);
    xp_table_free(t);
    xp_workloads_free(ws, nw);
    return rc;
}
