/*
 * check_backward.cu - dev harness for the sm90 backward (kernels/sm90/backward*.cu or a
 * numbered variant linked in its place): random packed layouts, the REAL quantize and
 * forward kernels (flamia_sm90_quantize, flamia_sm90_forward), then the backward on
 * poisoned outputs, compared with flamia_ref_backward of the same recipe, fed the same
 * inputs (BF16 q, k, v, dO and the GPU's O and lse). Optional timing.
 *
 *   check_backward KIND LAYOUT HQ HKV CAUSAL CHECK [REPS]
 *     KIND    bf16 | mxfp8 | exact
 *     LAYOUT  NxL (N documents of L tokens) | randT:SEED (random packed: 1-token
 *             documents, odd lengths, lengths not a multiple of 32 / 128)
 *     CHECK   full (reference on everything, + FP64 textbook for scale) | none
 *     REPS    timed repetitions of the backward alone (0: no timing)
 *   env BWD_VARIANT=0 runs the plain FP32 main kernel instead of the FP8 wgmma one;
 *   BWD_DET=1 the deterministic dQ mode (its split dQ, backward_dq.cu, where the layout has it;
 *   BWD_SPLIT=0: by turns); BWD_DUMP=FILE writes the dQ, dK, dV bytes (the
 *   first backward call, before timing) so that two variants can be compared with cmp.
 *   BWD_QMEAN=x / BWD_DOMEAN=x add x to every Q / dO element; CHECK full then also prints the
 *   gradients' signed error along the reference at document positions >= 1024 (a truncating
 *   FP8 accumulation shows there as a negative bias, numerics.md 8).
 *   BWD_QSCALE=x multiplies Q by x (x = 40: row frames past the direct exponential's range,
 *   the main kernel's split path).
 *   BWD_KEXP=e scales K by 2^e and the softmax scale by 2^-e (FP32 range of the kernels'
 *   intermediate products; mxfp8 only: mxfp8-exact's forward needs max|K| < 2^111).
 *
 * Bounds (see backward.cu's header and docs/perf-notes.md "Backward kernel"): both sides
 * round to BF16; the GPU sums in FP32 (wgmma) instead of FP64 and uses ex2.approx, which
 * flips a P or dS code only on a rounding boundary; the folded contraction scales differ
 * only on E4M3 subnormals; dV multiplies P in F16 (v3). Pass (as tests/gpu, numerics.md
 * 8.2): plain FP32 kernel relL2 <= 5e-3 and max|d| <= 5e-2 max|ref|; FP8 wgmma kernel
 * (Hopper's FP8 accumulation moves P/dS codes) relL2 <= 0.25 x ref-vs-FP64, max <= 2^-3.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "flamia.h"
#include "flamia_formats.h"
#include "sm90_launch.h"
#include "../harness_common.h"

extern int flamia_bwd_debug_variant;


struct Cmp {
    double rel, maxrel, cos, rel64;
    long bad;
};
static Cmp compare(const std::vector<uint16_t> &gpu, const std::vector<float> &ref, const std::vector<double> *f64) {
    Cmp c = {0, 0, 0, -1, 0};
    double num = 0, den = 0, dmax = 0, rmax = 0, ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        const double a = flamia_bf16_value(gpu[i]), b = ref[i];
        if (!(a == a) || isinf(a)) {
            c.bad++;
            continue;
        }
        num += (a - b) * (a - b);
        den += b * b;
        dmax = std::max(dmax, fabs(a - b));
        rmax = std::max(rmax, fabs(b));
        ab += a * b, aa += a * a, bb += b * b;
    }
    c.rel = sqrt(num / std::max(den, 1e-300));
    c.maxrel = dmax / std::max(rmax, 1e-300);
    c.cos = ab / std::max(sqrt(aa * bb), 1e-300);
    if (f64) {
        double n2 = 0, d2 = 0;
        for (size_t i = 0; i < ref.size(); i++) {
            const double e = ref[i] - (*f64)[i];
            n2 += e * e;
            d2 += (*f64)[i] * (*f64)[i];
        }
        c.rel64 = sqrt(n2 / std::max(d2, 1e-300));
    }
    return c;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s KIND LAYOUT HQ HKV CAUSAL CHECK [REPS]\n", argv[0]);
        return 2;
    }
    const char *kind_s = argv[1], *layout = argv[2], *check = argv[6];
    const int Hq = atoi(argv[3]), Hkv = atoi(argv[4]), causal = atoi(argv[5]);
    const int reps = argc > 7 ? atoi(argv[7]) : 0;
    const int D = 128;
    flamia_bwd_debug_variant = getenv("BWD_VARIANT") ? atoi(getenv("BWD_VARIANT")) : 1; /* harness default: FP8 */
    enum flamia_sm90_kind kind = !strcmp(kind_s, "bf16")    ? FLAMIA_SM90_BF16
                                 : !strcmp(kind_s, "mxfp8") ? FLAMIA_SM90_MXFP8
                                                            : FLAMIA_SM90_MXFP8_EXACT;
    const char *preset = kind == FLAMIA_SM90_BF16 ? "bf16" : kind == FLAMIA_SM90_MXFP8 ? "mxfp8" : "mxfp8-exact";

    /* ---- layout */
    const std::vector<int32_t> cu = harness_layout(layout);
    const int ndocs = (int)cu.size() - 1, T = cu.back();
    int maxlen = 0;
    double fwd_flops = 0;
    for (int d = 0; d < ndocs; d++) {
        const double L = cu[d + 1] - cu[d];
        maxlen = std::max(maxlen, (int)L);
        fwd_flops += 4.0 * D * Hq * (causal ? L * (L + 1) / 2 : L * L);
    }
    const double bwd_flops = 2.5 * fwd_flops;

    /* ---- inputs: BF16 values; outlier K channels; per-token spread */
    const size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D;
    std::vector<float> q(nq), k(nk), v(nk), dout(nq);
    auto fill = [&](std::vector<float> &x, double base, uint64_t salt) {
#pragma omp parallel for schedule(static)
        for (long r = 0; r < (long)(x.size() / D); r++) {
            uint64_t st = salt * 0x9E3779B97F4A7C15ull ^ rng_s ^ ((uint64_t)r * 0xD1B54A32D192ED03ull);
            auto nx = [&]() {
                uint64_t z = (st += 0x9E3779B97F4A7C15ull);
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
                return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
            };
            const double sc = base * exp2(2.0 * (nx() - 0.5));
            for (int d = 0; d < D; d += 2) {
                const double u = nx() + 1e-300, w = nx(), rr = sqrt(-2 * log(u));
                x[r * D + d] = flamia_round_bf16((float)(rr * cos(6.283185307179586 * w) * sc));
                x[r * D + d + 1] = flamia_round_bf16((float)(rr * sin(6.283185307179586 * w) * sc));
            }
        }
    };
    fill(q, 1.0, 1);
    fill(k, 1.0, 2);
    fill(v, 1.0, 3);
    fill(dout, 1e-2, 4);
    for (int o = 0; o < 3; o++) {
        const int ch = (int)(runif() * D);
        for (size_t t = 0; t < (size_t)T * Hkv; t++) k[t * D + ch] = flamia_round_bf16(k[t * D + ch] * 8.0f);
    }
    /* BWD_QMEAN=x, BWD_DOMEAN=x: x added to every Q / dO element (nonzero-mean operands, where a
     * truncating FP8 accumulation shows as a bias: numerics.md 8; the forward's O had one) */
    if (getenv("BWD_QMEAN"))
        for (auto &x : q) x = flamia_round_bf16(x + (float)atof(getenv("BWD_QMEAN")));
    if (getenv("BWD_DOMEAN"))
        for (auto &x : dout) x = flamia_round_bf16(x + (float)atof(getenv("BWD_DOMEAN")));
    /* BWD_QSCALE=x: Q times x, so logits times x: x = 40 puts row frames past the direct
     * exponential's range (m > 120, sm90_exp2.cuh), the split path of the main kernel */
    if (getenv("BWD_QSCALE"))
        for (auto &x : q) x = flamia_round_bf16(x * (float)atof(getenv("BWD_QSCALE")));
    /* BWD_KEXP=e: K x 2^e and the softmax scale x 2^-e (the same logits, K's exponents far
     * out; e = 118 is test_gpu_consistency's "wide range", where the backward's t once
     * overflowed). Exact: powers of two, BF16's range kept for |e| <= 118. */
    const int kexp = getenv("BWD_KEXP") ? atoi(getenv("BWD_KEXP")) : 0;
    for (size_t x = 0; kexp && x < nk; x++) k[x] = ldexpf(k[x], kexp);
    auto to_bf16 = [](const std::vector<float> &x) {
        std::vector<uint16_t> b(x.size());
#pragma omp parallel for
        for (long i = 0; i < (long)x.size(); i++) b[i] = flamia_bf16_bits(x[i]);
        return b;
    };

    /* ---- device: quantize -> forward -> backward */
    flamia_sm90_problem P;
    memset(&P, 0, sizeof P);
    P.total_tokens = T;
    P.num_docs = ndocs;
    P.heads_q = Hq;
    P.heads_kv = Hkv;
    P.head_dim = D;
    P.causal = causal;
    P.max_seqlen = maxlen;
    P.softmax_scale = ldexpf(1.0f / sqrtf((float)D), -kexp);
    P.kind = kind;
    P.deterministic = getenv("BWD_DET") && atoi(getenv("BWD_DET")); /* deterministic dQ */
    const flamia_sm90_layout L = flamia_sm90_layout_of(&P);
    /* the split dQ as the library plans it for the workspace allocated below (the deterministic mode's
     * size: every kv head at once past total; the default mode's: in dq_accum's room, where it takes at
     * most FLAMIA_SM90_DQ_SPLIT_CHUNKS chunks, default FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS; cuda_api.cu's
     * grid floor is not applied here).
     * BWD_SPLIT=0: no split (the reduce-adds, or the turns); BWD_SPLIT=n > 0: chunks of at most n kv heads */
    const int split_cap = getenv("BWD_SPLIT") ? std::max(0, atoi(getenv("BWD_SPLIT"))) : Hkv;
    /* the harness links the kernels without cuda_api.cu: its chunk limit read here as that file reads it */
    const char *lim_env = getenv("FLAMIA_SM90_DQ_SPLIT_CHUNKS");
    const int max_chunks = lim_env && *lim_env ? std::max(-1, atoi(lim_env)) : FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS;
    P.dq_plan = flamia_sm90_dq_plan_of(&P, L.total_split, split_cap ? max_chunks : -1, split_cap);
    fprintf(stderr, "dQ: %s\n", P.dq_plan.heads ? (P.dq_plan.off == L.dq_accum ? "split in dq_accum's room" : "split past total")
                                                  : P.deterministic ? "turns" : "reduce-adds");
    if (P.dq_plan.heads) fprintf(stderr, "dQ split: %d kv heads a chunk, %d chunks\n", P.dq_plan.heads, flamia_sm90_dq_chunks(&P, P.dq_plan.heads));
    uint8_t *d_ws;
    int32_t *d_cu;
    uint16_t *d_q, *d_k, *d_v, *d_do, *d_o, *d_dq, *d_dk, *d_dv;
    float *d_lse;
    CK(cudaMalloc(&d_ws, L.total_split));
    CK(cudaMalloc(&d_cu, cu.size() * 4));
    CK(cudaMalloc(&d_q, nq * 2));
    CK(cudaMalloc(&d_k, nk * 2));
    CK(cudaMalloc(&d_v, nk * 2));
    CK(cudaMalloc(&d_do, nq * 2));
    CK(cudaMalloc(&d_o, nq * 2));
    CK(cudaMalloc(&d_dq, nq * 2));
    CK(cudaMalloc(&d_dk, nk * 2));
    CK(cudaMalloc(&d_dv, nk * 2));
    CK(cudaMalloc(&d_lse, (size_t)T * Hq * 4));
    CK(cudaMemset(d_ws, 0xFF, L.total_split)); /* poison the whole workspace */
    CK(cudaMemcpy(d_cu, cu.data(), cu.size() * 4, cudaMemcpyHostToDevice));
    {
        auto b = to_bf16(q);
        CK(cudaMemcpy(d_q, b.data(), nq * 2, cudaMemcpyHostToDevice));
        b = to_bf16(k);
        CK(cudaMemcpy(d_k, b.data(), nk * 2, cudaMemcpyHostToDevice));
        b = to_bf16(v);
        CK(cudaMemcpy(d_v, b.data(), nk * 2, cudaMemcpyHostToDevice));
        b = to_bf16(dout);
        CK(cudaMemcpy(d_do, b.data(), nq * 2, cudaMemcpyHostToDevice));
    }
    CK(cudaMemset(d_dq, 0xFF, nq * 2)); /* BF16 NaN poison */
    CK(cudaMemset(d_dk, 0xFF, nk * 2));
    CK(cudaMemset(d_dv, 0xFF, nk * 2));
    P.cu_seqlens = d_cu;
    flamia_recipe rec;
    flamia_recipe_preset(preset, &rec);
    flamia_shape sh;
    memset(&sh, 0, sizeof sh);
    sh.total_tokens = T;
    sh.num_docs = ndocs;
    sh.cu_seqlens = cu.data();
    sh.heads_q = Hq;
    sh.heads_kv = Hkv;
    sh.head_dim = D;
    sh.causal = causal;
    sh.softmax_scale = P.softmax_scale;
    sh.max_seqlen = maxlen;
    const bool full = !strcmp(check, "full");
    if (getenv("GPU_FWD")) {
        /* the library's quantize and forward fill the workspace (timing runs) */
        CK(flamia_sm90_quantize(&P, d_q, d_k, d_v, d_ws, 0));
        CK(flamia_sm90_forward(&P, d_ws, d_o, d_lse, 0));
        CK(cudaDeviceSynchronize());
    } else {
        /* correctness runs do not depend on the other kernels: the workspace image is
         * quantized here with the shared formats (numerics.md 2), O and lse come from
         * flamia_ref_forward, the final frames from their definition
         * m_i = ceil(max_j s_ij c) over the row's valid keys (numerics.md 3.2). */
        std::vector<uint8_t> ws(L.total, 0);
        std::vector<float> qd(nq), kd(nk);
        auto quant = [&](const std::vector<float> &x, int H, size_t codes_off, size_t exp_off, size_t bf_off,
                         std::vector<float> *xd) {
            uint8_t *codes = ws.data() + codes_off;
            int8_t *ex = (int8_t *)(ws.data() + exp_off);
            uint16_t *bf = (uint16_t *)(ws.data() + bf_off);
            if (kind == FLAMIA_SM90_BF16) { /* only this kind's workspace has the BF16 operands */
#pragma omp parallel for
                for (long i = 0; i < (long)T * H * D; i++) bf[i] = flamia_bf16_bits(x[i]);
                if (xd) *xd = x;
                return;
            }
            const int blk = kind == FLAMIA_SM90_MXFP8 ? 32 : 1;
#pragma omp parallel for schedule(dynamic, 1)
            for (int d = 0; d < ndocs; d++)
                for (int t0 = cu[d]; t0 < cu[d + 1]; t0 += blk) {
                    const int t1 = std::min(t0 + blk, (int)cu[d + 1]);
                    for (int h = 0; h < H; h++) {
                        float amax = 0;
                        for (int t = t0; t < t1; t++)
                            for (int e = 0; e < D; e++) amax = fmaxf(amax, fabsf(x[((size_t)t * H + h) * D + e]));
                        const int E = flamia_fmt_block_exponent(amax, 0);
                        for (int t = t0; t < t1; t++) {
                            ex[(size_t)t * H + h] = (int8_t)E;
                            for (int e = 0; e < D; e++) {
                                const size_t i = ((size_t)t * H + h) * D + e;
                                codes[i] = flamia_e4m3_quant(x[i], E);
                                if (xd) (*xd)[i] = flamia_e4m3_dequant(codes[i], E);
                            }
                        }
                    }
                }
        };
        quant(q, Hq, L.q_codes, L.q_exp, L.q_bf16, &qd);
        quant(k, Hkv, L.k_codes, L.k_exp, L.k_bf16, &kd);
        quant(v, Hkv, L.v_codes, L.v_exp, L.v_bf16, nullptr);
        if (kind != FLAMIA_SM90_BF16) {
            flamia_sm90_vt_host(ws.data() + L.v_codes, cu.data(), (int)cu.size() - 1, Hkv, D, L.t_vpad,
                                ws.data() + L.vt_codes);
        }
        std::vector<float> o(nq, 0.f), lse_h((size_t)T * Hq, 0.f), fr((size_t)T * Hq, 0.f);
        /* timing runs (CHECK none): O = 0, lse = 0, frames 0 - every value finite, every
         * path of the kernel taken; the numbers are not checked */
        if (full && flamia_ref_forward(&rec, &sh, q.data(), k.data(), v.data(), o.data(), lse_h.data())) {
            fprintf(stderr, "reference forward failed: %s\n", flamia_last_error());
            return 2;
        }
        const float c = P.softmax_scale * 1.44269504088896341f;
        const int group = Hq / Hkv;
#pragma omp parallel for schedule(dynamic, 16)
        for (int i = 0; i < (full ? T : 0); i++)
            for (int h = 0; h < Hq; h++) {
                const int d = (int)(std::upper_bound(cu.begin(), cu.end(), i) - cu.begin()) - 1;
                const int jend = causal ? i + 1 : cu[d + 1];
                float smax = -INFINITY;
                for (int j = cu[d]; j < jend; j++) {
                    double a = 0;
                    for (int e = 0; e < D; e++)
                        a += (double)qd[((size_t)i * Hq + h) * D + e] * kd[((size_t)j * Hkv + h / group) * D + e];
                    smax = fmaxf(smax, (float)a);
                }
                fr[(size_t)i * Hq + h] = ceilf(smax * c);
            }
        memcpy(ws.data() + L.row_frame, fr.data(), fr.size() * 4);
        memset(ws.data() + L.err_flag, 0, 4);
        CK(cudaMemcpy(d_ws, ws.data(), L.total, cudaMemcpyHostToDevice));
        /* regions the backward writes itself stay poisoned */
        CK(cudaMemset(d_ws + L.qt_codes, 0xFF, L.dq_accum - L.qt_codes));
        CK(cudaMemset(d_ws + L.dq_accum, 0xFF, L.total_split - L.dq_accum));
        /* fwd_work's header as every forward leaves it (cleared before its launch): the
         * backward's split flag is one of its words (since v89), which bwd_pre_do sets */
        CK(cudaMemset(d_ws + L.fwd_work, 0, 16));
        std::vector<uint16_t> ob(nq);
#pragma omp parallel for
        for (long i = 0; i < (long)nq; i++) ob[i] = flamia_bf16_bits(o[i]);
        CK(cudaMemcpy(d_o, ob.data(), nq * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_lse, lse_h.data(), lse_h.size() * 4, cudaMemcpyHostToDevice));
    }
    CK(flamia_sm90_backward(&P, d_ws, d_o, d_lse, d_do, d_dq, d_dk, d_dv, 0));
    CK(cudaDeviceSynchronize());
    std::vector<uint16_t> dq(nq), dk(nk), dv(nk), ob(nq);
    std::vector<float> lse((size_t)T * Hq);
    CK(cudaMemcpy(dq.data(), d_dq, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(dk.data(), d_dk, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(dv.data(), d_dv, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ob.data(), d_o, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(lse.data(), d_lse, lse.size() * 4, cudaMemcpyDeviceToHost));
    if (const char *dump = getenv("BWD_DUMP")) { /* dQ, dK, dV bytes: compare variants with cmp */
        FILE *f = fopen(dump, "wb");
        if (!f || fwrite(dq.data(), 2, nq, f) != nq || fwrite(dk.data(), 2, nk, f) != nk ||
            fwrite(dv.data(), 2, nk, f) != nk || fclose(f))
            fprintf(stderr, "BWD_DUMP %s: write failed\n", dump);
    }
    int err_flag = 0;
    CK(cudaMemcpy(&err_flag, d_ws + L.err_flag, 4, cudaMemcpyDeviceToHost));
    long unwritten = 0;
    for (auto *x : {&dq, &dk, &dv})
        for (uint16_t b : *x) unwritten += !isfinite(flamia_bf16_value(b));

    int ok = unwritten == 0 && err_flag == 0;
    Cmp cq = {0, 0, 0, -1, 0}, ck = cq, cv = cq;
    if (full) {
        std::vector<float> o(nq), rq(nq), rk(nk), rv(nk);
        for (size_t i = 0; i < nq; i++) o[i] = flamia_bf16_value(ob[i]);
        flamia_ref_stats st;
        flamia_status s = flamia_ref_backward_ex(&rec, &sh, q.data(), k.data(), v.data(), o.data(), lse.data(),
                                                 dout.data(), rq.data(), rk.data(), rv.data(), &st);
        if (s) {
            fprintf(stderr, "reference failed: %s\n", flamia_last_error());
            return 2;
        }
        std::vector<double> q64(nq), k64(nk), v64(nk);
        const bool have64 = flamia_ref64_backward(&sh, q.data(), k.data(), v.data(), dout.data(), q64.data(),
                                                  k64.data(), v64.data()) == FLAMIA_OK;
        cq = compare(dq, rq, have64 ? &q64 : nullptr);
        ck = compare(dk, rk, have64 ? &k64 : nullptr);
        cv = compare(dv, rv, have64 ? &v64 : nullptr);
        /* the gpu suite's bounds (docs/numerics.md 8.2): absolute for the FP32 plain kernel,
         * relative to the recipe's own FP64 error for the FP8 wgmma kernel */
        const bool fp8_kernel = kind != FLAMIA_SM90_BF16 && flamia_bwd_debug_variant != 0;
        for (const Cmp *c : {&cq, &ck, &cv})
            ok = ok && (fp8_kernel ? (!have64 || (c->rel <= 0.25 * c->rel64)) && c->maxrel <= 0.125
                                   : c->rel <= 5e-3 && c->maxrel <= 5e-2);
        /* the signed error along the reference, sum (g - r) r / sum r^2 (a shrink toward zero is
         * negative), over the tokens at document positions >= 1024 (0 when none) */
        auto bias = [&](const std::vector<uint16_t> &g, const std::vector<float> &r, int H) {
            double num = 0, den = 0;
            for (int d = 0; d + 1 < (int)cu.size(); d++)
                for (int t = cu[d] + 1024; t < cu[d + 1]; t++)
                    for (size_t i = (size_t)t * H * D; i < (size_t)(t + 1) * H * D; i++) {
                        const double x = flamia_bf16_value(g[i]), y = r[i];
                        num += (x - y) * y, den += y * y;
                    }
            return den > 0 ? num / den : 0.0;
        };
        printf("  signed error along the reference at positions >= 1024: dQ %+.3e dK %+.3e dV %+.3e\n",
               bias(dq, rq, Hq), bias(dk, rk, Hkv), bias(dv, rv, Hkv));
        printf("  ref: dS flushed %.0f / %.0f nonzero, P codes %.0f mismatch %.0f (unexplained %.0f)\n",
               st.ds_flushed, st.ds_nonzero, st.p_codes, st.p_mismatch, st.p_mismatch_unexplained);
    }

    double ms = 0;
    if (reps > 0) {
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        for (int w = 0; w < 2; w++) CK(flamia_sm90_backward(&P, d_ws, d_o, d_lse, d_do, d_dq, d_dk, d_dv, 0));
        std::vector<float> ts;
        for (int r = 0; r < reps; r++) {
            CK(cudaEventRecord(a));
            CK(flamia_sm90_backward(&P, d_ws, d_o, d_lse, d_do, d_dq, d_dk, d_dv, 0));
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float t;
            CK(cudaEventElapsedTime(&t, a, b));
            ts.push_back(t);
        }
        std::sort(ts.begin(), ts.end());
        ms = ts[ts.size() / 2];
    }
    printf("%-5s v%d %-13s T=%-6d docs=%-4d Hq=%-2d Hkv=%-2d causal=%d", kind_s,
           kind == FLAMIA_SM90_BF16 ? 0 : flamia_bwd_debug_variant, layout, T, ndocs, Hq, Hkv, causal);
    if (!strcmp(check, "full"))
        printf(" | relL2/maxrel/cos dQ %.1e %.1e %.6f dK %.1e %.1e %.6f dV %.1e %.1e %.6f | ref-vs-f64 dQ %.1e dK %.1e "
               "dV %.1e",
               cq.rel, cq.maxrel, cq.cos, ck.rel, ck.maxrel, ck.cos, cv.rel, cv.maxrel, cv.cos, cq.rel64, ck.rel64,
               cv.rel64);
    printf(" | unwritten=%ld err=%d %s", unwritten, err_flag, strcmp(check, "none") ? (ok ? "PASS" : "FAIL") : (ok ? "written" : "FAIL"));
    if (reps > 0) printf(" | bwd %.3f ms %.1f TFLOP/s", ms, bwd_flops / ms / 1e9);
    printf("\n");
    return ok ? 0 : 1;
}
