/*
 * latency - Table A, our side: kernel latency of the Hopper backend.
 *
 * Paper item: Table A (training-call latency, kernel-only forward and backward,
 * TFLOP/s with causal FLOPs discounted). Per workload and recipe, the passes
 * (--passes, default all):
 *   quant      the fused quantize kernel alone
 *   fwd        the forward alone
 *   fwd+quant  quantize + forward back to back
 *   bwd        flamia_cuda_backward alone (after one quantize + forward that fills
 *              the workspace, O and lse)
 *   train      the whole training call, flamia_cuda_train_step (quantize + forward +
 *              backward), captured once into a CUDA graph and timed by replaying it:
 *              what a framework's captured layer costs (issue 5)
 * The peers (cuDNN BF16 SDPA, FlexAttention with a document mask, PyTorch varlen
 * attention) are timed by peers.py in the same device command (passes fwd, fwdbwd)
 * and written to the same schema; join.py turns both files into ratios (our train
 * against the peers' fwdbwd).
 *
 * Method (/work/.library/device/METHOD.md): verify before timing (outputs
 * poisoned, every element finite, no non-finite-input flag, the first
 * document's first rows against the CPU reference of the same recipe, within the
 * bound of fwd_verified below; for the
 * backward and the graph replay: dQ, dK, dV poisoned, every element written and
 * finite - the gpu test suite compares gradients with the reference), then warm
 * up and take the median of many CUDA-event timings, one event pair per call
 * (per graph replay). A pass whose first call is slow gets fewer calls
 * (--pass-budget; the row's iters says how many were timed). Inputs: random BF16
 * (two uniforms summed, never zeros; dO scaled by 1e-2), generated once for the
 * largest workload and shared by prefix. The copy ceiling is measured in the same
 * run (device-to-device cudaMemcpy, bytes read + written).
 *
 * FLOPs: forward = 4 * D * Hq * sum over documents of L(L+1)/2 (causal pairs
 * only: the discount the paper's appendix E insists on); bwd = 2.5 x forward,
 * train = 3.5 x forward (quantize has none; the FlashAttention convention, as
 * peers.py's fwdbwd). Quantize bytes: BF16 Q, K, V read once + E4M3 codes, V
 * transposed, exponents written (BF16 kind: BF16 copies written).
 *
 * Phases per workload, so that a kernel fault (which loses the CUDA context)
 * costs the least: 1. quantize of every recipe, 2. forward of every recipe,
 * 3. backward and training call of every recipe.
 *
 * Tables: timings (long format, shared with peers.py), quantize (bandwidth),
 * verify, ceiling, layouts (every workload's document lengths, read by peers.py).
 * Example: latency --backend cuda --out data/runs/h200/latency.h5 --passes fwd,train
 */
#include <cuda_runtime_api.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia_formats.h"
#include "xp.h"

#define CUDA_OK(call)                                                                               \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) xp_die("latency: %s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, \
                                      __LINE__);                                                    \
    } while (0)

/* frees after a possible fault: errors ignored (the context may be gone) */
#define CUDA_NOFAIL(call) ((void)(call))

static const double kCopyNominal = 4.2e12; /* bytes/s, measured on an H200 (KINDS.md) */

enum { P_QUANT = 1, P_FWD = 2, P_BOTH = 4, P_BWD = 8, P_TRAIN = 16, P_ALL = 31 };
static const char *const kPassNames[5] = {"quant", "fwd", "fwd+quant", "bwd", "train"};

typedef struct {
    const flamia_recipe *rec;
    const flamia_shape *sh;
    const void *q, *k, *v;
    void *ws, *o;
    float *lse;
    size_t wsb;
    cudaStream_t st;
    flamia_status last;
    const void *dout;            /* backward input dO */
    void *gq, *gk, *gv;          /* backward outputs dQ, dK, dV */
    cudaGraphExec_t graph;       /* the captured training call */
    const char *graph_err;       /* why the last graph launch failed */
} call_ctx;

static void do_quant(call_ctx *c) {
    c->last = flamia_cuda_quantize(c->rec, c->sh, c->q, c->k, c->v, c->ws, c->wsb, c->st);
}
static void do_fwd(call_ctx *c) {
    c->last = flamia_cuda_forward(c->rec, c->sh, c->ws, c->wsb, c->o, c->lse, c->st);
}
static void do_both(call_ctx *c) {
    c->last = flamia_cuda_quantize(c->rec, c->sh, c->q, c->k, c->v, c->ws, c->wsb, c->st);
    if (c->last == FLAMIA_OK) c->last = flamia_cuda_forward(c->rec, c->sh, c->ws, c->wsb, c->o, c->lse, c->st);
}
static void do_bwd(call_ctx *c) {
    c->last = flamia_cuda_backward(c->rec, c->sh, c->ws, c->wsb, c->o, c->lse, c->dout, c->gq, c->gk, c->gv, c->st);
}
static void do_graph(call_ctx *c) {
    cudaError_t e = cudaGraphLaunch(c->graph, c->st);
    c->last = e == cudaSuccess ? FLAMIA_OK : FLAMIA_ERR_CUDA;
    c->graph_err = e == cudaSuccess ? NULL : cudaGetErrorString(e);
}

/* Median and min (ms) of event-timed calls after warm-up; NaN if a call fails; *n_timed says
 * how many were timed. The first warm-up call is timed too: when warm-up + iters calls of that
 * cost exceed budget_s (the plain FP32 backward takes seconds a call on the big workloads),
 * fewer are made, never fewer than 3 timed (or iters if smaller). */
static double time_calls(void (*fn)(call_ctx *), call_ctx *c, int warmup, int iters, double budget_s,
                         double *min_ms, int *n_timed) {
    *n_timed = 0;
    double med = NAN;
    int w = warmup, n = iters;
    cudaEvent_t *ev = xp_xmalloc(sizeof(cudaEvent_t) * 2 * (size_t)iters);
    double *t = xp_xmalloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < 2 * iters; i++) CUDA_OK(cudaEventCreate(&ev[i]));
    if (w > 0) {
        CUDA_OK(cudaEventRecord(ev[0], c->st));
        fn(c);
        CUDA_OK(cudaEventRecord(ev[1], c->st));
        if (c->last != FLAMIA_OK) goto out;
        CUDA_OK(cudaStreamSynchronize(c->st));
        float est;
        CUDA_OK(cudaEventElapsedTime(&est, ev[0], ev[1]));
        w--;
        double fit = budget_s * 1e3 / (est > 1e-3 ? est : 1e-3) - 1; /* calls left in the budget */
        if (budget_s > 0 && fit < w + n) {
            int lo = iters < 3 ? iters : 3;
            w = (int)(fit / 6) < w ? (int)(fit / 6) : w;
            n = (int)fit - w < lo ? lo : (int)fit - w > iters ? iters : (int)fit - w;
        }
    }
    for (int i = 0; i < w; i++) {
        fn(c);
        if (c->last != FLAMIA_OK) goto out;
    }
    for (int i = 0; i < n; i++) {
        CUDA_OK(cudaEventRecord(ev[2 * i], c->st));
        fn(c);
        CUDA_OK(cudaEventRecord(ev[2 * i + 1], c->st));
        if (c->last != FLAMIA_OK) goto out;
    }
    CUDA_OK(cudaStreamSynchronize(c->st));
    for (int i = 0; i < n; i++) {
        float ms;
        CUDA_OK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        t[i] = ms;
    }
    med = xp_median(t, (size_t)n);
    if (min_ms) *min_ms = t[0];
    *n_timed = n;
out:
    CUDA_OK(cudaStreamSynchronize(c->st));
    for (int i = 0; i < 2 * iters; i++) CUDA_OK(cudaEventDestroy(ev[i]));
    free(ev);
    free(t);
    return med;
}

/* cheap non-zero pseudo-normal BF16: (u1 + u2 - 1) * 2.45 * scale (variance scale^2), xorshift */
static void fill_bf16(uint16_t *x, size_t n, uint64_t seed, double scale) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double u1 = (double)(s >> 40) * (1.0 / 16777216.0), u2 = (double)(s & 0xffffff) * (1.0 / 16777216.0);
        x[i] = flamia_bf16_bits((float)((u1 + u2 - 1.0) * 2.449 * scale));
    }
}

/* 1 when every element of a BF16 device tensor is finite (the 0xFF poison is BF16 NaN, so an
 * element the kernel did not write fails too); the stream must be synchronized before */
static int bf16_all_finite(const void *d, size_t n, uint16_t *h) {
    CUDA_OK(cudaMemcpy(h, d, n * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if ((h[i] & 0x7f80) == 0x7f80) return 0;
    return 1;
}

static void poison_grads(const call_ctx *c, size_t nq, size_t nk) {
    CUDA_OK(cudaMemsetAsync(c->gq, 0xFF, nq * 2, c->st));
    CUDA_OK(cudaMemsetAsync(c->gk, 0xFF, nk * 2, c->st));
    CUDA_OK(cudaMemsetAsync(c->gv, 0xFF, nk * 2, c->st));
}

/* Captures one flamia_cuda_train_step on c->st (a non-default stream) into an executable graph;
 * NULL with the reason in note when the call, the capture or the instantiation fails. */
static cudaGraphExec_t capture_train(const call_ctx *c, char *note, size_t nn) {
    cudaGraph_t g = NULL;
    cudaGraphExec_t ex = NULL;
    cudaError_t e = cudaStreamBeginCapture(c->st, cudaStreamCaptureModeGlobal);
    if (e != cudaSuccess) {
        snprintf(note, nn, "train: cudaStreamBeginCapture: %s", cudaGetErrorString(e));
        (void)cudaGetLastError();
        return NULL;
    }
    flamia_status s = flamia_cuda_train_step(c->rec, c->sh, c->q, c->k, c->v, c->dout, c->o, c->lse, c->gq, c->gk,
                                             c->gv, c->ws, c->wsb, c->st);
    if (s != FLAMIA_OK) snprintf(note, nn, "train_step under graph capture: %s", flamia_last_error());
    e = cudaStreamEndCapture(c->st, &g); /* always: ends the capture whatever happened */
    if (s == FLAMIA_OK && e != cudaSuccess)
        snprintf(note, nn, "train: cudaStreamEndCapture: %s", cudaGetErrorString(e));
    if (s == FLAMIA_OK && e == cudaSuccess) {
        e = cudaGraphInstantiate(&ex, g, 0);
        if (e != cudaSuccess) {
            snprintf(note, nn, "train: cudaGraphInstantiate: %s", cudaGetErrorString(e));
            ex = NULL;
        }
    }
    if (g) CUDA_NOFAIL(cudaGraphDestroy(g));
    (void)cudaGetLastError(); /* capture errors are not sticky: clear them for the next calls */
    return ex;
}

/* --passes: comma list of pass names -> bit mask; 0 with a message on a bad list */
static int parse_passes(const char *s) {
    int n, mask = 0;
    char **v = xp_split_list(s, &n);
    for (int i = 0; i < n; i++) {
        int p = 0;
        while (p < 5 && strcmp(v[i], kPassNames[p])) p++;
        if (p == 5) {
            fprintf(stderr, "error: --passes: unknown pass '%s' (quant, fwd, fwd+quant, bwd, train)\n", v[i]);
            xp_strv_free(v);
            return 0;
        }
        mask |= 1 << p;
    }
    xp_strv_free(v);
    if (!mask) fprintf(stderr, "error: --passes: empty list\n");
    return mask;
}

typedef struct {
    xp_table *tt;
    const xp_workload *w;
} row_ctx;

static void timing_row(const row_ctx *r, const char *system, const char *pass, double ms, double mn, int n,
                       double flops, const char *note) {
    xp_table *tt = r->tt;
    xp_row_begin(tt);
    xp_set_s(tt, "workload", r->w->name);
    xp_set_s(tt, "system", system);
    xp_set_s(tt, "pass", pass);
    xp_set_i(tt, "total_tokens", r->w->total_tokens);
    xp_set_i(tt, "num_docs", r->w->num_docs);
    xp_set_i(tt, "heads_q", r->w->heads_q);
    xp_set_i(tt, "heads_kv", r->w->heads_kv);
    xp_set_i(tt, "head_dim", r->w->head_dim);
    xp_set_f(tt, "ms", ms);
    xp_set_f(tt, "ms_min", mn);
    xp_set_i(tt, "iters", n);
    xp_set_f(tt, "flops", flops);
    xp_set_f(tt, "tflops", flops > 0 ? flops / (ms * 1e-3) / 1e12 : NAN);
    xp_set_s(tt, "note", isnan(ms) ? note : "");
    xp_row_end(tt);
}

/* what phases 1-3 learn about one recipe of one workload (the verify row is written last) */
typedef struct {
    int valid; /* workspace size known: the recipe and shape are accepted */
    double q_ms, q_min;
    int q_n, eflag;
    int fwd_ok, finite, rows;
    double rel, rel64, bound; /* O vs the reference; the reference vs FP64; rel's bound */
    flamia_recipe rec;        /* the preset, its workspace bytes and system name (phase 1) */
    size_t wsb;
    char system[64];
    int grads_finite, train_finite; /* -1: not checked (pass not asked for, or not reached) */
    char note[512];
} recipe_state;

/* The forward checks of the gpu suite (docs/numerics.md 8.2): every output written and
 * finite, no non-finite input, and O within the bound of its recipe: 4e-3 for bf16; for
 * the FP8 recipes a quarter of the recipe's own error vs the FP64 textbook (Hopper's FP8
 * accumulation moves P codes across rounding midpoints, so the GPU cannot match the
 * reference to FP32 accuracy). */
static int fwd_verified(const recipe_state *rs) {
    return rs->fwd_ok && rs->finite && rs->eflag == 0 && (rs->rows == 0 || rs->rel <= rs->bound);
}

static void usage(const xp_opts *d) {
    printf("usage: latency --backend cuda --out FILE.h5 [options]\n"
           "Times the Hopper kernels per workload and recipe: fused quantize, forward, quantize+forward,\n"
           "backward, and the whole training call (train_step) replayed from a CUDA graph. Median of\n"
           "CUDA-event timings after warm-up, causal-discounted TFLOP/s, quantize bytes/s against the\n"
           "measured copy ceiling. Verifies each case before timing it.\n"
           "Driver options:\n"
           "  --passes LIST        comma list of quant, fwd, fwd+quant, bwd, train (default all)\n"
           "  --warmup N           untimed calls before timing (default 10)\n"
           "  --iters N            timed calls, median reported (default 50)\n"
           "  --pass-budget S      seconds of calls per pass before warm-up and iters are cut (at\n"
           "                       least 3 timed; default 10, 0 = never cut)\n"
           "  --verify-rows N      rows of the first document checked against the CPU reference\n"
           "                       (default 256; 0 skips the reference check)\n"
           "  --deterministic      deterministic dQ (flamia_cuda_set_deterministic); systems are\n"
           "                       named flamia-RECIPE-det\n"
           "  --o-sum-interval N   the FP8 forward adds O's accumulator into its FP32 sum every N key\n"
           "                       tiles (flamia_cuda_set_o_sum_interval: 0 never, 2..64 powers of two;\n"
           "                       default the library's, 4); systems are named flamia-RECIPE-osumN\n");
    xp_print_common_usage(d);
}

/* the driver's own options */
enum { O_WARMUP = 1, O_ITERS, O_VROWS, O_PASSES, O_BUDGET, O_DET, O_OSUM };
static const struct option driver_options[] = {{"warmup", required_argument, 0, O_WARMUP},
                                               {"iters", required_argument, 0, O_ITERS},
                                               {"verify-rows", required_argument, 0, O_VROWS},
                                               {"passes", required_argument, 0, O_PASSES},
                                               {"pass-budget", required_argument, 0, O_BUDGET},
                                               {"deterministic", no_argument, 0, O_DET},
                                               {"o-sum-interval", required_argument, 0, O_OSUM},
                                               {0, 0, 0, 0}};
typedef struct {
    int warmup, iters, verify_rows, passes, deterministic, o_sum;
    double budget;
    const char *passes_arg;
} driver_args;

static int handle_opt(int c, const char *arg, void *ctx) {
    driver_args *a = ctx;
    switch (c) {
    case O_WARMUP: return xp_parse_int("--warmup", arg, 0, 100000, &a->warmup);
    case O_ITERS: return xp_parse_int("--iters", arg, 1, 100000, &a->iters);
    case O_VROWS: return xp_parse_int("--verify-rows", arg, 0, 4096, &a->verify_rows);
    case O_PASSES:
        if (!(a->passes = parse_passes(arg))) return -1;
        a->passes_arg = arg;
        return 0;
    case O_BUDGET: return xp_parse_double("--pass-budget", arg, 0, 1e6, &a->budget);
    case O_DET: a->deterministic = 1; return 0;
    case O_OSUM: return xp_parse_int("--o-sum-interval", arg, 0, 64, &a->o_sum);
    }
    return 0;
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("latency");
    o.backend = "cuda";
    o.backends_supported = 2;
    o.workloads = "4x4096,16x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k,gqa-16x1024";
    o.recipes = "mxfp8,mxfp8-exact,bf16";
    driver_args args = {.warmup = 10, .iters = 50, .verify_rows = 256, .passes = P_ALL, .deterministic = 0,
                        .o_sum = -1, .budget = 10.0, .passes_arg = "quant,fwd,fwd+quant,bwd,train"};
    int parsed = xp_parse_options(&o, argc, argv, driver_options, handle_opt, &args, usage);
    if (parsed) return parsed == 1 ? 0 : 2;
    if (xp_opts_finish(&o)) return 2;
    if (args.deterministic && flamia_cuda_set_deterministic(1) != FLAMIA_OK) xp_die("%s", flamia_last_error());
    if (args.o_sum >= 0 && flamia_cuda_set_o_sum_interval(args.o_sum) != FLAMIA_OK)
        xp_die("%s", flamia_last_error());
    const int want_bwd = (args.passes & (P_BWD | P_TRAIN)) != 0;

    int nw, nr;
    char **rl = xp_split_list(o.recipes, &nr);
    if (nr > 16) {
        fprintf(stderr, "error: at most 16 recipes per run\n");
        return 2;
    }
    xp_workload *ws = xp_workloads_make(&o, &nw);
    if (!ws) return 2;
    size_t maxq = 0, maxk = 0;
    for (int i = 0; i < nw; i++) {
        size_t nq = (size_t)ws[i].total_tokens * ws[i].heads_q * ws[i].head_dim;
        size_t nk = (size_t)ws[i].total_tokens * ws[i].heads_kv * ws[i].head_dim;
        if (nq > maxq) maxq = nq;
        if (nk > maxk) maxk = nk;
    }

    /* ---- tables */
    xp_table *tt = xp_table_new("timings", "median latency per workload, system and pass (long format, "
                                           "shared with peers.py)");
    xp_table_col(tt, "workload", XP_STR, "", "workload name");
    xp_table_col(tt, "system", XP_STR, "", "flamia-<recipe> or a peer");
    xp_table_col(tt, "pass", XP_STR, "",
                 "quant, fwd, fwd+quant, bwd (backward alone), train (train_step replayed from a CUDA graph) "
                 "(ours); fwd, fwdbwd (peers)");
    xp_table_col(tt, "total_tokens", XP_I64, "tokens", "packed tokens");
    xp_table_col(tt, "num_docs", XP_I64, "docs", "documents");
    xp_table_col(tt, "heads_q", XP_I64, "heads", "query heads");
    xp_table_col(tt, "heads_kv", XP_I64, "heads", "key/value heads");
    xp_table_col(tt, "head_dim", XP_I64, "1", "head dimension");
    xp_table_col(tt, "ms", XP_F64, "ms", "median over iters CUDA-event timings");
    xp_table_col(tt, "ms_min", XP_F64, "ms", "fastest timing");
    xp_table_col(tt, "iters", XP_I64, "1", "timed calls (fewer than --iters when --pass-budget cut them)");
    xp_table_col(tt, "flops", XP_F64, "FLOP",
                 "causal-discounted FLOPs of the pass: fwd and fwd+quant F = 4 D Hq sum L(L+1)/2, "
                 "bwd 2.5 F, train 3.5 F (quantize has none), 0 for quant");
    xp_table_col(tt, "tflops", XP_F64, "TFLOP/s", "flops / ms (NaN for quant)");
    xp_table_col(tt, "note", XP_STR, "", "empty, or why the row has no time");

    xp_table *tq = xp_table_new("quantize", "fused quantize kernel: bytes moved and achieved bandwidth");
    xp_table_col(tq, "workload", XP_STR, "", "workload name");
    xp_table_col(tq, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(tq, "bytes", XP_F64, "B", "bytes read + written (minimum traffic)");
    xp_table_col(tq, "ms", XP_F64, "ms", "median time");
    xp_table_col(tq, "gbps", XP_F64, "GB/s", "bytes / ms");
    xp_table_col(tq, "frac_copy_measured", XP_F64, "1", "gbps / measured device copy bandwidth");
    xp_table_col(tq, "frac_copy_4p2", XP_F64, "1", "gbps / 4200 GB/s");

    xp_table *tv = xp_table_new("verify", "checks made before timing each case");
    xp_table_col(tv, "workload", XP_STR, "", "workload name");
    xp_table_col(tv, "recipe", XP_STR, "", "recipe preset");
    xp_table_col(tv, "outputs_finite", XP_I64, "1", "1 when every O and lse element was written and finite");
    xp_table_col(tv, "err_flag", XP_I64, "1", "non-finite-input flag after quantize (must be 0)");
    xp_table_col(tv, "ref_rows", XP_I64, "tokens", "first-document rows compared with flamia_ref_forward");
    xp_table_col(tv, "ref_rel_l2", XP_F64, "1", "relative L2 error of O on those rows vs flamia_ref_forward");
    xp_table_col(tv, "ref_vs_f64_rel_l2", XP_F64, "1", "the reference's own relative L2 error vs the FP64 textbook");
    xp_table_col(tv, "ref_bound", XP_F64, "1",
                 "bound on ref_rel_l2: 4e-3 (bf16), 0.25 x ref_vs_f64_rel_l2 (FP8 recipes; numerics.md 8.2)");
    xp_table_col(tv, "grads_finite", XP_I64, "1",
                 "1 when flamia_cuda_backward wrote every dQ, dK, dV element finite (poisoned before); "
                 "0 when not or when it failed; -1 not checked (no bwd or train pass, or not reached)");
    xp_table_col(tv, "train_grads_finite", XP_I64, "1",
                 "the same for one replay of the captured train_step graph; 0 also when capture failed; "
                 "-1 not checked (no train pass, or not reached)");
    xp_table_col(tv, "ok", XP_I64, "1",
                 "1 when the forward checks passed and no gradient check failed (grads_finite and "
                 "train_grads_finite not 0)");
    xp_table_col(tv, "note", XP_STR, "", "forward / backward / capture status when it failed");

    xp_table *tc = xp_table_new("ceiling", "device-to-device copy bandwidth measured in this run");
    xp_table_col(tc, "bytes", XP_F64, "B", "bytes read + written per copy");
    xp_table_col(tc, "ms", XP_F64, "ms", "median of 20 copies");
    xp_table_col(tc, "gbps", XP_F64, "GB/s", "bytes / ms");

    xp_table *tl = xp_table_new("layouts", "document lengths of every workload (peers.py reads these)");
    xp_table_col(tl, "workload", XP_STR, "", "workload name");
    xp_table_col(tl, "doc", XP_I64, "1", "document index");
    xp_table_col(tl, "start", XP_I64, "tokens", "first token");
    xp_table_col(tl, "length", XP_I64, "tokens", "document length");
    for (int i = 0; i < nw; i++)
        for (int d = 0; d < ws[i].num_docs; d++) {
            xp_row_begin(tl);
            xp_set_s(tl, "workload", ws[i].name);
            xp_set_i(tl, "doc", d);
            xp_set_i(tl, "start", ws[i].cu_seqlens[d]);
            xp_set_i(tl, "length", ws[i].cu_seqlens[d + 1] - ws[i].cu_seqlens[d]);
            xp_row_end(tl);
        }

    cudaStream_t st;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

    /* ---- copy ceiling: 1 GiB device-to-device */
    double copy_gbps;
    {
        size_t cb = (size_t)1 << 30;
        void *a, *b;
        CUDA_OK(cudaMalloc(&a, cb));
        CUDA_OK(cudaMalloc(&b, cb));
        CUDA_OK(cudaMemset(a, 0x3c, cb));
        cudaEvent_t e0, e1;
        CUDA_OK(cudaEventCreate(&e0));
        CUDA_OK(cudaEventCreate(&e1));
        double t[20];
        for (int i = 0; i < 23; i++) {
            CUDA_OK(cudaEventRecord(e0, st));
            CUDA_OK(cudaMemcpyAsync(b, a, cb, cudaMemcpyDeviceToDevice, st));
            CUDA_OK(cudaEventRecord(e1, st));
            CUDA_OK(cudaEventSynchronize(e1));
            float ms;
            CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
            if (i >= 3) t[i - 3] = ms;
        }
        double med = xp_median(t, 20);
        copy_gbps = 2.0 * (double)cb / (med * 1e-3) / 1e9;
        xp_row_begin(tc);
        xp_set_f(tc, "bytes", 2.0 * (double)cb);
        xp_set_f(tc, "ms", med);
        xp_set_f(tc, "gbps", copy_gbps);
        xp_row_end(tc);
        CUDA_OK(cudaFree(a));
        CUDA_OK(cudaFree(b));
        CUDA_OK(cudaEventDestroy(e0));
        CUDA_OK(cudaEventDestroy(e1));
        if (!o.quiet) fprintf(stderr, "latency: device copy %.0f GB/s (read + write)\n", copy_gbps);
    }

    /* ---- inputs, shared by prefix */
    uint16_t *hq = xp_xmalloc(maxq * 2), *hk = xp_xmalloc(maxk * 2), *hv = xp_xmalloc(maxk * 2);
    fill_bf16(hq, maxq, o.seed * 3 + 0, 1.0);
    fill_bf16(hk, maxk, o.seed * 3 + 1, 1.0);
    fill_bf16(hv, maxk, o.seed * 3 + 2, 1.0);
    void *dq, *dk, *dv, *dO;
    float *dlse;
    CUDA_OK(cudaMalloc(&dq, maxq * 2));
    CUDA_OK(cudaMalloc(&dk, maxk * 2));
    CUDA_OK(cudaMalloc(&dv, maxk * 2));
    CUDA_OK(cudaMalloc(&dO, maxq * 2));
    CUDA_OK(cudaMalloc((void **)&dlse, maxq / 64 * 4 + 1024)); /* T * Hq floats (D >= 64) */
    CUDA_OK(cudaMemcpy(dq, hq, maxq * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dk, hk, maxk * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dv, hv, maxk * 2, cudaMemcpyHostToDevice));
    uint16_t *ho = xp_xmalloc(maxq * 2); /* also the host copy of each gradient (nk <= nq) */
    float *hlse = xp_xmalloc(maxq / 64 * 4 + 1024);
    /* backward: dO (small, as a loss gradient is) in, dQ dK dV out; only when a pass needs them */
    void *d_dout = NULL, *d_gq = NULL, *d_gk = NULL, *d_gv = NULL;
    if (want_bwd) {
        uint16_t *hdo = xp_xmalloc(maxq * 2);
        fill_bf16(hdo, maxq, o.seed * 3 + 0x5eed0000ull, 1e-2);
        CUDA_OK(cudaMalloc(&d_dout, maxq * 2));
        CUDA_OK(cudaMalloc(&d_gq, maxq * 2));
        CUDA_OK(cudaMalloc(&d_gk, maxk * 2));
        CUDA_OK(cudaMalloc(&d_gv, maxk * 2));
        CUDA_OK(cudaMemcpy(d_dout, hdo, maxq * 2, cudaMemcpyHostToDevice));
        free(hdo);
    }

    const int phases = want_bwd ? 2 : 1; /* progress steps per recipe: forward, backward */
    xp_progress pr;
    xp_progress_init(&pr, "latency", (long)nw * nr * phases, o.quiet);
    int dead = 0; /* a kernel fault lost the CUDA context: record, skip the rest, still write */
    for (int wi = 0; wi < nw; wi++) {
        xp_workload *w = &ws[wi];
        const int T = w->total_tokens, Hq = w->heads_q, Hkv = w->heads_kv, D = w->head_dim;
        const size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D, nl = (size_t)T * Hq;
        if (dead) {
            fprintf(stderr, "latency: %s: not run (CUDA context lost earlier in this process)\n", w->name);
            for (int ri = 0; ri < nr * phases; ri++) xp_progress_step(&pr, w->name);
            continue;
        }
        int32_t *dcu;
        CUDA_OK(cudaMalloc((void **)&dcu, sizeof(int32_t) * (size_t)(w->num_docs + 1)));
        CUDA_OK(cudaMemcpy(dcu, w->cu_seqlens, sizeof(int32_t) * (size_t)(w->num_docs + 1),
                           cudaMemcpyHostToDevice));
        flamia_shape sh = xp_workload_shape(w);
        sh.cu_seqlens = dcu;
        sh.cu_seqlens_host = w->cu_seqlens; /* as a framework that knows its documents passes them */
        const double flops = 4.0 * D * Hq * xp_workload_causal_pairs(w);
        const row_ctx rc = {tt, w};
        recipe_state rs_all[16];

        /* ---- phase 1: quantize of every recipe, checked and timed before any forward runs
         * (a forward that faults loses the CUDA context; these figures must survive it) */
        for (int ri = 0; ri < nr; ri++) {
            recipe_state *rs = &rs_all[ri];
            memset(rs, 0, sizeof *rs);
            rs->q_ms = rs->q_min = rs->rel = rs->rel64 = rs->bound = NAN;
            rs->eflag = rs->grads_finite = rs->train_finite = -1;
            if (flamia_recipe_preset(rl[ri], &rs->rec) != FLAMIA_OK) xp_die("%s", flamia_last_error());
            if (flamia_cuda_workspace_size(&rs->rec, &sh, &rs->wsb) != FLAMIA_OK) {
                fprintf(stderr, "latency: %s %s: %s (skipped)\n", w->name, rl[ri], flamia_last_error());
                continue;
            }
            char osum_tag[16] = "";
            if (args.o_sum >= 0) snprintf(osum_tag, sizeof osum_tag, "-osum%d", args.o_sum);
            snprintf(rs->system, sizeof rs->system, "flamia-%s%s%s", rl[ri], args.deterministic ? "-det" : "",
                     osum_tag);
            rs->valid = 1;
            const flamia_recipe rec = rs->rec;
            const size_t wsb = rs->wsb;
            void *dws;
            CUDA_OK(cudaMalloc(&dws, wsb));
            call_ctx cx = {&rec, &sh, dq, dk, dv, dws, dO, dlse, wsb, st, FLAMIA_OK, 0, 0, 0, 0, 0, 0};
            do_quant(&cx);
            if (cx.last != FLAMIA_OK) xp_die("latency: quantize %s %s: %s", w->name, rl[ri], flamia_last_error());
            CUDA_OK(cudaStreamSynchronize(st));
            CUDA_OK(cudaMemcpy(&rs->eflag, dws, 4, cudaMemcpyDeviceToHost)); /* err_flag at offset 0 */
            if (args.passes & P_QUANT)
                rs->q_ms = time_calls(do_quant, &cx, args.warmup, args.iters, args.budget, &rs->q_min, &rs->q_n);
            CUDA_OK(cudaFree(dws));
        }

        /* ---- phase 2: forward per recipe */
        for (int ri = 0; ri < nr; ri++) {
            recipe_state *rs = &rs_all[ri];
            if (!rs->valid) {
                for (int p = 0; p < phases; p++) xp_progress_step(&pr, w->name);
                continue;
            }
            const flamia_recipe rec = rs->rec;
            const size_t wsb = rs->wsb;
            const char *system = rs->system;
            char *note = rs->note;
            void *dws = NULL;
            if (!dead) CUDA_OK(cudaMalloc(&dws, wsb));
            call_ctx cx = {&rec, &sh, dq, dk, dv, dws, dO, dlse, wsb, st, FLAMIA_OK, 0, 0, 0, 0, 0, 0};
            if (dead)
                snprintf(note, sizeof rs->note, "forward not run: the CUDA context was lost earlier in this process");
            else {
                /* forward: verify (poisoned outputs), then time */
                CUDA_OK(cudaMemsetAsync(dO, 0xFF, nq * 2, st));
                CUDA_OK(cudaMemsetAsync(dlse, 0xFF, nl * 4, st));
                do_quant(&cx);
                do_fwd(&cx);
                rs->fwd_ok = cx.last == FLAMIA_OK;
                if (!rs->fwd_ok) snprintf(note, sizeof rs->note, "forward: %s", flamia_last_error());
                cudaError_t fe = cudaStreamSynchronize(st);
                if (fe != cudaSuccess) {
                    snprintf(note, sizeof rs->note, "forward faulted: %s", cudaGetErrorString(fe));
                    fprintf(stderr, "latency: %s %s: %s\n", w->name, rl[ri], note);
                    rs->fwd_ok = 0;
                    dead = 1;
                }
            }
            if (rs->fwd_ok) {
                CUDA_OK(cudaMemcpy(ho, dO, nq * 2, cudaMemcpyDeviceToHost));
                CUDA_OK(cudaMemcpy(hlse, dlse, nl * 4, cudaMemcpyDeviceToHost));
                int finite = 1;
                for (size_t i = 0; i < nq && finite; i++) finite = (ho[i] & 0x7f80) != 0x7f80;
                for (size_t i = 0; i < nl && finite; i++) finite = isfinite(hlse[i]);
                rs->finite = finite;
                int rows = w->cu_seqlens[1] < args.verify_rows ? w->cu_seqlens[1] : args.verify_rows;
                rs->rows = rows;
                if (rows > 0) {
                    /* rows [0, rows) of document 0 depend only on its tokens [0, rows) (causal) */
                    size_t rq = (size_t)rows * Hq * D, rk = (size_t)rows * Hkv * D;
                    float *fq = xp_xmalloc(rq * 4), *fk = xp_xmalloc(rk * 4), *fv = xp_xmalloc(rk * 4);
                    float *fo = xp_xmalloc(rq * 4), *fl = xp_xmalloc((size_t)rows * Hq * 4);
                    for (size_t i = 0; i < rq; i++) fq[i] = flamia_bf16_value(hq[i]);
                    for (size_t i = 0; i < rk; i++) fk[i] = flamia_bf16_value(hk[i]);
                    for (size_t i = 0; i < rk; i++) fv[i] = flamia_bf16_value(hv[i]);
                    int32_t cu1[2] = {0, rows};
                    flamia_shape s1 = {rows, 1, cu1, Hq, Hkv, D, 1, 0.0f, rows, NULL};
                    if (flamia_ref_forward(&rec, &s1, fq, fk, fv, fo, fl) != FLAMIA_OK)
                        xp_die("latency: reference: %s", flamia_last_error());
                    double num = 0, den = 0;
                    for (size_t i = 0; i < rq; i++) {
                        double dd = (double)flamia_bf16_value(ho[i]) - fo[i];
                        num += dd * dd;
                        den += (double)fo[i] * fo[i];
                    }
                    rs->rel = sqrt(num / (den + 1e-300));
                    double *o64 = xp_xmalloc(rq * 8), *l64 = xp_xmalloc((size_t)rows * Hq * 8);
                    if (flamia_ref64_forward(&s1, fq, fk, fv, o64, l64) != FLAMIA_OK)
                        xp_die("latency: FP64 reference: %s", flamia_last_error());
                    double n64 = 0, d64 = 0;
                    for (size_t i = 0; i < rq; i++) {
                        n64 += (fo[i] - o64[i]) * (fo[i] - o64[i]);
                        d64 += o64[i] * o64[i];
                    }
                    rs->rel64 = sqrt(n64 / (d64 + 1e-300));
                    rs->bound = strcmp(rl[ri], "bf16") ? 0.25 * rs->rel64 : 4e-3;
                    free(fq); free(fk); free(fv); free(fo); free(fl); free(o64); free(l64);
                }
            }
            const int fwd_checks = fwd_verified(rs);
            if (rs->fwd_ok && !fwd_checks)
                fprintf(stderr, "latency: %s %s: VERIFY FAILED (finite %d, err_flag %d, rel L2 %.3e): timing anyway, "
                                "marked in table verify\n", w->name, rl[ri], rs->finite, rs->eflag, rs->rel);

            /* ---- time */
            void (*fns[3])(call_ctx *) = {do_quant, do_fwd, do_both};
            double ms[3] = {rs->q_ms, NAN, NAN};
            for (int p = 0; p < 3; p++) {
                if (!(args.passes & (1 << p))) continue;
                double mn = p == 0 ? rs->q_min : NAN;
                int n = p == 0 ? rs->q_n : 0;
                if (p > 0 && rs->fwd_ok)
                    ms[p] = time_calls(fns[p], &cx, args.warmup, args.iters, args.budget, &mn, &n);
                timing_row(&rc, system, kPassNames[p], ms[p], mn, n, p ? flops : 0.0,
                           note[0] ? note : flamia_last_error());
            }

            /* quantize bytes: minimum traffic (V^T counted as its T codes per row, not the
             * alignment gaps between documents) */
            double bytes = 2.0 * (double)(nq + 2 * nk); /* BF16 reads */
            if (!strcmp(rl[ri], "bf16")) bytes += 2.0 * (double)(nq + 2 * nk);
            else bytes += (double)(nq + 2 * nk) + (double)Hkv * D * T + (double)T * (Hq + 2 * Hkv) + 4;
            double gbps = bytes / (ms[0] * 1e-3) / 1e9;
            if (args.passes & P_QUANT) {
                xp_row_begin(tq);
                xp_set_s(tq, "workload", w->name);
                xp_set_s(tq, "recipe", rl[ri]);
                xp_set_f(tq, "bytes", bytes);
                xp_set_f(tq, "ms", ms[0]);
                xp_set_f(tq, "gbps", gbps);
                xp_set_f(tq, "frac_copy_measured", gbps / copy_gbps);
                xp_set_f(tq, "frac_copy_4p2", gbps * 1e9 / kCopyNominal);
                xp_row_end(tq);
            }
            if (!o.quiet)
                fprintf(stderr,
                        "  %-14s %-12s quant %8.3f ms (%5.0f GB/s, %3.0f%% of copy) | fwd %8.3f ms %6.1f TFLOP/s "
                        "| fwd+quant %8.3f ms %6.1f TFLOP/s | verify %s rel %.1e\n",
                        w->name, rl[ri], ms[0], gbps, 100.0 * gbps / copy_gbps, ms[1],
                        flops / (ms[1] * 1e-3) / 1e12, ms[2], flops / (ms[2] * 1e-3) / 1e12,
                        fwd_checks ? "ok" : "FAIL", rs->rel);
            CUDA_NOFAIL(cudaFree(dws));
            xp_progress_step(&pr, w->name);
        }

        /* ---- phase 3: backward and the captured training call per recipe (after every forward:
         * a backward that faults loses the context, and the forward figures must survive it) */
        for (int ri = 0; ri < nr && want_bwd; ri++) {
            recipe_state *rs = &rs_all[ri];
            if (!rs->valid) continue; /* progress stepped in phase 2 */
            const flamia_recipe rec = rs->rec;
            const size_t wsb = rs->wsb;
            const char *system = rs->system;
            char bnote[512] = "", tnote[512] = "";
            double b_ms = NAN, b_min = NAN, t_ms = NAN, t_min = NAN;
            int b_n = 0, t_n = 0;
            void *dws = NULL;
            call_ctx cx = {&rec, &sh, dq, dk, dv, NULL, dO, dlse, wsb, st, FLAMIA_OK, d_dout, d_gq, d_gk, d_gv, 0, 0};
            if (dead)
                snprintf(bnote, sizeof bnote, "backward not run: the CUDA context was lost earlier in this process");
            else if (!rs->fwd_ok) snprintf(bnote, sizeof bnote, "backward not run: the forward failed");
            if (bnote[0]) snprintf(tnote, sizeof tnote, "%s", bnote);
            int bwd_ok = 0;
            if (!bnote[0]) {
                CUDA_OK(cudaMalloc(&dws, wsb));
                cx.ws = dws;
                /* verify: quantize + forward fill the workspace, O and lse; gradients poisoned */
                poison_grads(&cx, nq, nk);
                do_both(&cx);
                if (cx.last == FLAMIA_OK) do_bwd(&cx);
                bwd_ok = cx.last == FLAMIA_OK;
                if (!bwd_ok) snprintf(bnote, sizeof bnote, "backward: %s", flamia_last_error());
                cudaError_t be = cudaStreamSynchronize(st);
                if (be != cudaSuccess) {
                    snprintf(bnote, sizeof bnote, "backward faulted: %s", cudaGetErrorString(be));
                    snprintf(tnote, sizeof tnote, "not run: %s", bnote);
                    fprintf(stderr, "latency: %s %s: %s\n", w->name, rl[ri], bnote);
                    bwd_ok = 0;
                    dead = 1;
                }
                rs->grads_finite = bwd_ok && bf16_all_finite(d_gq, nq, ho) && bf16_all_finite(d_gk, nk, ho) &&
                                   bf16_all_finite(d_gv, nk, ho);
                if (bwd_ok && !rs->grads_finite)
                    fprintf(stderr, "latency: %s %s: VERIFY FAILED (backward left a non-finite or unwritten "
                                    "dQ/dK/dV element): timing anyway, marked in table verify\n", w->name, rl[ri]);
                if ((args.passes & P_BWD) && bwd_ok) {
                    do_both(&cx); /* the backward's inputs as the timed calls see them */
                    b_ms = time_calls(do_bwd, &cx, args.warmup, args.iters, args.budget, &b_min, &b_n);
                    if (isnan(b_ms)) snprintf(bnote, sizeof bnote, "backward: %s", flamia_last_error());
                }
            }
            if ((args.passes & P_TRAIN) && !dead && rs->fwd_ok) {
                /* the training call as a framework replays it: captured once, launched per step */
                cx.graph = capture_train(&cx, tnote, sizeof tnote);
                rs->train_finite = 0;
                if (cx.graph) {
                    poison_grads(&cx, nq, nk);
                    do_graph(&cx);
                    cudaError_t ge = cudaStreamSynchronize(st);
                    if (cx.last != FLAMIA_OK)
                        snprintf(tnote, sizeof tnote, "train: cudaGraphLaunch: %s", cx.graph_err);
                    else if (ge != cudaSuccess) {
                        snprintf(tnote, sizeof tnote, "train graph replay faulted: %s", cudaGetErrorString(ge));
                        fprintf(stderr, "latency: %s %s: %s\n", w->name, rl[ri], tnote);
                        dead = 1;
                    } else {
                        rs->train_finite = bf16_all_finite(d_gq, nq, ho) && bf16_all_finite(d_gk, nk, ho) &&
                                           bf16_all_finite(d_gv, nk, ho);
                        if (!rs->train_finite)
                            fprintf(stderr, "latency: %s %s: VERIFY FAILED (graph replay of train_step left a "
                                            "non-finite or unwritten gradient): timing anyway\n", w->name, rl[ri]);
                        t_ms = time_calls(do_graph, &cx, args.warmup, args.iters, args.budget, &t_min, &t_n);
                        if (isnan(t_ms))
                            snprintf(tnote, sizeof tnote, "train: cudaGraphLaunch: %s",
                                     cx.graph_err ? cx.graph_err : "failed");
                    }
                    CUDA_NOFAIL(cudaGraphExecDestroy(cx.graph));
                }
            }
            if (args.passes & P_BWD) timing_row(&rc, system, "bwd", b_ms, b_min, b_n, 2.5 * flops, bnote);
            if (args.passes & P_TRAIN)
                timing_row(&rc, system, "train", t_ms, t_min, t_n, 3.5 * flops,
                           tnote[0] ? tnote : "train: not run");
            if (bnote[0] && !rs->note[0]) snprintf(rs->note, sizeof rs->note, "%s", bnote);
            else if (tnote[0] && isnan(t_ms) && !rs->note[0]) snprintf(rs->note, sizeof rs->note, "%s", tnote);
            if (!o.quiet)
                fprintf(stderr, "  %-14s %-12s bwd %8.3f ms %6.1f TFLOP/s | train (graph) %8.3f ms %6.1f TFLOP/s | "
                                "grads finite %d, graph replay %d\n",
                        w->name, rl[ri], b_ms, 2.5 * flops / (b_ms * 1e-3) / 1e12, t_ms,
                        3.5 * flops / (t_ms * 1e-3) / 1e12, rs->grads_finite, rs->train_finite);
            CUDA_NOFAIL(cudaFree(dws));
            xp_progress_step(&pr, w->name);
        }

        /* ---- verify rows, now that every check of the workload is known */
        for (int ri = 0; ri < nr; ri++) {
            const recipe_state *rs = &rs_all[ri];
            if (!rs->valid) continue;
            const int ok = fwd_verified(rs) && rs->grads_finite != 0 && rs->train_finite != 0;
            xp_row_begin(tv);
            xp_set_s(tv, "workload", w->name);
            xp_set_s(tv, "recipe", rl[ri]);
            xp_set_i(tv, "outputs_finite", rs->finite);
            xp_set_i(tv, "err_flag", rs->eflag);
            xp_set_i(tv, "ref_rows", rs->rows);
            xp_set_f(tv, "ref_rel_l2", rs->rel);
            xp_set_f(tv, "ref_vs_f64_rel_l2", rs->rel64);
            xp_set_f(tv, "ref_bound", rs->bound);
            xp_set_i(tv, "grads_finite", rs->grads_finite);
            xp_set_i(tv, "train_grads_finite", rs->train_finite);
            xp_set_i(tv, "ok", ok);
            xp_set_s(tv, "note", rs->note);
            xp_row_end(tv);
        }
        CUDA_NOFAIL(cudaFree(dcu));
    }
    xp_progress_end(&pr);

    xp_out *f = xp_out_open(&o, argc, argv);
    if (!f) return 1;
    xp_out_attr_i(f, "warmup", args.warmup);
    xp_out_attr_i(f, "iters", args.iters);
    xp_out_attr_f(f, "pass_budget_s", args.budget);
    xp_out_attr_s(f, "passes", args.passes_arg);
    xp_out_attr_f(f, "dout_scale", 1e-2);
    xp_out_attr_f(f, "copy_gbps_measured", copy_gbps);
    {
        int rt = 0, drv = 0;
        cudaRuntimeGetVersion(&rt);
        cudaDriverGetVersion(&drv);
        xp_out_attr_i(f, "cudart_version", rt);
        xp_out_attr_i(f, "cuda_driver_version", drv);
    }
    if (xp_out_table(f, tt) || xp_out_table(f, tq) || xp_out_table(f, tv) || xp_out_table(f, tc) ||
        xp_out_table(f, tl)) {
        xp_out_abort(f);
        return 1;
    }
    if (xp_out_commit(f)) return 1;
    return 0;
}
