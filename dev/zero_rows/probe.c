/* probe.c - forty-fourth session: which all-zero rows at a document's end give NaN in the
 * mxfp8 backward (found by experiments/packed_memory: padded documents' dK, dV NaN).
 * One document of L = 256 tokens, the last Z rows zero in the named tensors (random
 * elsewhere), H = 2, D = 128; prints NaN counts of lse, O, dQ (real / pad rows), dK, dV,
 * and the pad rows' lse. Build: see dev/zero_rows/run.sh. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia.h"
#include "flamia_formats.h"

#define CK(x) do { cudaError_t e = (x); if (e) { printf("CUDA %s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

static double rnd(unsigned *s) { *s = *s * 1664525u + 1013904223u; return ((*s >> 8) / 16777216.0) * 2 - 1; }

int main(void) {
    const int L = 256, H = 2, D = 128, Z = 56, R = L - Z;
    const char *recs[] = {"mxfp8", "mxfp8-exact"};
    const char *variants[] = {"qkvdo", "do", "q", "kv", "k", "v", "qdo"};
    const size_t n = (size_t)L * H * D;
    int32_t cu_h[2] = {0, L};
    void *cu, *q, *k, *v, *dout, *o, *dq, *dk, *dv, *ws;
    float *lse;
    CK(cudaMalloc(&cu, 8)); CK(cudaMemcpy(cu, cu_h, 8, cudaMemcpyHostToDevice));
    void **bufs[] = {&q, &k, &v, &dout, &o, &dq, &dk, &dv};
    for (int i = 0; i < 8; i++) CK(cudaMalloc(bufs[i], 2 * n));
    CK(cudaMalloc((void **)&lse, 4 * (size_t)L * H));
    flamia_shape s = {L, 1, cu, H, H, D, 1, 0.f, L, NULL};
    uint16_t *hb = malloc(2 * n);
    float *hf = malloc(4 * (size_t)L * H);
    for (int ri = 0; ri < 2; ri++)
        for (int vi = 0; vi < 7; vi++) {
            flamia_recipe r;
            flamia_recipe_preset(recs[ri], &r);
            size_t wsb;
            if (flamia_cuda_workspace_size(&r, &s, &wsb)) { printf("ws: %s\n", flamia_last_error()); return 1; }
            CK(cudaMalloc(&ws, wsb));
            unsigned seed = 1;
            const char *tn[] = {"q", "k", "v", "do"};
            void *tp[] = {q, k, v, dout};
            for (int t = 0; t < 4; t++) {
                const int zero = strstr(variants[vi], tn[t]) && !(t == 0 && !strcmp(variants[vi], "do"));
                for (size_t i = 0; i < n; i++) {
                    const int tok = (int)(i / (H * D));
                    hb[i] = flamia_bf16_bits(zero && tok >= R ? 0.f : (float)rnd(&seed));
                }
                CK(cudaMemcpy(tp[t], hb, 2 * n, cudaMemcpyHostToDevice));
            }
            if (flamia_cuda_train_step(&r, &s, q, k, v, dout, o, lse, dq, dk, dv, ws, wsb, NULL)) {
                printf("train: %s\n", flamia_last_error());
                return 1;
            }
            CK(cudaDeviceSynchronize());
            printf("%-12s zero %-6s:", recs[ri], variants[vi]);
            const char *on[] = {"O", "dQ", "dK", "dV"};
            void *op[] = {o, dq, dk, dv};
            for (int t = 0; t < 4; t++) {
                CK(cudaMemcpy(hb, op[t], 2 * n, cudaMemcpyDeviceToHost));
                long real = 0, pad = 0;
                for (size_t i = 0; i < n; i++) {
                    if (!isfinite(flamia_bf16_value(hb[i]))) { if ((int)(i / (H * D)) < R) real++; else pad++; }
                }
                printf(" %s %ld/%ld", on[t], real, pad);
            }
            CK(cudaMemcpy(hf, lse, 4 * (size_t)L * H, cudaMemcpyDeviceToHost));
            long lr = 0, lp = 0;
            for (int i = 0; i < L * H; i++) if (!isfinite(hf[i])) { if (i / H < R) lr++; else lp++; }
            printf(" | lse nonfinite %ld/%ld, pad lse %.4g %.4g\n", lr, lp, hf[R * H], hf[(L - 1) * H]);
            cudaFree(ws);
        }
    return 0;
}
