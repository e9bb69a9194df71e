/* l_codes_study.c - numerics of the forward's candidate (b) (docs/perf-notes.md, forward
 * kernel, twenty-first session: "the row sums from the P V product"), on the CPU.
 *
 * Today the row sum l adds the unquantized exponentials (numerics.md 3): O = sum_j P_ij V_j / l_i
 * with P_ij the E4M3 code of exp2(t_ij - m_i + 8) and l_i = sum_j exp2(t_ij - m_i + 8). The
 * kernel spends one FFMA a score on l (a chain of 32 a row a tile; removing it measured -4.6 %
 * of the forward at 16x4096, twenty-first session). (b) would take l from the tensor cores
 * instead, as one more column of the P V product against a column of ones: l_i = sum_j P_ij,
 * the sum of the CODES. This study asks what that does to O's accuracy.
 *
 * One causal document of L tokens, one head, d = 128; Q, K, V ~ N(0, 1), K optionally with 4
 * outlier channels x20 (the accuracy experiments' inputs), Q optionally scaled (peakier rows).
 * Q, K, V in E4M3 per 32-token block (CEIL rule, as mxfp8); S from the codes in FP64; the row
 * frame m_i = ceil(max_j t_ij) (the final frame: the per-tile frames only move the subnormal
 * class); P_ij = e4m3(exp2(t_ij - m_i + 8)). Products and sums in FP64, so the two forms differ
 * by the normalizer alone:
 *   today: O_i = sum_j P_ij v_j / sum_j exp2(t_ij - m_i + 8)
 *   (b):   O_i = sum_j P_ij v_j / sum_j P_ij
 * Prints rel. L2 and cosine of each against the FP64 attention on the unquantized inputs, and
 * the rel. L2 between the two.
 * Build: cc -O2 -std=gnu11 -Ikernels/include dev/forward/l_codes_study.c -Lbuild/kernels -lflamia -lm
 * Run:   LD_LIBRARY_PATH=build/kernels ./a.out [L] [outliers 0|4] [seed] [qscale] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "flamia.h"

enum { D = 128, B = 32 };

static double rnd_normal(unsigned long long *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    double u = ((*s >> 11) + 0.5) * 0x1.0p-53;
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    double v = (*s >> 11) * 0x1.0p-53;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* x[L][D] -> dequantized E4M3 values, one exponent per 32-token block (mxfp8's Q, K, V) */
static void quant_rows(const double *x, int L, double *xq) {
    for (int b = 0; b < (L + B - 1) / B; b++) {
        float amax = 0;
        for (int t = b * B; t < L && t < (b + 1) * B; t++)
            for (int d = 0; d < D; d++) amax = fmaxf(amax, (float)fabs(x[(size_t)t * D + d]));
        const int e = flamia_block_exponent(amax, FLAMIA_EXP_CEIL);
        for (int t = b * B; t < L && t < (b + 1) * B; t++)
            for (int d = 0; d < D; d++)
                xq[(size_t)t * D + d] =
                    ldexp(flamia_e4m3_decode(flamia_e4m3_encode((float)ldexp(x[(size_t)t * D + d], -e))), e);
    }
}

/* accumulates rel. L2 and cosine terms of o against the reference r (one row) */
typedef struct { double dd, rr, oo, or_; } Err;
static void err_add(Err *e, const double *o, const double *r) {
    for (int d = 0; d < D; d++) {
        e->dd += (o[d] - r[d]) * (o[d] - r[d]);
        e->rr += r[d] * r[d];
        e->oo += o[d] * o[d];
        e->or_ += o[d] * r[d];
    }
}

int main(int argc, char **argv) {
    const int L = argc > 1 ? atoi(argv[1]) : 2048, outl = argc > 2 ? atoi(argv[2]) : 0;
    const unsigned long long seed0 = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    unsigned long long seed = seed0;
    const double qscale = argc > 4 ? atof(argv[4]) : 1.0;
    double *q = malloc(sizeof(double) * L * D), *k = malloc(sizeof(double) * L * D), *v = malloc(sizeof(double) * L * D);
    double *qq = malloc(sizeof(double) * L * D), *kq = malloc(sizeof(double) * L * D), *vq = malloc(sizeof(double) * L * D);
    double *s = malloc(sizeof(double) * L), *t = malloc(sizeof(double) * L);
    if (!q || !k || !v || !qq || !kq || !vq || !s || !t) return 1;
    for (size_t i = 0; i < (size_t)L * D; i++) q[i] = qscale * rnd_normal(&seed), k[i] = rnd_normal(&seed), v[i] = rnd_normal(&seed);
    for (int c = 0; c < outl; c++)
        for (int j = 0; j < L; j++) k[(size_t)j * D + 17 * c + 3] *= 20;
    quant_rows(q, L, qq);
    quant_rows(k, L, kq);
    quant_rows(v, L, vq);
    const double scale = 1 / sqrt((double)D), log2e = 1.4426950408889634;
    Err today = {0}, codes = {0}, between = {0};
    double lrel_max = 0;
    for (int i = 0; i < L; i++) {
        double ref[D] = {0}, ot[D] = {0}, ob[D] = {0}, m64 = -INFINITY, l64 = 0, mt = -INFINITY;
        for (int j = 0; j <= i; j++) {
            double a = 0, b = 0;
            for (int d = 0; d < D; d++) a += q[(size_t)i * D + d] * k[(size_t)j * D + d], b += qq[(size_t)i * D + d] * kq[(size_t)j * D + d];
            s[j] = a * scale;
            t[j] = b * scale * log2e;
            m64 = fmax(m64, s[j]);
            mt = fmax(mt, t[j]);
        }
        const double m = ceil(mt); /* the integer frame */
        double l_exp = 0, l_code = 0;
        for (int j = 0; j <= i; j++) {
            const double w = exp(s[j] - m64), e = exp2(t[j] - m + 8);
            const double pc = flamia_e4m3_decode(flamia_e4m3_encode((float)e));
            l64 += w;
            l_exp += e;
            l_code += pc;
            for (int d = 0; d < D; d++) {
                ref[d] += w * v[(size_t)j * D + d];
                ot[d] += pc * vq[(size_t)j * D + d];
            }
        }
        for (int d = 0; d < D; d++) {
            ref[d] /= l64;
            ob[d] = ot[d] / l_code;
            ot[d] /= l_exp;
        }
        lrel_max = fmax(lrel_max, fabs(l_code / l_exp - 1));
        err_add(&today, ot, ref);
        err_add(&codes, ob, ref);
        err_add(&between, ob, ot);
    }
    printf("L=%d outliers=%d seed=%llu qscale=%g | vs FP64: today relL2 %.4e cos %.6f | (b) relL2 %.4e cos %.6f | "
           "(b) vs today relL2 %.3e | max |l_codes / l - 1| %.3e\n",
           L, outl, seed0, qscale, sqrt(today.dd / today.rr), today.or_ / sqrt(today.oo * today.rr), sqrt(codes.dd / codes.rr),
           codes.or_ / sqrt(codes.oo * codes.rr), sqrt(between.dd / between.rr), lrel_max);
    return 0;
}
