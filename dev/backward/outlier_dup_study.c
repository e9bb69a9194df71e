/* dev/backward/outlier_dup_study.c - CPU study (2026-11-29): the 512-token outlier-K case of
 * tests/gpu/test_gpu_backward.c, reference error vs FP64 with 3 distinct x8 K channels vs one
 * channel drawn twice (x64), the draw behind the gpu_backward failures of the third session.
 * Build: gcc -O2 -std=c11 -Ikernels/include -Ikernels/formats dev/backward/outlier_dup_study.c
 *        build/kernels/libflamia.a -lm -lpthread -fopenmp; run: a.out DUP SEED */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "flamia.h"
#include "flamia_formats.h"
static uint64_t s = 88172645463325252ull;
static double un(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (s >> 11) * (1.0 / 9007199254740992.0); }
static double nrm(void) { return sqrt(-2 * log(un() + 1e-300)) * cos(6.283185307179586 * un()); }
static double rel(const float *a, const double *b, size_t n) { double e = 0, t = 0; for (size_t i = 0; i < n; i++) { e += (a[i] - b[i]) * (a[i] - b[i]); t += b[i] * b[i]; } return sqrt(e / t); }
int main(int argc, char **argv) {
  const int T = 512, H = 4, D = 128, dup = atoi(argv[1]), seed = atoi(argv[2]);
  s += seed * 7919;
  const size_t n = (size_t)T * H * D;
  float *q = malloc(n * 4), *k = malloc(n * 4), *v = malloc(n * 4), *g = malloc(n * 4), *o = malloc(n * 4), *lse = malloc(T * H * 4);
  float *dq = malloc(n * 4), *dk = malloc(n * 4), *dv = malloc(n * 4);
  double *q6 = malloc(n * 8), *k6 = malloc(n * 8), *v6 = malloc(n * 8);
  float *a[4] = {q, k, v, g}; double sc[4] = {1, 1, 1, 1e-2};
  for (int t = 0; t < 4; t++) for (size_t i = 0; i < n; i++) a[t][i] = flamia_bf16_value(flamia_bf16_bits((float)(nrm() * sc[t])));
  int ch[3] = {(int)(un() * 128), (int)(un() * 128), (int)(un() * 128)};
  if (dup) ch[1] = ch[0]; else while (ch[1] == ch[0]) ch[1] = (int)(un() * 128);
  while (ch[2] == ch[0] || ch[2] == ch[1]) ch[2] = (int)(un() * 128);
  for (int o2 = 0; o2 < 3; o2++) for (size_t r = 0; r < (size_t)T * H; r++) k[r * D + ch[o2]] = flamia_bf16_value(flamia_bf16_bits(k[r * D + ch[o2]] * 8.0f));
  int32_t cu[2] = {0, T};
  flamia_shape sh = {T, 1, cu, H, H, D, 1, 0.0f, T, NULL};
  flamia_recipe rec; flamia_recipe_preset("mxfp8", &rec);
  flamia_ref_forward(&rec, &sh, q, k, v, o, lse);
  flamia_ref_backward(&rec, &sh, q, k, v, o, lse, g, dq, dk, dv);
  flamia_ref64_backward(&sh, q, k, v, g, q6, k6, v6);
  printf("dup=%d seed=%d ref vs f64: dQ %.3e dK %.3e dV %.3e\n", dup, seed, rel(dq, q6, n), rel(dk, k6, n), rel(dv, v6, n));
  return 0;
}
