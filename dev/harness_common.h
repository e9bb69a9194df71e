/*
 * harness_common.h - what the dev harnesses share: the CUDA error check (all three), and the
 * random numbers and LAYOUT argument of the forward and backward ones (dev/forward/
 * check_forward.cu, dev/backward/check_backward.cu). Both must draw the same layouts from
 * the same seeds (compare.sh dumps bytes of one harness build against another's), so there
 * is one definition.
 */
#ifndef FLAMIA_DEV_HARNESS_COMMON_H
#define FLAMIA_DEV_HARNESS_COMMON_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#define CK(x)                                                                                         \
    do {                                                                                              \
        cudaError_t e_ = (x);                                                                         \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, \
                    cudaGetErrorString(e_));                                                          \
            exit(2);                                                                                  \
        }                                                                                             \
    } while (0)

static uint64_t rng_s = 0x9E3779B97F4A7C15ull;
static inline uint64_t rnext() {
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return rng_s;
}
static inline double runif() { return (rnext() >> 11) * (1.0 / 9007199254740992.0); }

/* cu_seqlens of a LAYOUT argument: randT:SEED (random lengths, 15 % one-token documents, up to
 * T tokens; reseeds rng_s), lens:L1,L2,... (explicit lengths, e.g. a catalogue workload's) or
 * NxL (N documents of L tokens) */
static inline std::vector<int32_t> harness_layout(const char *layout) {
    std::vector<int32_t> cu(1, 0);
    if (!strncmp(layout, "rand", 4)) {
        int T = 0, seed = 1;
        sscanf(layout + 4, "%d:%d", &T, &seed);
        rng_s ^= (uint64_t)seed * 0x2545F4914F6CDD1Dull;
        while (cu.back() < T) {
            double u = runif();
            int L = u < 0.15 ? 1 : u < 0.4 ? 1 + (int)(runif() * 40) : u < 0.8 ? 1 + (int)(runif() * 300) : 1 + (int)(runif() * 900);
            L = std::min(L, T - cu.back());
            cu.push_back(cu.back() + L);
        }
    } else if (!strncmp(layout, "lens:", 5)) {
        for (const char *c = layout + 5; *c;) {
            cu.push_back(cu.back() + atoi(c));
            while (*c && *c != ',') c++;
            if (*c) c++;
        }
    } else {
        int N = 0, L = 0;
        sscanf(layout, "%dx%d", &N, &L);
        for (int d = 0; d < N; d++) cu.push_back(cu.back() + L);
    }
    return cu;
}

#endif
