/* test_inputs.h - the gpu tests' random inputs without the CUDA runtime: splitmix64
 * numbers, packed layouts, BF16 tensors with outlier channels. gpu_common.h includes it;
 * so does dev/backward/bound_study.c, which must draw exactly the test's inputs. */
#ifndef FLAMIA_TEST_INPUTS_H
#define FLAMIA_TEST_INPUTS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "flamia_formats.h"

/* ---- deterministic random numbers (splitmix64) */
typedef struct { uint64_t s; } rng_t;
static inline uint64_t rng_u64(rng_t *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double rng_uniform(rng_t *r) { return (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
static inline int rng_int(rng_t *r, int lo, int hi) { /* [lo, hi] */
    return lo + (int)(rng_u64(r) % (uint64_t)(hi - lo + 1));
}
static inline double rng_normal(rng_t *r) {
    double u = rng_uniform(r), v = rng_uniform(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- packed layouts */
/* Fills cu[0..n] from lens[0..n-1]; returns T. */
static inline int cu_from_lens(const int *lens, int n, int32_t *cu) {
    cu[0] = 0;
    for (int i = 0; i < n; i++) cu[i + 1] = cu[i] + lens[i];
    return cu[n];
}
static inline int max_len(const int32_t *cu, int n) {
    int m = 0;
    for (int i = 0; i < n; i++)
        if (cu[i + 1] - cu[i] > m) m = cu[i + 1] - cu[i];
    return m;
}
/* Random document lengths with 1-token documents, odd lengths, lengths around
 * multiples of 32 and 128; total about `target`. Returns the number of docs. */
static inline int random_lens(rng_t *r, int target, int *lens, int cap) {
    static const int pool[] = {1, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255, 257, 300, 385};
    int n = 0, t = 0;
    while (t < target && n < cap) {
        int l = pool[rng_u64(r) % (sizeof pool / sizeof pool[0])];
        if (rng_uniform(r) < 0.3) l = rng_int(r, 1, 400);
        if (t + l > target) l = target - t;
        lens[n++] = l;
        t += l;
    }
    return n;
}

/* ---- BF16 tensors: random values held as floats that are exact BF16 values (and their
 * bits in b, unless b is NULL) */
static inline void fill_bf16(rng_t *r, float *x, uint16_t *b, size_t n, double scale) {
    for (size_t i = 0; i < n; i++) {
        const uint16_t bits = flamia_bf16_bits((float)(rng_normal(r) * scale));
        x[i] = flamia_bf16_value(bits);
        if (b) b[i] = bits;
    }
}

/* Outlier channels, as in real activations: `count` distinct random channels of every row
 * of x [rows][D] (floats that are BF16 values, and their BF16 bits in b unless NULL) scaled by `factor`.
 * Distinct: a channel drawn twice was scaled by factor^2 (x64 for 3 channels x8), an
 * input far outside the stated setting (it happens in ~2 % of the draws). */
static inline void scale_channels(rng_t *r, float *x, uint16_t *b, size_t rows, int D, int count, float factor) {
    unsigned char taken[256] = {0}; /* D <= 256 */
    for (int o = 0; o < count && o < D; o++) {
        int ch;
        do ch = rng_int(r, 0, D - 1);
        while (taken[ch]);
        taken[ch] = 1;
        for (size_t t = 0; t < rows; t++) {
            const uint16_t bits = flamia_bf16_bits(x[t * D + ch] * factor);
            x[t * D + ch] = flamia_bf16_value(bits);
            if (b) b[t * D + ch] = bits;
        }
    }
}

/* Zero rows at document starts: the first `tokens` tokens of every document of x [T][width]
 * (and their BF16 bits in b unless NULL) set to 0, so that a document's first rows see only
 * all-zero values (test_gpu_forward / test_gpu_backward: V, the forward's V-exponent floor). */
static inline void zero_doc_starts(float *x, uint16_t *b, const int32_t *cu, int ndocs, size_t width, int tokens) {
    for (int d = 0; d < ndocs; d++) {
        const int end = cu[d + 1] < cu[d] + tokens ? cu[d + 1] : cu[d] + tokens;
        for (size_t i = (size_t)cu[d] * width; i < (size_t)end * width; i++) {
            x[i] = 0.f;
            if (b) b[i] = 0;
        }
    }
}

/* The last `tokens` tokens of every document (all of a shorter one) zeroed, as zero_doc_starts:
 * a padded document's tail (Q, K, V and dO all zero there; experiments/packed_memory). */
static inline void zero_doc_ends(float *x, uint16_t *b, const int32_t *cu, int ndocs, size_t width, int tokens) {
    for (int d = 0; d < ndocs; d++) {
        const int start = cu[d + 1] - tokens > cu[d] ? cu[d + 1] - tokens : cu[d];
        for (size_t i = (size_t)start * width; i < (size_t)cu[d + 1] * width; i++) {
            x[i] = 0.f;
            if (b) b[i] = 0;
        }
    }
}

/* x += mean on every element, kept BF16-representable (b: the BF16 image, may be NULL) */
static inline void add_mean(float *x, uint16_t *b, size_t n, double mean) {
    for (size_t i = 0; i < n; i++) {
        const uint16_t bits = flamia_bf16_bits((float)(x[i] + mean));
        x[i] = flamia_bf16_value(bits);
        if (b) b[i] = bits;
    }
}

#endif
