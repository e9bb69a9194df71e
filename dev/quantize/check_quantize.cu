/*
 * check_quantize.cu - dev harness for the fused quantize kernel: the committed
 * kernels/sm90/quantize.cu, or a numbered variant given by -DQUANT_SRC="path"
 * (the .cu is included whole; it defines flamia_sm90_quantize).
 *
 *   check_quantize check [SEED]        bit-exactness battery (below); exit 1 on a failure
 *   check_quantize quick [SEED]        the battery without the 20000/45000-token packs
 *   check_quantize time [WL,...] [REPS] timing: mxfp8, mxfp8-exact, bf16 (Hadamard off) on
 *                                      each workload (default 16x4096,logu-64k; any
 *                                      experiments/common/workloads.c name or spec,
 *                                      16 heads, d = 128), median of REPS (30) CUDA-event
 *                                      timings after 5 warm-up calls
 *   check_quantize both [SEED]         check, then time with the defaults
 *
 * Check: inputs with per-row corners (zero rows, one spike over a tiny rest, BF16
 * subnormals, E4M3 rounding ties, -0, magnitudes over 80 binades); the workspace
 * (exactly layout.total bytes) is poisoned with 0xCD; one flamia_sm90_quantize call;
 * then EVERY byte of [0, end of v_bf16) is compared with the image a host quantization
 * builds (flamia_formats.h scalar rules, flamia_ref_hadamard for the rotation: codes,
 * exponents, V^T with the pad tokens zeroed, BF16 operands, err_flag = 0, alignment
 * gaps and the other kind's regions still 0xCD), and the rest of the workspace is
 * checked on the device to still hold 0xCD. Then err_flag: a NaN / -inf input element
 * must raise it for the E4M3 kinds (not for bf16), and a clean call must clear it.
 * Layouts: random packs (1-token documents, odd lengths, lengths around 32/64/128),
 * one odd document, 5 x 96, 300 one-token documents, 3 + 2045 (every window misaligned),
 * for all 3 kinds x Hadamard off/on x d 64/128, GQA 4/2, 8/1, MHA 3/3; then large
 * packs with several head slots per CTA (16x1024, logu-16k, a 45000-token random pack).
 *
 * Bytes for GB/s (dev/quantize/README.md): E4M3 kinds read BF16 Q, K, V once and write
 * codes [T][H][D], V^T codes [Hkv][D][T] (not counting the gaps between documents) and
 * exponents [T][H]; bf16 reads Q, K, V
 * and writes the BF16 copies. Percent of the measured 4.2 TB/s device copy.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flamia.h"
#include "flamia_formats.h"
#include "sm90_launch.h"
#include "../harness_common.h"

#ifndef QUANT_SRC
#define QUANT_SRC "../../kernels/sm90/quantize.cu"
#endif
#include QUANT_SRC

extern "C" {
#include "xp.h"
void flamia_ref_hadamard(float *x, size_t rows, int D); /* kernels/ref/quantize_ref.c */
}

static const double kCopyGBs = 4200.0; /* measured device copy ceiling (perf-notes) */
static int failures = 0, cases = 0;

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
struct Rng {
    uint64_t s;
    uint64_t next() { return s = mix64(s); }
    double unif() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
    int range(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }
    double normal() {
        const double u = unif() + 1e-300, v = unif();
        return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
    }
};

static const char *kind_name(flamia_sm90_kind k) {
    return k == FLAMIA_SM90_BF16 ? "bf16" : k == FLAMIA_SM90_MXFP8 ? "mxfp8" : "mxfp8-exact";
}

/* Corner-case rows (as tests/gpu/test_gpu_quantize.c), one independent stream per row. */
static void fill_inputs(uint64_t seed, std::vector<uint16_t> &b, int T, int H, int D) {
#pragma omp parallel for schedule(static)
    for (long rr = 0; rr < (long)T * H; rr++) {
        Rng r{mix64(seed ^ mix64((uint64_t)rr))};
        uint16_t *row = b.data() + (size_t)rr * D;
        const int kind = r.range(0, 19);
        const double scale = ldexp(1.0, r.range(-40, 40));
        for (int d = 0; d < D; d++) {
            float x;
            switch (kind) {
            case 0: x = 0.0f; break;
            case 1: x = d == 5 ? (float)(1e4 * scale) : (float)(r.normal() * scale * 1e-3); break;
            case 2: x = flamia_bitsf((uint32_t)r.range(1, 0x7fffff)); break; /* subnormal */
            case 3: /* E4M3 ties: (m + 0.5) * 2^k */
                x = (float)ldexp((double)r.range(16, 31) + 0.5, r.range(-20, 20) - 4);
                if (r.range(0, 1)) x = -x;
                break;
            case 4: x = -0.0f; break;
            default: x = (float)(r.normal() * scale);
            }
            row[d] = flamia_bf16_bits(x);
        }
    }
}

/* Host image of one operand's regions (numerics.md section 2). */
static void expect_operand(const std::vector<uint16_t> &in, int T, int H, int D, const std::vector<int32_t> &cu,
                           flamia_sm90_kind kind, bool rotate, uint8_t *codes, int8_t *exps, uint16_t *bf) {
    const size_t n = (size_t)T * H * D, rows = (size_t)T * H;
    std::vector<float> x(n);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < (long)n; i++) x[i] = flamia_bf16_value(in[i]);
    if (rotate) {
        const long chunk = 1024;
#pragma omp parallel for schedule(static)
        for (long r0 = 0; r0 < (long)rows; r0 += chunk)
            flamia_ref_hadamard(x.data() + (size_t)r0 * D, (size_t)std::min<long>(chunk, (long)rows - r0), D);
    }
    if (kind == FLAMIA_SM90_BF16) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < (long)n; i++) bf[i] = rotate ? flamia_bf16_bits(x[i]) : in[i];
        return;
    }
    const int gran = kind == FLAMIA_SM90_MXFP8 ? 32 : 1;
    std::vector<std::pair<int, int>> groups; /* [s, e) token groups of one document */
    for (size_t doc = 0; doc + 1 < cu.size(); doc++)
        for (int s = cu[doc]; s < cu[doc + 1]; s += gran) groups.push_back({s, std::min(s + gran, (int)cu[doc + 1])});
#pragma omp parallel for schedule(dynamic, 64)
    for (long gi = 0; gi < (long)groups.size(); gi++) {
        const int s = groups[gi].first, e = groups[gi].second;
        for (int h = 0; h < H; h++) {
            float amax = 0.0f;
            for (int t = s; t < e; t++)
                for (int d = 0; d < D; d++) amax = fmaxf(amax, fabsf(x[((size_t)t * H + h) * D + d]));
            const int ex = flamia_fmt_block_exponent(amax, 0 /* CEIL */);
            for (int t = s; t < e; t++) {
                exps[(size_t)t * H + h] = (int8_t)ex;
                for (int d = 0; d < D; d++) {
                    const size_t i = ((size_t)t * H + h) * D + d;
                    codes[i] = flamia_e4m3_quant(x[i], ex);
                }
            }
        }
    }
}

__global__ void count_not_cd(const uint8_t *p, size_t n, unsigned long long *cnt, unsigned long long *first) {
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (p[i] != 0xCD) {
            c++;
            atomicMin(first, (unsigned long long)i);
        }
    if (c) atomicAdd(cnt, c);
}

struct Region {
    const char *name;
    size_t off;
};
static std::string where(const flamia_sm90_layout &L, size_t at) {
    const Region R[] = {{"err_flag", L.err_flag}, {"q_codes", L.q_codes}, {"k_codes", L.k_codes},
                        {"v_codes", L.v_codes},   {"vt_codes", L.vt_codes}, {"q_exp", L.q_exp},
                        {"k_exp", L.k_exp},       {"v_exp", L.v_exp},     {"q_bf16", L.q_bf16},
                        {"k_bf16", L.k_bf16},     {"v_bf16", L.v_bf16},   {"row_frame", L.row_frame}};
    const Region *best = &R[0];
    for (const Region &r : R)
        if (r.off <= at && r.off >= best->off) best = &r;
    char buf[96];
    snprintf(buf, sizeof buf, "%s+%zu", best->name, at - best->off);
    return buf;
}

struct Problem {
    std::vector<int32_t> cu;
    int T, Hq, Hkv, D;
};

static flamia_sm90_problem make_problem(const Problem &pr, const int32_t *dcu, flamia_sm90_kind kind, int had) {
    flamia_sm90_problem P;
    memset(&P, 0, sizeof P);
    P.total_tokens = pr.T;
    P.num_docs = (int)pr.cu.size() - 1;
    P.heads_q = pr.Hq;
    P.heads_kv = pr.Hkv;
    P.head_dim = pr.D;
    P.causal = 1;
    int maxlen = 0;
    for (size_t i = 0; i + 1 < pr.cu.size(); i++) maxlen = std::max(maxlen, pr.cu[i + 1] - pr.cu[i]);
    P.max_seqlen = maxlen;
    P.softmax_scale = 1.0f / sqrtf((float)pr.D);
    P.cu_seqlens = dcu;
    P.kind = kind;
    P.hadamard = had;
    return P;
}

static void run_case(const char *label, const std::vector<int> &lens, int Hq, int Hkv, int D, flamia_sm90_kind kind,
                     int had, uint64_t seed) {
    Problem pr;
    pr.cu.assign(1, 0);
    for (int l : lens) pr.cu.push_back(pr.cu.back() + l);
    pr.T = pr.cu.back();
    pr.Hq = Hq;
    pr.Hkv = Hkv;
    pr.D = D;
    const int T = pr.T, ndocs = (int)lens.size();
    int32_t *dcu;
    CK(cudaMalloc(&dcu, pr.cu.size() * 4));
    CK(cudaMemcpy(dcu, pr.cu.data(), pr.cu.size() * 4, cudaMemcpyHostToDevice));
    const flamia_sm90_problem P = make_problem(pr, dcu, kind, had);
    const flamia_sm90_layout L = flamia_sm90_layout_of(&P);

    const int H[3] = {Hq, Hkv, Hkv};
    std::vector<uint16_t> in[3];
    uint16_t *din[3];
    for (int ti = 0; ti < 3; ti++) {
        const size_t n = (size_t)T * H[ti] * D;
        in[ti].resize(n);
        fill_inputs(mix64(seed * 3 + ti), in[ti], T, H[ti], D);
        CK(cudaMalloc(&din[ti], n * 2));
        CK(cudaMemcpy(din[ti], in[ti].data(), n * 2, cudaMemcpyHostToDevice));
    }
    uint8_t *ws;
    CK(cudaMalloc(&ws, L.total));
    CK(cudaMemset(ws, 0xCD, L.total));
    CK(flamia_sm90_quantize(&P, din[0], din[1], din[2], ws, 0));
    CK(cudaDeviceSynchronize());

    /* expected image of [0, end of v_bf16) */
    const size_t cmp_end = L.row_frame; /* v_bf16 region end, rounded to 256 */
    std::vector<uint8_t> want(cmp_end, 0xCD), got(cmp_end);
    memset(want.data() + L.err_flag, 0, 4);
    const size_t coff[3] = {L.q_codes, L.k_codes, L.v_codes}, eoff[3] = {L.q_exp, L.k_exp, L.v_exp},
                 boff[3] = {L.q_bf16, L.k_bf16, L.v_bf16};
    for (int ti = 0; ti < 3; ti++)
        expect_operand(in[ti], T, H[ti], D, pr.cu, kind, had && ti < 2, want.data() + coff[ti],
                       (int8_t *)(want.data() + eoff[ti]), (uint16_t *)(want.data() + boff[ti]));
    if (kind != FLAMIA_SM90_BF16) {
        flamia_sm90_vt_host(want.data() + L.v_codes, pr.cu.data(), (int)pr.cu.size() - 1, Hkv, D, L.t_vpad,
                            want.data() + L.vt_codes);
    }
    CK(cudaMemcpy(got.data(), ws, cmp_end, cudaMemcpyDeviceToHost));
    size_t ndiff = 0, first = (size_t)-1;
#pragma omp parallel for reduction(+ : ndiff) reduction(min : first)
    for (long i = 0; i < (long)cmp_end; i++)
        if (want[i] != got[i]) {
            ndiff++;
            first = std::min(first, (size_t)i);
        }
    char msg[512] = "";
    int bad = 0;
    if (ndiff) {
        bad = 1;
        snprintf(msg, sizeof msg, "%zu bytes differ, first at %s (want %02x got %02x)", ndiff,
                 where(L, first).c_str(), want[first], got[first]);
    }
    /* the tail [row_frame, total) is the forward's and backward's: still poison */
    unsigned long long *dc;
    CK(cudaMalloc(&dc, 16));
    const unsigned long long init[2] = {0, ~0ull};
    CK(cudaMemcpy(dc, init, 16, cudaMemcpyHostToDevice));
    count_not_cd<<<1024, 256>>>(ws + cmp_end, L.total - cmp_end, dc, dc + 1);
    unsigned long long tail[2];
    CK(cudaMemcpy(tail, dc, 16, cudaMemcpyDeviceToHost));
    if (tail[0]) {
        bad = 1;
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s%llu bytes written past v_bf16 (first at %s)",
                 ndiff ? "; " : "", tail[0], where(L, cmp_end + tail[1]).c_str());
    }

    /* err_flag: a non-finite element raises it (E4M3 kinds), a clean call clears it */
    {
        Rng r{mix64(seed ^ 0xE77)};
        const int which = r.range(0, 2);
        const size_t n = (size_t)T * H[which] * D, at = (size_t)(r.next() % n);
        const uint16_t badv = r.range(0, 1) ? 0x7fc0 : 0xff80, orig = in[which][at];
        int32_t err = -1;
        CK(cudaMemcpy(din[which] + at, &badv, 2, cudaMemcpyHostToDevice));
        CK(flamia_sm90_quantize(&P, din[0], din[1], din[2], ws, 0));
        CK(cudaMemcpy(&err, ws + L.err_flag, 4, cudaMemcpyDeviceToHost));
        const int want_err = kind == FLAMIA_SM90_BF16 ? 0 : 1;
        if ((err != 0) != want_err) {
            bad = 1;
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "; err_flag %d for a %s in %c", err,
                     badv == 0x7fc0 ? "NaN" : "-inf", "QKV"[which]);
        }
        CK(cudaMemcpy(din[which] + at, &orig, 2, cudaMemcpyHostToDevice));
        CK(flamia_sm90_quantize(&P, din[0], din[1], din[2], ws, 0));
        CK(cudaMemcpy(&err, ws + L.err_flag, 4, cudaMemcpyDeviceToHost));
        if (err != 0) {
            bad = 1;
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "; err_flag %d after a clean call", err);
        }
    }
    cases++;
    failures += bad;
    printf("%-28s %-11s had=%d D=%3d T=%6d docs=%5d Hq=%2d Hkv=%2d  %s%s\n", label, kind_name(kind), had, D, T,
           ndocs, Hq, Hkv, bad ? "FAIL " : "ok", msg);
    fflush(stdout);
    for (int ti = 0; ti < 3; ti++) CK(cudaFree(din[ti]));
    CK(cudaFree(ws));
    CK(cudaFree(dcu));
    CK(cudaFree(dc));
}

static std::vector<int> random_lens(Rng &r, int target) {
    static const int pool[] = {1, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255, 257, 300, 385};
    std::vector<int> lens;
    int t = 0;
    while (t < target) {
        int l = pool[r.next() % (sizeof pool / sizeof pool[0])];
        if (r.unif() < 0.3) l = r.range(1, 400);
        l = std::min(l, target - t);
        lens.push_back(l);
        t += l;
    }
    return lens;
}

static std::vector<int> workload_lens(const char *name) {
    xp_workload w;
    char err[256];
    if (xp_workload_make(name, 1.0, 0, &w, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(2);
    }
    std::vector<int> lens;
    for (int i = 0; i < w.num_docs; i++) lens.push_back(w.cu_seqlens[i + 1] - w.cu_seqlens[i]);
    xp_workload_free(&w);
    return lens;
}

static void check_all(uint64_t seed, bool large) {
    Rng r{seed};
    const flamia_sm90_kind kinds[3] = {FLAMIA_SM90_MXFP8, FLAMIA_SM90_MXFP8_EXACT, FLAMIA_SM90_BF16};
    for (int ki = 0; ki < 3; ki++)
        for (int had = 0; had <= 1; had++)
            for (int D = 64; D <= 128; D += 64) {
                run_case("random pack (GQA 4/2)", random_lens(r, 1500), 4, 2, D, kinds[ki], had, r.next());
                run_case("one document of 999", {999}, 3, 3, D, kinds[ki], had, r.next());
                run_case("5 x 96 (GQA 8/1)", std::vector<int>(5, 96), 8, 1, D, kinds[ki], had, r.next());
                run_case("300 one-token documents", std::vector<int>(300, 1), 2, 2, D, kinds[ki], had, r.next());
                run_case("3 + 2045 (misaligned)", {3, 2045}, 4, 4, D, kinds[ki], had, r.next());
            }
    /* several head slots per CTA (the prefetch crosses slots), aligned and misaligned */
    run_case("16x1024", std::vector<int>(16, 1024), 16, 16, 128, FLAMIA_SM90_MXFP8, 0, r.next());
    run_case("logu-16k", workload_lens("logu-16k"), 16, 16, 128, FLAMIA_SM90_MXFP8, 0, r.next());
    run_case("logu-16k", workload_lens("logu-16k"), 16, 16, 128, FLAMIA_SM90_MXFP8, 1, r.next());
    if (!large) return;
    run_case("large random pack", random_lens(r, 45000), 16, 16, 128, FLAMIA_SM90_MXFP8, 0, r.next());
    const std::vector<int> big = random_lens(r, 20000);
    run_case("large random pack", big, 16, 4, 128, FLAMIA_SM90_MXFP8_EXACT, 1, r.next());
    run_case("large random pack", big, 16, 4, 128, FLAMIA_SM90_BF16, 1, r.next());
    run_case("large random pack", big, 16, 16, 64, FLAMIA_SM90_MXFP8, 0, r.next());
}

__global__ void fill_normalish(uint16_t *p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        /* sum of 4 uniforms: roughly normal, scaled by a per-16-element binade */
        const float u = ((z & 0xffff) + ((z >> 16) & 0xffff) + ((z >> 32) & 0xffff) + (z >> 48)) / 65536.0f - 2.0f;
        p[i] = flamia_bf16_bits(u * flamia_pow2f((int)((i / 16) % 7) - 3));
    }
}

static void time_workload(const char *wl, int reps) {
    Problem pr;
    const std::vector<int> lens = workload_lens(wl);
    pr.cu.assign(1, 0);
    for (int l : lens) pr.cu.push_back(pr.cu.back() + l);
    pr.T = pr.cu.back();
    pr.Hq = 16;
    pr.Hkv = 16;
    pr.D = 128;
    int32_t *dcu;
    CK(cudaMalloc(&dcu, pr.cu.size() * 4));
    CK(cudaMemcpy(dcu, pr.cu.data(), pr.cu.size() * 4, cudaMemcpyHostToDevice));
    const size_t nq = (size_t)pr.T * pr.Hq * pr.D, nk = (size_t)pr.T * pr.Hkv * pr.D;
    uint16_t *dq, *dk, *dv;
    CK(cudaMalloc(&dq, nq * 2));
    CK(cudaMalloc(&dk, nk * 2));
    CK(cudaMalloc(&dv, nk * 2));
    fill_normalish<<<2048, 256>>>(dq, nq, 1);
    fill_normalish<<<2048, 256>>>(dk, nk, 2);
    fill_normalish<<<2048, 256>>>(dv, nk, 3);
    const flamia_sm90_kind kinds[3] = {FLAMIA_SM90_MXFP8, FLAMIA_SM90_MXFP8_EXACT, FLAMIA_SM90_BF16};
    flamia_sm90_problem P0 = make_problem(pr, dcu, FLAMIA_SM90_BF16, 0); /* the largest layout */
    const flamia_sm90_layout L = flamia_sm90_layout_of(&P0);
    uint8_t *ws;
    CK(cudaMalloc(&ws, L.total));
    CK(cudaMemset(ws, 0, L.total));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (flamia_sm90_kind kind : kinds) {
        const flamia_sm90_problem P = make_problem(pr, dcu, kind, 0);
        for (int i = 0; i < 5; i++) CK(flamia_sm90_quantize(&P, dq, dk, dv, ws, 0));
        CK(cudaDeviceSynchronize());
        std::vector<float> ms(reps);
        for (int i = 0; i < reps; i++) {
            CK(cudaEventRecord(e0));
            CK(flamia_sm90_quantize(&P, dq, dk, dv, ws, 0));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaEventElapsedTime(&ms[i], e0, e1));
        }
        std::sort(ms.begin(), ms.end());
        const double med = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
        const double rd = 2.0 * (nq + 2 * nk);
        const double bytes = kind == FLAMIA_SM90_BF16
                                 ? 2 * rd
                                 : rd + (nq + 2 * nk) + (double)pr.Hkv * pr.D * pr.T +
                                       (double)pr.T * (pr.Hq + 2 * pr.Hkv);
        const double gbs = bytes / (med * 1e6);
        printf("time %-10s %-11s had=0 T=%6d docs=%5d  median %.4f ms (min %.4f max %.4f, n=%d)  %.3f GB  "
               "%6.0f GB/s  %5.1f %% of copy\n",
               wl, kind_name(kind), pr.T, (int)lens.size(), med, ms[0], ms[reps - 1], reps, bytes * 1e-9, gbs,
               100.0 * gbs / kCopyGBs);
        fflush(stdout);
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(ws));
    CK(cudaFree(dq));
    CK(cudaFree(dk));
    CK(cudaFree(dv));
    CK(cudaFree(dcu));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "both";
    const bool quick = !strcmp(mode, "quick");
    if (quick) mode = "check";
    if (strcmp(mode, "check") && strcmp(mode, "time") && strcmp(mode, "both")) {
        fprintf(stderr, "usage: %s check|quick [SEED] | time [WL,...] [REPS] | both [SEED]\n", argv[0]);
        return 2;
    }
    printf("check_quantize: source %s\n", QUANT_SRC);
    if (strcmp(mode, "time")) {
        const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20261129;
        check_all(seed, !quick);
        printf("check_quantize: %d of %d cases bit-exact%s\n", cases - failures, cases,
               failures ? " -- FAILURES" : "");
    }
    if (strcmp(mode, "check")) {
        const std::string wls = !strcmp(mode, "time") && argc > 2 ? argv[2] : "16x4096,logu-64k";
        const int reps = !strcmp(mode, "time") && argc > 3 ? atoi(argv[3]) : 30;
        size_t p = 0;
        while (p <= wls.size()) {
            const size_t q = std::min(wls.find(',', p), wls.size());
            if (q > p) time_workload(wls.substr(p, q - p).c_str(), reps);
            p = q + 1;
        }
    }
    return failures ? 1 : 0;
}
