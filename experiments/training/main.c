/*
 * training - short training runs of a small byte-level transformer whose attention is the CPU
 * reference of a recipe: the controlled mismatches and the dual-mode evaluation, in miniature.
 *
 * Paper items (PAPER.md): "Consistency mismatches: D and dP with different dO representations
 * -> diverges within 500 steps; forward 4-bit P + backward 8-bit -> attention collapses; forward
 * 256-query tiles vs backward 128 -> grad norm 0.5 -> 2e5 while single-step dQ cosine is 0.945;
 * approximate exp in forward only -> diverges within 500 steps" and "Leak in training: leaky
 * 4-bit kernels self-eval loss 0.811-0.827 (below BF16 0.852), but 0.888-0.940 under exact
 * attention (leak-free model: 0.862)". Their model is a real LM trained for thousands of steps
 * on GPUs; this one (experiments/training/tiny_lm.h) has ~10^5 parameters and trains for a few
 * hundred steps on a CPU, so it shows what a small model does in that time, not the paper's
 * numbers.
 *
 * Data: a text corpus (default data/corpus/flamia-docs-2026-12-05.txt, a frozen copy of this
 * project's docs), split at blank lines into documents (longer ones cut at --max-doc bytes);
 * every tenth document is held out. Training rows pack --row-tokens bytes of shuffled
 * documents (cu_seqlens; the row's last document is cut to fit); the held-out rows are the
 * evaluation set.
 *
 * Cases (--cases; each a fresh model with the same seed and the same rows):
 *   exact        FP64 attention in both passes (no quantization: the leak-free reference)
 *   bf16, mxfp8, mxfp8-exact, fp8-tensor, mx-floor, nvfp4
 *                the preset in both passes
 *   approx-exp   mxfp8; the forward's exponential is Schraudolph's, the backward's exact
 *   p4-p8        mxfp8; the forward's P in NVFP4 (4-bit), the backward's in E4M3
 *   p16-p8       mxfp8; the forward's P in BF16, the backward's in E4M3
 *   tiles        mxfp8; forward tiles 256 x 256, backward 128 x 128
 *   mxfp8-p16, -ds16, -do16, -qkv16
 *                mxfp8 with one operand in BF16 in both passes (which one drives a change)
 *   mxfp8-lsum, mxfp8-exact-lsum
 *                the preset with the row sum l taken over P's quantized values
 *                (FLAMIA_ROWSUM_P_VALUES, docs/numerics.md 3.4)
 * Per case: the training loss (mean of the last tenth of the steps), the gradient norm (before
 * clipping: first, largest, mean of the last tenth), and the evaluation loss twice: with the
 * case's own forward (self) and with the FP64 attention (exact). A run whose loss stops being
 * finite or exceeds twice its first is stopped there and marked diverged.
 *
 * Tables: training (one row per case), curve (case x step: loss, gradient norm).
 * Example: training --out data/runs/cpu/training.h5 --steps 300 --cases exact,mxfp8,approx-exp
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiny_lm.h"
#include "xp.h"

/* ---------------------------------------------------------------- cases */
static void tiles256(flamia_recipe *r) { r->tile_q = r->tile_k = 256; }
static void p_bf16(flamia_recipe *r) { r->p_format = FLAMIA_FMT_BF16; }
static void p_nvfp4(flamia_recipe *r) { r->p_format = FLAMIA_FMT_NVFP4; }
static void exp_approx(flamia_recipe *r) { r->exp_mode = FLAMIA_EXP2_SCHRAUDOLPH; }
static void ds_bf16(flamia_recipe *r) { r->ds_format = FLAMIA_FMT_BF16; }
static void dout_bf16(flamia_recipe *r) { r->dout.format = FLAMIA_FMT_BF16; }
static void qkv_bf16(flamia_recipe *r) {
    r->q_score.format = r->k_score.format = r->q.format = r->k.format = r->v.format = FLAMIA_FMT_BF16;
}

typedef struct {
    const char *name, *what, *preset; /* preset NULL: FP64 attention */
    void (*fwd)(flamia_recipe *);     /* the forward's edit (mismatches) */
    void (*both)(flamia_recipe *);    /* an edit of both passes (which operand matters) */
} tcase;

static const tcase kCases[] = {
    {"exact", "FP64 attention in both passes (no quantization)", NULL, NULL, NULL},
    {"bf16", "bf16 in both passes", "bf16", NULL, NULL},
    {"mxfp8", "mxfp8 in both passes", "mxfp8", NULL, NULL},
    {"mxfp8-exact", "mxfp8-exact in both passes (causally exact scales)", "mxfp8-exact", NULL, NULL},
    {"fp8-tensor", "fp8-tensor in both passes (tensor-wide scales: leaks)", "fp8-tensor", NULL, NULL},
    {"mx-floor", "mx-floor in both passes (OCP floor exponents: leaks)", "mx-floor", NULL, NULL},
    {"nvfp4", "nvfp4 in both passes (NVFP4 Q, K in the score)", "nvfp4", NULL, NULL},
    {"approx-exp", "mxfp8, forward exp2 approximated (Schraudolph), backward exact", "mxfp8", exp_approx, NULL},
    {"p4-p8", "mxfp8, forward P in NVFP4 (4-bit), backward P in E4M3", "mxfp8", p_nvfp4, NULL},
    {"p16-p8", "mxfp8, forward P in BF16, backward P in E4M3", "mxfp8", p_bf16, NULL},
    {"tiles", "mxfp8, forward tiles 256x256, backward 128x128", "mxfp8", tiles256, NULL},
    {"mxfp8-p16", "mxfp8 with P in BF16, both passes", "mxfp8", NULL, p_bf16},
    {"mxfp8-ds16", "mxfp8 with dS in BF16, both passes", "mxfp8", NULL, ds_bf16},
    {"mxfp8-do16", "mxfp8 with dO in BF16, both passes", "mxfp8", NULL, dout_bf16},
    {"mxfp8-qkv16", "mxfp8 with Q, K, V in BF16, both passes", "mxfp8", NULL, qkv_bf16},
    {"mxfp8-lsum", "mxfp8 with l the sum of P's quantized values (rows of P / l sum to one)", "mxfp8-lsum", NULL, NULL},
    {"mxfp8-exact-lsum", "mxfp8-exact with l the sum of P's quantized values", "mxfp8-exact-lsum", NULL, NULL},
};
enum { NCASES = sizeof kCases / sizeof kCases[0] };

static const tcase *find_case(const char *name) {
    for (int i = 0; i < NCASES; i++)
        if (!strcmp(kCases[i].name, name)) return &kCases[i];
    return NULL;
}

/* ---------------------------------------------------------------- data */
typedef struct {
    int n, cap;
    int *start, *len; /* documents as spans of the corpus */
} doc_list;

static void docs_add(doc_list *d, int start, int len) {
    if (d->n == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 1024;
        d->start = realloc(d->start, sizeof(int) * (size_t)d->cap);
        d->len = realloc(d->len, sizeof(int) * (size_t)d->cap);
        if (!d->start || !d->len) {
            fprintf(stderr, "error: out of memory\n");
            exit(1);
        }
    }
    d->start[d->n] = start, d->len[d->n++] = len;
}

/* Paragraphs (split at blank lines) of at least 2 bytes, cut at max_doc; every tenth held out. */
static void split_docs(const uint8_t *text, int n, int max_doc, doc_list *train, doc_list *eval) {
    int i = 0, count = 0;
    while (i < n) {
        while (i < n && text[i] == '\n') i++;
        int j = i;
        while (j < n && !(text[j] == '\n' && j + 1 < n && text[j + 1] == '\n')) j++;
        if (j < n) j++; /* keep the paragraph's newline */
        for (int s = i; s < j; s += max_doc) {
            const int len = j - s < max_doc ? j - s : max_doc;
            if (len >= 2) docs_add(count++ % 10 == 9 ? eval : train, s, len);
        }
        i = j;
    }
}

/* One packed row of T bytes from the documents in order `order`, starting at *next (cyclic). */
static int pack_row(const uint8_t *text, const doc_list *d, const int *order, int *next, int T, uint8_t *row,
                    int32_t *cu) {
    int t = 0, nd = 0;
    cu[0] = 0;
    while (t < T) {
        const int k = order[*next % d->n];
        *next += 1;
        int len = d->len[k];
        if (len > T - t) len = T - t;
        memcpy(row + t, text + d->start[k], (size_t)len);
        t += len;
        cu[++nd] = t;
    }
    return nd;
}

static uint8_t *read_corpus(const char *files, int *n) {
    int nf;
    char **fl = xp_split_list(files, &nf);
    uint8_t *buf = NULL;
    size_t used = 0;
    for (int i = 0; i < nf; i++) {
        FILE *f = fopen(fl[i], "rb");
        if (!f) {
            fprintf(stderr, "error: --corpus: cannot open '%s'\n", fl[i]);
            free(buf);
            xp_strv_free(fl);
            return NULL;
        }
        uint8_t chunk[65536];
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
            uint8_t *nb = realloc(buf, used + got + 2);
            if (!nb) {
                fprintf(stderr, "error: out of memory reading the corpus\n");
                exit(1);
            }
            buf = nb;
            memcpy(buf + used, chunk, got);
            used += got;
        }
        fclose(f);
        if (buf) buf[used++] = '\n', buf[used++] = '\n'; /* a file ends a document */
    }
    xp_strv_free(fl);
    if (used > (size_t)1 << 30) {
        fprintf(stderr, "error: --corpus: more than 1 GiB\n");
        free(buf);
        return NULL;
    }
    *n = (int)used;
    return buf;
}

/* ---------------------------------------------------------------- options */
enum { O_STEPS = 1, O_ROW, O_LAYERS, O_LR, O_CLIP, O_CORPUS, O_CASES, O_EVAL_ROWS, O_MAX_DOC };
static const struct option driver_options[] = {
    {"steps", required_argument, 0, O_STEPS},         {"row-tokens", required_argument, 0, O_ROW},
    {"layers", required_argument, 0, O_LAYERS},       {"lr", required_argument, 0, O_LR},
    {"clip", required_argument, 0, O_CLIP},           {"corpus", required_argument, 0, O_CORPUS},
    {"cases", required_argument, 0, O_CASES},         {"eval-rows", required_argument, 0, O_EVAL_ROWS},
    {"max-doc", required_argument, 0, O_MAX_DOC},     {0, 0, 0, 0}};
typedef struct {
    int steps, row, layers, eval_rows, max_doc;
    double lr, clip;
    const char *corpus, *cases;
} driver_args;

static int handle_opt(int c, const char *arg, void *ctx) {
    driver_args *a = ctx;
    switch (c) {
    case O_STEPS: return xp_parse_int("--steps", arg, 1, 1000000, &a->steps);
    case O_ROW: return xp_parse_int("--row-tokens", arg, 16, 1 << 20, &a->row);
    case O_LAYERS: return xp_parse_int("--layers", arg, 1, 64, &a->layers);
    case O_EVAL_ROWS: return xp_parse_int("--eval-rows", arg, 1, 100000, &a->eval_rows);
    case O_MAX_DOC: return xp_parse_int("--max-doc", arg, 2, 1 << 20, &a->max_doc);
    case O_LR: return xp_parse_double("--lr", arg, 0, 1, &a->lr);
    case O_CLIP: return xp_parse_double("--clip", arg, 0, 1e30, &a->clip);
    case O_CORPUS: a->corpus = arg; return 0;
    case O_CASES: a->cases = arg; return 0;
    }
    return 0;
}

static void usage(const xp_opts *d) {
    printf("usage: training --out FILE.h5 [options]\n"
           "Short training runs of a small byte-level transformer with the reference's attention of\n"
           "each case's recipes: training loss, gradient norm, and the evaluation loss with the case's\n"
           "own attention and with FP64 attention.\n"
           "Driver options:\n"
           "  --cases LIST         cases to train (default all, below)\n"
           "  --steps N            optimizer steps per case (default 300)\n"
           "  --row-tokens T       tokens of one packed training row (default 512)\n"
           "  --layers N           transformer layers (default 1); --heads sets the heads (x64 wide)\n"
           "  --lr X               Adam's learning rate (default 3e-3); --clip X: gradient norm (default 1)\n"
           "  --eval-rows N        held-out rows evaluated (default 8)\n"
           "  --max-doc N          longest document in bytes (default 256; longer ones are cut)\n"
           "  --corpus FILES       comma list of text files (default %s)\n",
           XP_SOURCE_ROOT "/data/corpus/flamia-docs-2026-12-05.txt");
    xp_print_common_usage(d);
    printf("Cases:\n");
    for (int i = 0; i < NCASES; i++) printf("  %-12s %s\n", kCases[i].name, kCases[i].what);
}

/* ---------------------------------------------------------------- main */
typedef struct {
    const tcase *c;
    flamia_recipe rf, rb;
} run_recipes;

static int recipes_of(const tcase *c, run_recipes *out) {
    out->c = c;
    if (!c->preset) return 0;
    if (flamia_recipe_preset(c->preset, &out->rb) != FLAMIA_OK) return -1;
    if (c->both) c->both(&out->rb);
    out->rf = out->rb;
    if (c->fwd) c->fwd(&out->rf);
    return 0;
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("training");
    o.workloads = NULL;
    o.recipes = NULL;
    o.heads = 1;
    driver_args a = {.steps = 300, .row = 512, .layers = 1, .eval_rows = 8, .max_doc = 256, .lr = 3e-3, .clip = 1.0,
                     .corpus = XP_SOURCE_ROOT "/data/corpus/flamia-docs-2026-12-05.txt", .cases = NULL};
    int parsed = xp_parse_options(&o, argc, argv, driver_options, handle_opt, &a, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    if (o.recipes || o.workloads) {
        fprintf(stderr, "error: training takes --cases (recipes per pass) and a corpus, not --recipes / --workloads\n");
        return 2;
    }
    if (xp_opts_finish(&o)) return 2;
    if (o.heads < 1 || o.heads > 16) {
        fprintf(stderr, "error: --heads %d: the model takes 1-16 heads of 64\n", o.heads);
        return 2;
    }
    run_recipes runs[NCASES];
    int nruns = 0;
    {
        int nc;
        char **cl = a.cases ? xp_split_list(a.cases, &nc) : NULL;
        if (!cl) nc = NCASES;
        for (int i = 0; i < nc; i++) {
            const tcase *c = cl ? find_case(cl[i]) : &kCases[i];
            int repeated = 0;
            for (int k = 0; c && k < nruns; k++) repeated |= runs[k].c == c;
            if (!c || repeated) {
                fprintf(stderr, "error: --cases: unknown or repeated case '%s' (training --help lists them)\n",
                        cl ? cl[i] : "?");
                xp_strv_free(cl);
                return 2;
            }
            if (recipes_of(c, &runs[nruns++])) return 2;
        }
        xp_strv_free(cl);
    }
    int ntext = 0;
    uint8_t *text = read_corpus(a.corpus, &ntext);
    if (!text) return 2;
    doc_list train = {0}, eval = {0};
    split_docs(text, ntext, a.max_doc, &train, &eval);
    if (train.n < 2 || eval.n < 1) {
        fprintf(stderr, "error: --corpus: %d training and %d held-out documents; too few\n", train.n, eval.n);
        return 2;
    }
    int *order = malloc(sizeof(int) * (size_t)train.n), *eorder = malloc(sizeof(int) * (size_t)eval.n);
    uint8_t *row = malloc((size_t)a.row);
    int32_t *cu = malloc(sizeof(int32_t) * ((size_t)a.row + 1));
    double *curve_loss = malloc(sizeof(double) * (size_t)a.steps), *curve_norm = malloc(sizeof(double) * (size_t)a.steps);
    if (!order || !eorder || !row || !cu || !curve_loss || !curve_norm) {
        fprintf(stderr, "error: out of memory\n");
        return 1;
    }
    xp_rng rng;
    xp_rng_seed(&rng, o.seed, 0x5eed);
    for (int i = 0; i < train.n; i++) order[i] = i;
    for (int i = train.n - 1; i > 0; i--) { /* Fisher-Yates */
        const int j = (int)(xp_rng_u64(&rng) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int i = 0; i < eval.n; i++) eorder[i] = i;

    tlm_config cfg = {.layers = a.layers, .heads = o.heads, .head_dim = 64, .ffn = 4 * 64 * o.heads,
                      .max_pos = a.max_doc};
    xp_table *t = xp_table_new("training", "one row per case: training and the dual-mode evaluation");
    xp_table_col(t, "case", XP_STR, "", "case");
    xp_table_col(t, "what", XP_STR, "", "the recipes of the forward and the backward");
    xp_table_col(t, "steps", XP_I64, "1", "optimizer steps taken (fewer than asked when diverged)");
    xp_table_col(t, "diverged", XP_I64, "1", "1: the loss stopped being finite or exceeded twice its first");
    xp_table_col(t, "loss_first", XP_F64, "nats", "training loss of the first step");
    xp_table_col(t, "loss_final", XP_F64, "nats", "mean training loss of the last tenth of the steps");
    xp_table_col(t, "grad_norm_first", XP_F64, "1", "gradient norm of the first step (before clipping)");
    xp_table_col(t, "grad_norm_max", XP_F64, "1", "largest gradient norm (before clipping)");
    xp_table_col(t, "grad_norm_final", XP_F64, "1", "mean gradient norm of the last tenth of the steps");
    xp_table_col(t, "eval_self", XP_F64, "nats", "held-out loss with the case's own forward");
    xp_table_col(t, "eval_exact", XP_F64, "nats", "held-out loss with FP64 attention");
    xp_table_col(t, "eval_gap", XP_F64, "nats", "eval_exact - eval_self (> 0: the model leans on its own attention)");
    xp_table_col(t, "seconds", XP_F64, "s", "wall time of the case");
    xp_table *cv = xp_table_new("curve", "case x step: training loss and gradient norm");
    xp_table_col(cv, "case", XP_STR, "", "case");
    xp_table_col(cv, "step", XP_I64, "1", "optimizer step (0-based)");
    xp_table_col(cv, "loss", XP_F64, "nats", "training loss of the step's row");
    xp_table_col(cv, "grad_norm", XP_F64, "1", "gradient norm before clipping");

    xp_progress pr;
    xp_progress_init(&pr, "training", (long)nruns, o.quiet);
    int rc = 0;
    char what[256];
    for (int ri = 0; ri < nruns && !rc; ri++) {
        const run_recipes *R = &runs[ri];
        const flamia_recipe *rf = R->c->preset ? &R->rf : NULL, *rb = R->c->preset ? &R->rb : NULL;
        tlm m;
        if (tlm_init(&m, &cfg, o.seed)) {
            fprintf(stderr, "error: out of memory for the model\n");
            rc = 1;
            break;
        }
        const double t0 = xp_now();
        int next = 0, steps = 0, diverged = 0;
        double gmax = 0;
        for (int s = 0; s < a.steps; s++) {
            const int nd = pack_row(text, &train, order, &next, a.row, row, cu);
            double loss = NAN;
            flamia_status st = tlm_loss(&m, rf, rb, 1, row, a.row, nd, cu, &loss);
            if (st) {
                fprintf(stderr, "error: case %s, step %d: %s: %s\n", R->c->name, s, flamia_status_string(st),
                        flamia_last_error());
                rc = 1;
                break;
            }
            const double gn = tlm_adam_step(&m, a.lr, a.clip);
            curve_loss[s] = loss, curve_norm[s] = gn;
            steps = s + 1;
            gmax = fmax(gmax, gn);
            if (!isfinite(loss) || !isfinite(gn) || loss > 2 * curve_loss[0]) {
                diverged = 1;
                break;
            }
        }
        if (rc) {
            tlm_free(&m);
            break;
        }
        /* the dual-mode evaluation on the held-out rows */
        double ev[2] = {0, 0};
        for (int mode = 0; mode < 2 && !rc; mode++) {
            int enext = 0;
            for (int e = 0; e < a.eval_rows; e++) {
                const int nd = pack_row(text, &eval, eorder, &enext, a.row, row, cu);
                double loss = NAN;
                flamia_status st = tlm_loss(&m, mode == 0 ? rf : NULL, NULL, 0, row, a.row, nd, cu, &loss);
                if (st) {
                    fprintf(stderr, "error: case %s, evaluation: %s\n", R->c->name, flamia_last_error());
                    rc = 1;
                    break;
                }
                ev[mode] += loss / a.eval_rows;
            }
        }
        tlm_free(&m);
        if (rc) break;
        const int tail0 = steps - (steps + 9) / 10;
        double lf = 0, gf = 0;
        for (int s = tail0; s < steps; s++) lf += curve_loss[s] / (steps - tail0), gf += curve_norm[s] / (steps - tail0);
        xp_row_begin(t);
        xp_set_s(t, "case", R->c->name);
        xp_set_s(t, "what", R->c->what);
        xp_set_i(t, "steps", steps);
        xp_set_i(t, "diverged", diverged);
        xp_set_f(t, "loss_first", curve_loss[0]);
        xp_set_f(t, "loss_final", lf);
        xp_set_f(t, "grad_norm_first", curve_norm[0]);
        xp_set_f(t, "grad_norm_max", gmax);
        xp_set_f(t, "grad_norm_final", gf);
        xp_set_f(t, "eval_self", ev[0]);
        xp_set_f(t, "eval_exact", ev[1]);
        xp_set_f(t, "eval_gap", ev[1] - ev[0]);
        xp_set_f(t, "seconds", xp_now() - t0);
        xp_row_end(t);
        for (int s = 0; s < steps; s++) {
            xp_row_begin(cv);
            xp_set_s(cv, "case", R->c->name);
            xp_set_i(cv, "step", s);
            xp_set_f(cv, "loss", curve_loss[s]);
            xp_set_f(cv, "grad_norm", curve_norm[s]);
            xp_row_end(cv);
        }
        snprintf(what, sizeof what, "%s: loss %.3f, eval self %.3f / exact %.3f", R->c->name, lf, ev[0], ev[1]);
        xp_progress_step(&pr, what);
    }
    xp_progress_end(&pr);
    if (!rc) {
        xp_out *f = xp_out_open(&o, argc, argv);
        if (!f) {
            rc = 1;
        } else {
            xp_out_attr_s(f, "corpus", a.corpus);
            xp_out_attr_i(f, "corpus_bytes", ntext);
            xp_out_attr_i(f, "train_documents", train.n);
            xp_out_attr_i(f, "eval_documents", eval.n);
            xp_out_attr_i(f, "row_tokens", a.row);
            xp_out_attr_i(f, "layers", a.layers);
            xp_out_attr_i(f, "model_heads", o.heads);
            xp_out_attr_f(f, "lr", a.lr);
            xp_out_attr_f(f, "clip", a.clip);
            xp_out_attr_i(f, "steps_requested", a.steps);
            xp_out_attr_i(f, "eval_rows", a.eval_rows);
            xp_out_table(f, t);
            xp_out_table(f, cv);
            rc = xp_out_commit(f) ? 1 : 0;
        }
    }
    xp_table_free(t);
    xp_table_free(cv);
    free(text), free(order), free(eorder), free(row), free(cu), free(curve_loss), free(curve_norm);
    free(train.start), free(train.len), free(eval.start), free(eval.len);
    return rc;
}
