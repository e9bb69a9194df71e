/* test_util.h - tiny harness for the cpu suite: fresh random inputs every run
 * (seed printed; FLAMIA_TEST_SEED=n repeats a run), packed layouts, metrics. */
#ifndef FLAMIA_TEST_UTIL_H
#define FLAMIA_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flamia.h"

static int g_failures;
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            g_failures++;                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                       \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
        }                                                                                         \
    } while (0)
#define TEST_EXIT() (g_failures ? (fprintf(stderr, "%d check(s) failed\n", g_failures), 1) : 0)

static uint64_t g_rng;
static inline uint64_t rng_u64(void) { /* splitmix64 */
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double rng_unif(void) { return (double)(rng_u64() >> 11) * 0x1.0p-53; }
static inline int rng_int(int lo, int hi) { return lo + (int)(rng_u64() % (uint64_t)(hi - lo + 1)); }
static inline float rng_normal(void) {
    double u = rng_unif(), v = rng_unif();
    return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}
static inline uint64_t test_seed_init(const char *name) {
    const char *env = getenv("FLAMIA_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    g_rng = seed;
    printf("%s: seed %llu (FLAMIA_TEST_SEED=%llu repeats this run)\n", name, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* randn with a few outlier channels x20 (same channels for every token) */
static inline void fill_randn(float *x, int T, int H, int D, int n_outlier) {
    int ch[8];
    for (int i = 0; i < n_outlier && i < 8; i++) ch[i] = rng_int(0, D - 1);
    for (size_t i = 0; i < (size_t)T * H * D; i++) x[i] = rng_normal();
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < n_outlier && i < 8; i++) x[((size_t)t * H + h) * D + ch[i]] *= 20.0f;
}

/* A random packed layout of `docs` documents with lengths in [1, maxlen]. */
static inline int random_layout(int32_t *cu, int docs, int maxlen) {
    cu[0] = 0;
    for (int d = 0; d < docs; d++) {
        int len = rng_unif() < 0.2 ? 1 : rng_int(1, maxlen);
        cu[d + 1] = cu[d] + len;
    }
    return cu[docs];
}

static inline double cosine_fd(const float *a, const double *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) { ab += a[i] * b[i]; aa += (double)a[i] * a[i]; bb += b[i] * b[i]; }
    return ab / (sqrt(aa * bb) + 1e-300);
}
static inline double rel_l2_fd(const float *a, const double *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) { num += (a[i] - b[i]) * (a[i] - b[i]); den += b[i] * b[i]; }
    return sqrt(num / (den + 1e-300));
}

static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    return p;
}
#endif
