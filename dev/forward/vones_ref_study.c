/*
 * vones_ref_study.c - CPU only: with V = 1 everywhere the exact attention output is 1; how
 * far the CPU reference (numerics.md 3: O normalized by the unquantized row sums) is from it.
 * The thirty-fourth session's comparison (perf-notes "Forward kernel"): the GPU forward at
 * 3e42434 with V = 1 (dev/forward/check_forward VPAT=ones) and dev/forward/v35_l_codes.patch
 * (O normalized by the P V product's own l column: exactly 1).
 * Inputs as check_forward's: Q, K ~ N(0, 1) in BF16, three K channels x8, one causal document.
 * Build (repo root, after sh dev/forward/build.sh made dev/forward/bin/obj/*.o):
 *   gcc -O2 -std=c11 -fopenmp -Ikernels/include -Ikernels/formats dev/forward/vones_ref_study.c \
 *       dev/forward/bin/obj/*.o -lm -o /tmp/vones && /tmp/vones 4096 mxfp8
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "flamia.h"
#include "flamia_formats.h"
static unsigned long long s = 88172645463325252ull;
static double un(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (s >> 11) * 0x1p-53; }
static double nrm(void) { return sqrt(-2 * log(un() + 1e-300)) * cos(6.283185307179586 * un()); }
int main(int argc, char **argv) {
    const int L = atoi(argv[1]), H = 2, D = 128;
    const char *preset = argv[2];
    int32_t cu[2] = {0, L};
    size_t n = (size_t)L * H * D;
    float *q = malloc(n * 4), *k = malloc(n * 4), *v = malloc(n * 4), *o = malloc(n * 4), *lse = malloc((size_t)L * H * 4);
    for (size_t i = 0; i < n; i++) q[i] = flamia_round_bf16(nrm()), k[i] = flamia_round_bf16(nrm()), v[i] = 1.f;
    for (int c = 0; c < 3; c++) { int ch = (int)(un() * D); for (size_t t = 0; t < (size_t)L * H; t++) k[t * D + ch] *= 8.f; }
    flamia_recipe r; flamia_recipe_preset(preset, &r);
    flamia_shape sh = {L, 1, cu, H, H, D, 1, 0.f, L, NULL};
    if (flamia_ref_forward(&r, &sh, q, k, v, o, lse)) { printf("fail %s\n", flamia_last_error()); return 1; }
    double mx = 0, ss = 0;
    for (size_t i = 0; i < n; i++) { double d = fabs(o[i] - 1.0); mx = d > mx ? d : mx; ss += d * d; }
    printf("%s L=%d V=1: reference O vs 1: rel L2 %.2e, max %.2e\n", preset, L, sqrt(ss / n), mx);
    return 0;
}
