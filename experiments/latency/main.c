/*
 * latency - Table A, our side: kernel latency of the Hopper backend.
 *
 * Paper item: Table A (training-call latency, kernel-only forward, TFLOP/s with
 * causal FLOPs discounted) - forward part (issue 4): per workload and recipe,
 * the fused quantize kernel alone, the forward alone, and quantize + forward
 * back to back ("fwd+quant"). The peers (cuDNN BF16 SDPA, FlexAttention with a
 * document mask, PyTorch varlen attention) are timed by peers.py in the same
 * device command and written to the same schema; join.py turns both files
 * into ratios.
 *
 * Method (/work/.library/device/METHOD.md): verify before timing (outputs
 * poisoned, every element finite, no non-finite-input flag, the first
 * document's first rows against the CPU reference of the same recipe), then
 * warm up and take the median of many CUDA-event timings, one event pair per
 * call. Inputs: random BF16 (two uniforms summed, never zeros), generated once
 * for the largest workload and shared by prefix. The copy ceiling is measured
 * in the same run (device-to-device cudaMemcpy, bytes read + written).
 *
 * FLOPs: forward = 4 * D * Hq * sum over documents of L(L+1)/2 (causal pairs
 * only: the discount the paper's appendix E insists on). Quantize bytes: BF16
 * Q, K, V read once + E4M3 codes, V transposed, exponents written (BF16 kind:
 * BF16 copies written).
 *
 * Tables: timings (long format, shared with peers.py), quantize (bandwidth),
 * verify, ceiling, layouts (every workload's document lengths, read by peers.py).
 * Example: latency --backend cuda --out data/runs/h200/latency.h5
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

typedef struct {
    const flamia_recipe *rec;
    const flamia_shape *sh;
    const void *q, *k, *v;
    void *ws, *o;
    float *lse;
    size_t wsb;
    cudaStream_t st;
    flamia_status last;
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

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median and min (ms) of `iters` event-timed calls after `warmup` calls; NaN if a call fails */
static double time_calls(void (*fn)(call_ctx *), call_ctx *c, int warmup, int iters, double *min_ms) {
    cudaEvent_t *ev = xp_xmalloc(sizeof(cudaEvent_t) * 2 * (size_t)iters);
    double *t = xp_xmalloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < 2 * iters; i++) CUDA_OK(cudaEventCreate(&ev[i]));
    double med = NAN;
    for (int i = 0; i < warmup; i++) {
        fn(c);
        if (c->last != FLAMIA_OK) goto out;
    }
    for (int i = 0; i < iters; i++) {
        CUDA_OK(cudaEventRecord(ev[2 * i], c->st));
        fn(c);
        CUDA_OK(cudaEventRecord(ev[2 * i + 1], c->st));
        if (c->last != FLAMIA_OK) goto out;
    }
    CUDA_OK(cudaStreamSynchronize(c->st));
    for (int i = 0; i < iters; i++) {
        float ms;
        CUDA_OK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
        t[i] = ms;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    med = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
    if (min_ms) *min_ms = t[0];
out:
    CUDA_OK(cudaStreamSynchronize(c->st));
    for (int i = 0; i < 2 * iters; i++) CUDA_OK(cudaEventDestroy(ev[i]));
    free(ev);
    free(t);
    return med;
}

/* cheap non-zero pseudo-normal BF16: (u1 + u2 - 1) * 2.45 (unit variance), xorshift */
static void fill_bf16(uint16_t *x, size_t n, uint64_t seed) {
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double u1 = (double)(s >> 40) * (1.0 / 16777216.0), u2 = (double)(s & 0xffffff) * (1.0 / 16777216.0);
        x[i] = flamia_bf16_bits((float)((u1 + u2 - 1.0) * 2.449));
    }
}

static void usage(const xp_opts *d) {
    printf("usage: latency --backend cuda --out FILE.h5 [options]\n"
           "Times the Hopper kernels (fused quantize, forward, quantize+forward) per workload and\n"
           "recipe: median of CUDA-event timings after warm-up, causal-discounted TFLOP/s, quantize\n"
           "bytes/s against the measured copy ceiling. Verifies each case before timing it.\n"
           "Driver options:\n"
           "  --warmup N           untimed calls before timing (default 10)\n"
           "  --iters N            timed calls, median reported (default 50)\n"
           "  --verify-rows N      rows of the first document checked against the CPU reference\n"
           "                       (default 256; 0 skips the reference check)\n");
    xp_print_common_usage(d);
}

int main(int argc, char **argv) {
    xp_opts o = xp_opts_default("latency");
    o.backend = "cuda";
    o.backends_supported = 2;
    o.workloads = "4x4096,16x4096,16x1024,64x1024,8192+32x256,8192+224x256,logu-16k,logu-64k";
    o.recipes = "mxfp8,mxfp8-exact,bf16";
    xp_opts defaults = o;
    int warmup = 10, iters = 50, verify_rows = 256;
    enum { O_WARMUP = 1, O_ITERS, O_VROWS };
    struct option lo[] = {{"warmup", required_argument, 0, O_WARMUP},
                          {"iters", required_argument, 0, O_ITERS},
                          {"verify-rows", required_argument, 0, O_VROWS},
                          XP_COMMON_LONGOPTS,
                          {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        int h = xp_opts_handle(&o, c, optarg);
        if (h == 2) {
            usage(&defaults);
            return 0;
        }
        if (h < 0) return 2;
        if (h == 1) continue;
        switch (c) {
        case O_WARMUP: if (xp_parse_int("--warmup", optarg, 0, 100000, &warmup)) return 2; break;
        case O_ITERS: if (xp_parse_int("--iters", optarg, 1, 100000, &iters)) return 2; break;
        case O_VROWS: if (xp_parse_int("--verify-rows", optarg, 0, 4096, &verify_rows)) return 2; break;
        default: fprintf(stderr, "error: unknown option (see --help)\n"); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (xp_opts_finish(&o)) return 2;

    int nw, nr;
    char **wl = xp_split_list(o.workloads, &nw);
    char **rl = xp_split_list(o.recipes, &nr);
    xp_workload *ws = xp_xmalloc(sizeof(xp_workload) * (size_t)(nw ? nw : 1));
    char err[256];
    size_t maxq = 0, maxk = 0;
    for (int i = 0; i < nw; i++) {
        if (xp_workload_make(wl[i], o.scale, o.heads, &ws[i], err, sizeof err)) {
            fprintf(stderr, "error: %s\n", err);
            return 2;
        }
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
    xp_table_col(tt, "pass", XP_STR, "", "quant, fwd, fwd+quant (ours); fwd, fwdbwd (peers)");
    xp_table_col(tt, "total_tokens", XP_I64, "tokens", "packed tokens");
    xp_table_col(tt, "num_docs", XP_I64, "docs", "documents");
    xp_table_col(tt, "heads_q", XP_I64, "heads", "query heads");
    xp_table_col(tt, "heads_kv", XP_I64, "heads", "key/value heads");
    xp_table_col(tt, "head_dim", XP_I64, "1", "head dimension");
    xp_table_col(tt, "ms", XP_F64, "ms", "median over iters CUDA-event timings");
    xp_table_col(tt, "ms_min", XP_F64, "ms", "fastest timing");
    xp_table_col(tt, "iters", XP_I64, "1", "timed calls");
    xp_table_col(tt, "flops", XP_F64, "FLOP", "causal-discounted FLOPs of the pass (0 for quant)");
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
    xp_table_col(tv, "ref_rel_l2", XP_F64, "1", "relative L2 error of O on those rows (bound 4e-3)");
    xp_table_col(tv, "ok", XP_I64, "1", "1 when all checks passed");
    xp_table_col(tv, "note", XP_STR, "", "forward status when it failed");

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
        qsort(t, 20, sizeof(double), cmp_double);
        double med = 0.5 * (t[9] + t[10]);
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
    fill_bf16(hq, maxq, o.seed * 3 + 0);
    fill_bf16(hk, maxk, o.seed * 3 + 1);
    fill_bf16(hv, maxk, o.seed * 3 + 2);
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
    uint16_t *ho = xp_xmalloc(maxq * 2);
    float *hlse = xp_xmalloc(maxq / 64 * 4 + 1024);

    xp_progress pr;
    xp_progress_init(&pr, "latency", (long)nw * nr, o.quiet);
    int dead = 0; /* a kernel fault lost the CUDA context: record, skip the rest, still write */
    for (int wi = 0; wi < nw; wi++) {
        xp_workload *w = &ws[wi];
        const int T = w->total_tokens, Hq = w->heads_q, Hkv = w->heads_kv, D = w->head_dim;
        const size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D, nl = (size_t)T * Hq;
        if (dead) {
            fprintf(stderr, "latency: %s: not run (CUDA context lost earlier in this process)\n", w->name);
            for (int ri = 0; ri < nr; ri++) xp_progress_step(&pr, w->name);
            continue;
        }
        if (nr > 16) xp_die("latency: at most 16 recipes per run");
        int32_t *dcu;
        CUDA_OK(cudaMalloc((void **)&dcu, sizeof(int32_t) * (size_t)(w->num_docs + 1)));
        CUDA_OK(cudaMemcpy(dcu, w->cu_seqlens, sizeof(int32_t) * (size_t)(w->num_docs + 1),
                           cudaMemcpyHostToDevice));
        flamia_shape sh = xp_workload_shape(w);
        sh.cu_seqlens = dcu;
        const double flops = 4.0 * D * Hq * xp_workload_causal_pairs(w);

        /* ---- phase 1: quantize of every recipe, checked and timed before any forward runs
         * (a forward that faults loses the CUDA context; these figures must survive it) */
        double q_ms_r[16], q_min_r[16];
        int eflag_r[16];
        for (int ri = 0; ri < nr && ri < 16; ri++) {
            q_ms_r[ri] = q_min_r[ri] = NAN;
            eflag_r[ri] = -1;
            flamia_recipe rec;
            if (flamia_recipe_preset(rl[ri], &rec) != FLAMIA_OK) xp_die("%s", flamia_last_error());
            size_t wsb = 0;
            if (flamia_cuda_workspace_size(&rec, &sh, &wsb) != FLAMIA_OK) continue;
            void *dws;
            CUDA_OK(cudaMalloc(&dws, wsb));
            call_ctx cx = {&rec, &sh, dq, dk, dv, dws, dO, dlse, wsb, st, FLAMIA_OK};
            do_quant(&cx);
            if (cx.last != FLAMIA_OK) xp_die("latency: quantize %s %s: %s", w->name, rl[ri], flamia_last_error());
            CUDA_OK(cudaStreamSynchronize(st));
            CUDA_OK(cudaMemcpy(&eflag_r[ri], dws, 4, cudaMemcpyDeviceToHost)); /* err_flag at offset 0 */
            q_ms_r[ri] = time_calls(do_quant, &cx, warmup, iters, &q_min_r[ri]);
            CUDA_OK(cudaFree(dws));
        }

        /* ---- phase 2: forward per recipe */
        for (int ri = 0; ri < nr && ri < 16; ri++) {
            flamia_recipe rec;
            if (flamia_recipe_preset(rl[ri], &rec) != FLAMIA_OK) xp_die("%s", flamia_last_error());
            char system[64];
            snprintf(system, sizeof system, "flamia-%s", rl[ri]);
            size_t wsb = 0;
            if (flamia_cuda_workspace_size(&rec, &sh, &wsb) != FLAMIA_OK) {
                fprintf(stderr, "latency: %s %s: %s (skipped)\n", w->name, rl[ri], flamia_last_error());
                xp_progress_step(&pr, w->name);
                continue;
            }
            char note[512] = "";
            const int32_t eflag = eflag_r[ri];
            const double q_ms = q_ms_r[ri], q_min = q_min_r[ri];
            void *dws = NULL;
            if (!dead) CUDA_OK(cudaMalloc(&dws, wsb));
            call_ctx cx = {&rec, &sh, dq, dk, dv, dws, dO, dlse, wsb, st, FLAMIA_OK};
            int finite = 0;
            double rel = NAN;
            int rows = 0;
            int fwd_ok = 0;
            if (dead) snprintf(note, sizeof note, "forward not run: the CUDA context was lost earlier in this process");
            else {
                /* forward: verify (poisoned outputs), then time */
                CUDA_OK(cudaMemsetAsync(dO, 0xFF, nq * 2, st));
                CUDA_OK(cudaMemsetAsync(dlse, 0xFF, nl * 4, st));
                do_quant(&cx);
                do_fwd(&cx);
                fwd_ok = cx.last == FLAMIA_OK;
                if (!fwd_ok) snprintf(note, sizeof note, "forward: %s", flamia_last_error());
                cudaError_t fe = cudaStreamSynchronize(st);
                if (fe != cudaSuccess) {
                    snprintf(note, sizeof note, "forward faulted: %s", cudaGetErrorString(fe));
                    fprintf(stderr, "latency: %s %s: %s\n", w->name, rl[ri], note);
                    fwd_ok = 0;
                    dead = 1;
                }
            }
            if (fwd_ok) {
                CUDA_OK(cudaMemcpy(ho, dO, nq * 2, cudaMemcpyDeviceToHost));
                CUDA_OK(cudaMemcpy(hlse, dlse, nl * 4, cudaMemcpyDeviceToHost));
                finite = 1;
                for (size_t i = 0; i < nq && finite; i++) finite = (ho[i] & 0x7f80) != 0x7f80;
                for (size_t i = 0; i < nl && finite; i++) finite = isfinite(hlse[i]);
                rows = w->cu_seqlens[1] < verify_rows ? w->cu_seqlens[1] : verify_rows;
                if (rows > 0) {
                    /* rows [0, rows) of document 0 depend only on its tokens [0, rows) (causal) */
                    size_t rq = (size_t)rows * Hq * D, rk = (size_t)rows * Hkv * D;
                    float *fq = xp_xmalloc(rq * 4), *fk = xp_xmalloc(rk * 4), *fv = xp_xmalloc(rk * 4);
                    float *fo = xp_xmalloc(rq * 4), *fl = xp_xmalloc((size_t)rows * Hq * 4);
                    for (size_t i = 0; i < rq; i++) fq[i] = flamia_bf16_value(hq[i]);
                    for (size_t i = 0; i < rk; i++) fk[i] = flamia_bf16_value(hk[i]);
                    for (size_t i = 0; i < rk; i++) fv[i] = flamia_bf16_value(hv[i]);
                    int32_t cu1[2] = {0, rows};
                    flamia_shape s1 = {rows, 1, cu1, Hq, Hkv, D, 1, 0.0f, rows};
                    if (flamia_ref_forward(&rec, &s1, fq, fk, fv, fo, fl) != FLAMIA_OK)
                        xp_die("latency: reference: %s", flamia_last_error());
                    double num = 0, den = 0;
                    for (size_t i = 0; i < rq; i++) {
                        double dd = (double)flamia_bf16_value(ho[i]) - fo[i];
                        num += dd * dd;
                        den += (double)fo[i] * fo[i];
                    }
                    rel = sqrt(num / (den + 1e-300));
                    free(fq); free(fk); free(fv); free(fo); free(fl);
                }
            }
            int ok = fwd_ok && finite && eflag == 0 && (rows == 0 || rel <= 4e-3);
            xp_row_begin(tv);
            xp_set_s(tv, "workload", w->name);
            xp_set_s(tv, "recipe", rl[ri]);
            xp_set_i(tv, "outputs_finite", finite);
            xp_set_i(tv, "err_flag", eflag);
            xp_set_i(tv, "ref_rows", rows);
            xp_set_f(tv, "ref_rel_l2", rel);
            xp_set_i(tv, "ok", ok);
            xp_set_s(tv, "note", note);
            xp_row_end(tv);
            if (fwd_ok && !ok)
                fprintf(stderr, "latency: %s %s: VERIFY FAILED (finite %d, err_flag %d, rel L2 %.3e): timing anyway, "
                                "marked in table verify\n", w->name, rl[ri], finite, eflag, rel);

            /* ---- time */
            const char *passes[3] = {"quant", "fwd", "fwd+quant"};
            void (*fns[3])(call_ctx *) = {do_quant, do_fwd, do_both};
            double ms[3];
            for (int p = 0; p < 3; p++) {
                double mn = p == 0 ? q_min : NAN;
                ms[p] = p == 0 ? q_ms : !fwd_ok ? NAN : time_calls(fns[p], &cx, warmup, iters, &mn);
                xp_row_begin(tt);
                xp_set_s(tt, "workload", w->name);
                xp_set_s(tt, "system", system);
                xp_set_s(tt, "pass", passes[p]);
                xp_set_i(tt, "total_tokens", T);
                xp_set_i(tt, "num_docs", w->num_docs);
                xp_set_i(tt, "heads_q", Hq);
                xp_set_i(tt, "heads_kv", Hkv);
                xp_set_i(tt, "head_dim", D);
                xp_set_f(tt, "ms", ms[p]);
                xp_set_f(tt, "ms_min", mn);
                xp_set_i(tt, "iters", iters);
                xp_set_f(tt, "flops", p ? flops : 0.0);
                xp_set_f(tt, "tflops", p ? flops / (ms[p] * 1e-3) / 1e12 : NAN);
                xp_set_s(tt, "note", isnan(ms[p]) ? (note[0] ? note : flamia_last_error()) : "");
                xp_row_end(tt);
            }

            /* quantize bytes: minimum traffic */
            double bytes = 2.0 * (double)(nq + 2 * nk); /* BF16 reads */
            int t_pad = (T + 15) / 16 * 16;
            if (!strcmp(rl[ri], "bf16")) bytes += 2.0 * (double)(nq + 2 * nk);
            else bytes += (double)(nq + 2 * nk) + (double)Hkv * D * t_pad + (double)T * (Hq + 2 * Hkv) + 4;
            double gbps = bytes / (ms[0] * 1e-3) / 1e9;
            xp_row_begin(tq);
            xp_set_s(tq, "workload", w->name);
            xp_set_s(tq, "recipe", rl[ri]);
            xp_set_f(tq, "bytes", bytes);
            xp_set_f(tq, "ms", ms[0]);
            xp_set_f(tq, "gbps", gbps);
            xp_set_f(tq, "frac_copy_measured", gbps / copy_gbps);
            xp_set_f(tq, "frac_copy_4p2", gbps * 1e9 / kCopyNominal);
            xp_row_end(tq);
            if (!o.quiet)
                fprintf(stderr,
                        "  %-14s %-12s quant %8.3f ms (%5.0f GB/s, %3.0f%% of copy) | fwd %8.3f ms %6.1f TFLOP/s "
                        "| fwd+quant %8.3f ms %6.1f TFLOP/s | verify %s rel %.1e\n",
                        w->name, rl[ri], ms[0], gbps, 100.0 * gbps / copy_gbps, ms[1],
                        flops / (ms[1] * 1e-3) / 1e12, ms[2], flops / (ms[2] * 1e-3) / 1e12,
                        ok ? "ok" : "FAIL", rel);
            CUDA_NOFAIL(cudaFree(dws));
            xp_progress_step(&pr, w->name);
        }
        CUDA_NOFAIL(cudaFree(dcu));
    }
    xp_progress_end(&pr);

    xp_out *f = xp_out_open(&o, argc, argv);
    if (!f) return 1;
    xp_out_attr_i(f, "warmup", warmup);
    xp_out_attr_i(f, "iters", iters);
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
