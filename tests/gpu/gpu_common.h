/* gpu_common.h - helpers of the `gpu` test suite (CUDA runtime from C). */
#ifndef FLAMIA_GPU_COMMON_H
#define FLAMIA_GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flamia.h"
#include "flamia_formats.h"
#include "sm90_launch.h" /* the kernels' workspace layout, which some tests read */
#include "test_inputs.h"

#define SKIP_CODE 77

#define CK(call)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)

#define FL(call)                                                                                       \
    do {                                                                                               \
        flamia_status s_ = (call);                                                                     \
        if (s_ != FLAMIA_OK) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,                   \
                    flamia_status_string(s_), flamia_last_error());                                    \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static inline void gpu_skip_if_unavailable(const char *name) {
    if (!flamia_cuda_available()) {
        printf("SKIP %s: no sm_90 GPU visible (or libflamia built without CUDA)\n", name);
        exit(SKIP_CODE);
    }
}

/* Fresh inputs every run; FLAMIA_TEST_SEED=n repeats one. */
static inline uint64_t gpu_seed(const char *name) {
    const char *env = getenv("FLAMIA_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    printf("%s: seed %llu (FLAMIA_TEST_SEED=%llu repeats this run)\n", name, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* A problem of the sizes alone, by kind (sm90_launch.h; the layout depends on it: BF16 operand
 * regions only for bf16). Its layout places the regions up to dq_accum as a call does; the later
 * ones move with dq_room, which also depends on what the sizes leave out: gpu_call_layout below. */
static inline struct flamia_sm90_problem gpu_problem_of_kind(enum flamia_sm90_kind kind, int T, int ndocs, int Hq,
                                                             int Hkv, int D) {
    struct flamia_sm90_problem P;
    memset(&P, 0, sizeof P);
    P.kind = kind;
    P.total_tokens = T;
    P.num_docs = ndocs;
    P.heads_q = Hq;
    P.heads_kv = Hkv;
    P.head_dim = D;
    P.dq_room_chunks = FLAMIA_SM90_DQ_ROOM_CHUNKS; /* as the API's calls (cuda_api.cu prepare) */
    P.dq_room_one_growth = FLAMIA_SM90_DQ_ROOM_ONE_GROWTH;
    return P;
}
static inline enum flamia_sm90_kind gpu_kind_of_preset(const char *preset) {
    return !strcmp(preset, "bf16") ? FLAMIA_SM90_BF16 : !strcmp(preset, "mxfp8-exact") ? FLAMIA_SM90_MXFP8_EXACT : FLAMIA_SM90_MXFP8;
}
static inline struct flamia_sm90_layout gpu_layout_of_kind(enum flamia_sm90_kind kind, int T, int ndocs, int Hq,
                                                           int Hkv, int D) {
    const struct flamia_sm90_problem P = gpu_problem_of_kind(kind, T, ndocs, Hq, Hkv, D);
    return flamia_sm90_layout_of(&P);
}
/* The layout a call on this recipe and shape used (the library's own: its dq_room depends on
 * max_seqlen, causal and the host copy of cu_seqlens, so a layout rebuilt from the sizes alone
 * places the regions after dq_accum elsewhere) */
static inline struct flamia_sm90_layout gpu_call_layout(const flamia_recipe *rec, const flamia_shape *shape) {
    struct flamia_sm90_layout L;
    memset(&L, 0, sizeof L);
    if (flamia_sm90_layout_for_call(rec, shape, &L) != FLAMIA_OK) {
        fprintf(stderr, "FAIL: flamia_sm90_layout_for_call: %s\n", flamia_last_error());
        exit(1);
    }
    return L;
}

static inline void *dmalloc(size_t bytes) {
    void *p = NULL;
    CK(cudaMalloc(&p, bytes < 16 ? 16 : bytes));
    return p;
}
/* a device copy of `bytes` host bytes */
static inline void *dupload(const void *host, size_t bytes) {
    void *p = dmalloc(bytes);
    CK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
}
static inline void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "FAIL: host malloc(%zu)\n", bytes);
        exit(1);
    }
    return p;
}

/* Two BF16 arrays of one tensor (two runs, eager vs replay): relative L2 of b - a over
 * the pairs where both are finite, the pairs with a non-finite side, and the finite pairs
 * whose bits differ. */
typedef struct {
    double rel;
    long nonfinite, differ;
} bf16_diff;
static inline bf16_diff bf16_compare(const uint16_t *a, const uint16_t *b, size_t n) {
    bf16_diff d = {0, 0, 0};
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        const double x = flamia_bf16_value(a[i]), y = flamia_bf16_value(b[i]);
        if (!isfinite(x) || !isfinite(y)) {
            d.nonfinite++;
            continue;
        }
        num += (x - y) * (x - y);
        den += x * x;
        d.differ += a[i] != b[i];
    }
    d.rel = sqrt(num / (den + 1e-300));
    return d;
}

/* soft assertion: counts a failure and goes on (the test returns failures != 0) */
static int failures;
#define EXPECT(cond, ...)                                        \
    do {                                                         \
        if (!(cond)) {                                           \
            failures++;                                          \
            fflush(stdout); /* not inside a piped report line */ \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fprintf(stderr, "\n");                               \
        }                                                        \
    } while (0)

/* The work items the last forward call on workspace ws listed for its split launch
 * (fwd_work's count, sm90_launch.h), and the expectation on it: split 1 some, 0 none,
 * -1 not checked. */
static inline int gpu_fwd_split_items(const void *ws, const struct flamia_sm90_layout *L) {
    int n = -1;
    CK(cudaMemcpy(&n, (const uint8_t *)ws + L->fwd_work + FLAMIA_SM90_FWD_SPLIT_COUNT * sizeof(int), sizeof n,
                  cudaMemcpyDeviceToHost));
    return n;
}
static inline void gpu_expect_split(const char *label, const char *preset, int split, int listed) {
    EXPECT(split < 0 || (split ? listed > 0 : listed == 0), "%s %s: %d work items took the split exponential (expected %s)",
           label, preset, listed, split ? "some" : "none");
}

/* ---- bounds for the FP8 recipes on Hopper (docs/numerics.md 8.2)
 * Hopper's FP8 wgmma sums its products with an accumulator narrower than FP32: the
 * score of one k=128 product is off by up to 2.5e-4..4.1e-4 x max|s| (probe
 * dev/forward/fp8_acc_probe.cu on the H200: 2.5e-4 for N(0,1) operands, 4.1e-4 with
 * outlier channels). The CPU reference sums exactly in FP32/FP64, so the two compute the
 * same function of slightly different scores:
 *  - a P or dS code moves by one E4M3 step wherever that shift crosses a rounding
 *    midpoint. Per element the expected squared change is about delta*u*P^2 (delta the
 *    relative shift, u the relative E4M3 step) against u^2 P^2 / 12 for the recipe's own
 *    rounding: GPU-vs-ref / ref-vs-FP64 ~ sqrt(12 delta / u), about 0.1 here (measured
 *    0.04-0.17 over the dev harness and the gpu suite, H200, 2026-11-29). Bound kHwRatio = 0.25
 *    for lse; O uses test_gpu_forward.c's kFwdRatio (0.5) and per-row kFwdRowRel (0.25):
 *    its ratio reached 0.25 on the H200 in a case with few P codes (193 tokens), and the
 *    CPU study dev/forward/bound_study_fwd.c put 1.2 % of such runs above 0.25.
 *  - the GPU must be as accurate as the recipe: GPU-vs-FP64 <= kHwF64Slack x ref-vs-FP64
 *    (independent errors at ratio 0.25 would give 1.03).
 *  - one element can move by at most one E4M3 step of its dominant term: max |d| <=
 *    2^-3 max |ref| (kHwMaxRel).
 *  - lse sums unquantized exponentials, so the score error reaches it undamped: it is
 *    held to the same ratio, kHwRatio x the recipe's own lse error (rms and max).
 * A real defect (a wrong code, scale or mask) gives a ratio near or above 1.
 * test_gpu_backward.c holds the gradients to its own, measured bounds (kBwd*). */
static const double kHwRatio = 0.25, kHwF64Slack = 1.05, kHwMaxRel = 0.125;

/* max |s| = max |q_i . k_j| * scale over the pairs attention evaluates (same document;
 * causal: j <= i), every query head with its kv head: the scale of the score error. */
static inline double max_abs_score(const float *q, const float *k, const int32_t *cu, int ndocs, int Hq, int Hkv,
                                   int D, int causal) {
    const double scale = 1.0 / sqrt((double)D);
    double m = 0;
    for (int d = 0; d < ndocs; d++)
        for (int h = 0; h < Hq; h++) {
            const int hk = h / (Hq / Hkv);
            for (int i = cu[d]; i < cu[d + 1]; i++) {
                const float *qi = q + ((size_t)i * Hq + h) * D;
                const int jend = causal ? i + 1 : cu[d + 1];
                for (int j = cu[d]; j < jend; j++) {
                    const float *kj = k + ((size_t)j * Hkv + hk) * D;
                    float s = 0;
                    for (int c = 0; c < D; c++) s += qi[c] * kj[c];
                    if (fabs(s) > m) m = fabs(s);
                }
            }
        }
    return m * scale;
}

#endif
