/* h_fold_study.c - numerics of hopper-port next step (h), on the CPU: dQ = dS K and
 * dK = dS^T Q with every scale along the contraction folded into an F16 dS operand, against
 * the exact option (one zeroed partial per 32x32 block, scaled in FP32), for mxfp8.
 *
 * One causal document of L tokens, one head, d = 128; Q, K, V, dO ~ N(0, 1), K optionally
 * with 4 outlier channels x20 (the accuracy experiments' inputs). P, dP, D and dS in FP64
 * (the recipe's own P and dS codes differ a little; what matters here is the spread of the
 * 32x32 blocks' exponents along a row). dS in E4M3 per 32x32 block with the block's max
 * (CEIL rule), Q and K in E4M3 per 32-token block. Both forms take the same codes; products
 * and sums in FP64, so the difference is the F16 operand alone:
 *   exact:  dQ_i = sum_b 2^(eDS_b + eK_b) sum_{j in b} c_ij k_j
 *   fold:   dQ_i = 2^F sum_b sum_{j in b} f16(c_ij 2^(G_b - F)) k_j, G_b = eDS_b + eK_b,
 *           F = max G_b over the row's blocks in the 128-key tile (the CTA's chain)
 *   dK likewise over query blocks, with a running R per key block (max over the query
 *           tiles seen so far, only growing): f16(c 2^(eDS + eQ - R)), accumulator x 2^-dR
 *           when R grows.
 * Prints rel. L2 of fold vs exact, and the share of blocks 2^15 or more below F (R).
 * Build: cc -O2 -std=gnu11 -Ikernels/include dev/backward/h_fold_study.c -Lbuild/kernels -lflamia -lm
 * Run:   LD_LIBRARY_PATH=build/kernels ./a.out [L] [outliers 0|4] [seed] [qscale]
 * qscale multiplies Q (peakier attention: larger spread of the dS blocks along a row). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia.h"

enum { D = 128, B = 32, TILE = 128 };

static double rnd_normal(unsigned long long *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    double u = ((*s >> 11) + 0.5) * 0x1.0p-53;
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    double v = (*s >> 11) * 0x1.0p-53;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* E4M3 codes of x[n] (rows of D) in 32-token blocks: exponent per block, values dec(code) */
static void quant_rows(const double *x, int L, double *codes, int *eblk) {
    for (int b = 0; b < (L + B - 1) / B; b++) {
        float amax = 0;
        for (int t = b * B; t < L && t < (b + 1) * B; t++)
            for (int d = 0; d < D; d++) amax = fmaxf(amax, (float)fabs(x[(size_t)t * D + d]));
        const int e = flamia_block_exponent(amax, FLAMIA_EXP_CEIL);
        eblk[b] = e;
        for (int t = b * B; t < L && t < (b + 1) * B; t++)
            for (int d = 0; d < D; d++)
                codes[(size_t)t * D + d] = flamia_e4m3_decode(flamia_e4m3_encode((float)ldexp(x[(size_t)t * D + d], -e)));
    }
}

static double f16(double x) { return (double)(_Float16)x; }

int main(int argc, char **argv) {
    const int L = argc > 1 ? atoi(argv[1]) : 2048, outl = argc > 2 ? atoi(argv[2]) : 0;
    unsigned long long seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    const double qscale = argc > 4 ? atof(argv[4]) : 1.0;
    const int nb = (L + B - 1) / B;
    double *q = malloc(sizeof(double) * L * D), *k = malloc(sizeof(double) * L * D), *v = malloc(sizeof(double) * L * D),
           *g = malloc(sizeof(double) * L * D);
    for (size_t i = 0; i < (size_t)L * D; i++)
        q[i] = qscale * rnd_normal(&seed), k[i] = rnd_normal(&seed), v[i] = rnd_normal(&seed), g[i] = rnd_normal(&seed);
    for (int c = 0; c < outl; c++)
        for (int t = 0; t < L; t++) k[(size_t)t * D + 17 * c + 3] *= 20;
    /* P, dS in FP64 */
    double *ds = calloc((size_t)L * L, sizeof(double)), *p = malloc(sizeof(double) * L);
    const double scale = 1 / sqrt((double)D);
    for (int i = 0; i < L; i++) {
        double m = -INFINITY, l = 0, Di = 0;
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int d = 0; d < D; d++) s += q[(size_t)i * D + d] * k[(size_t)j * D + d];
            p[j] = s * scale;
            m = fmax(m, p[j]);
        }
        for (int j = 0; j <= i; j++) l += (p[j] = exp(p[j] - m));
        for (int j = 0; j <= i; j++) {
            p[j] /= l;
            double dp = 0;
            for (int d = 0; d < D; d++) dp += g[(size_t)i * D + d] * v[(size_t)j * D + d];
            ds[(size_t)i * L + j] = dp; /* dP for now */
            Di += p[j] * dp;
        }
        for (int j = 0; j <= i; j++) ds[(size_t)i * L + j] = p[j] * (ds[(size_t)i * L + j] - Di) * scale;
    }
    /* dS codes per 32x32 block */
    int *eds = malloc(sizeof(int) * nb * nb);
    double *dsc = calloc((size_t)L * L, sizeof(double));
    for (int bi = 0; bi < nb; bi++)
        for (int bj = 0; bj <= bi; bj++) {
            float amax = 0;
            for (int i = bi * B; i < L && i < (bi + 1) * B; i++)
                for (int j = bj * B; j <= i && j < (bj + 1) * B; j++) amax = fmaxf(amax, (float)fabs(ds[(size_t)i * L + j]));
            const int e = flamia_block_exponent(amax, FLAMIA_EXP_CEIL);
            eds[bi * nb + bj] = e;
            for (int i = bi * B; i < L && i < (bi + 1) * B; i++)
                for (int j = bj * B; j <= i && j < (bj + 1) * B; j++)
                    dsc[(size_t)i * L + j] = flamia_e4m3_decode(flamia_e4m3_encode((float)ldexp(ds[(size_t)i * L + j], -e)));
        }
    double *qc = malloc(sizeof(double) * L * D), *kc = malloc(sizeof(double) * L * D);
    int *eq = malloc(sizeof(int) * nb), *ek = malloc(sizeof(int) * nb);
    quant_rows(q, L, qc, eq);
    quant_rows(k, L, kc, ek);

    /* dQ: exact vs fold (F per row and 128-key tile) */
    double num = 0, den = 0;
    long blocks = 0, deep = 0;
    double *ex = calloc(D, sizeof(double)), *fo = calloc(D, sizeof(double));
    for (int i = 0; i < L; i++) {
        const int bi = i / B;
        memset(ex, 0, D * sizeof(double));
        memset(fo, 0, D * sizeof(double));
        for (int t0 = 0; t0 <= i; t0 += TILE) {
            int F = -100000;
            for (int bj = t0 / B; bj < (t0 + TILE) / B && bj * B <= i; bj++) F = F > eds[bi * nb + bj] + ek[bj] ? F : eds[bi * nb + bj] + ek[bj];
            for (int bj = t0 / B; bj < (t0 + TILE) / B && bj * B <= i; bj++) {
                const int G = eds[bi * nb + bj] + ek[bj];
                blocks++;
                deep += G - F <= -15;
                for (int j = bj * B; j < (bj + 1) * B && j <= i; j++) {
                    const double c = dsc[(size_t)i * L + j];
                    if (c == 0) continue;
                    const double a = f16(ldexp(c, G - F));
                    for (int d = 0; d < D; d++) {
                        ex[d] += ldexp(c * kc[(size_t)j * D + d], G);
                        fo[d] += ldexp(a * kc[(size_t)j * D + d], F);
                    }
                }
            }
        }
        for (int d = 0; d < D; d++) num += (fo[d] - ex[d]) * (fo[d] - ex[d]), den += ex[d] * ex[d];
    }
    printf("L %d, K outliers %d, Q x%g: dQ fold vs exact rel. L2 %.2e; (row, block) pairs 2^15+ below the tile's F: %.3f %%\n", L,
           outl, qscale, sqrt(num / den), 100.0 * deep / blocks);

    /* dK: exact vs fold with a running R per key block, query tiles in order */
    num = den = 0;
    blocks = deep = 0;
    double *dkx = calloc((size_t)L * D, sizeof(double)), *dkf = calloc((size_t)L * D, sizeof(double));
    int *R = malloc(sizeof(int) * nb);
    for (int b = 0; b < nb; b++) R[b] = -100000;
    for (int t0 = 0; t0 < L; t0 += TILE)         /* query tiles, as the kernel visits them */
        for (int bj = 0; bj < nb && bj * B < t0 + TILE; bj++) { /* key blocks this tile reaches */
            int Rn = R[bj];
            for (int bi = t0 / B; bi < (t0 + TILE) / B && bi < nb; bi++)
                if (bi >= bj) Rn = Rn > eds[bi * nb + bj] + eq[bi] ? Rn : eds[bi * nb + bj] + eq[bi];
            if (Rn > R[bj] && R[bj] > -100000) /* the accumulator is rescaled: exact in FP64 here */
                for (int j = bj * B; j < (bj + 1) * B && j < L; j++)
                    for (int d = 0; d < D; d++) dkf[(size_t)j * D + d] = ldexp(dkf[(size_t)j * D + d], R[bj] - Rn);
            R[bj] = Rn;
            for (int bi = t0 / B; bi < (t0 + TILE) / B && bi < nb; bi++) {
                if (bi < bj) continue;
                const int G = eds[bi * nb + bj] + eq[bi];
                blocks++;
                deep += G - R[bj] <= -15;
                for (int i = bi * B; i < (bi + 1) * B && i < L; i++)
                    for (int j = bj * B; j < (bj + 1) * B && j <= i; j++) {
                        const double c = dsc[(size_t)i * L + j];
                        if (c == 0) continue;
                        const double a = f16(ldexp(c, G - R[bj]));
                        for (int d = 0; d < D; d++) {
                            dkx[(size_t)j * D + d] += ldexp(c * qc[(size_t)i * D + d], G);
                            dkf[(size_t)j * D + d] += a * qc[(size_t)i * D + d];
                        }
                    }
            }
        }
    for (int j = 0; j < L; j++)
        for (int d = 0; d < D; d++) {
            const double f = ldexp(dkf[(size_t)j * D + d], R[j / B]), x = dkx[(size_t)j * D + d];
            num += (f - x) * (f - x), den += x * x;
        }
    printf("L %d, K outliers %d, Q x%g: dK fold vs exact rel. L2 %.2e; (block, block) pairs 2^15+ below the running R: %.3f %%\n",
           L, outl, qscale, sqrt(num / den), 100.0 * deep / blocks);
    return 0;
}
