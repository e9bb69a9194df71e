/* minimal.c - using libflamia from outside the project: only <flamia.h>.
 * Build: cc -std=c11 -I kernels/include examples/minimal.c -L build/kernels -lflamia -lm
 * or, against the installed library (`meson install -C build`):
 *        cc -std=c11 examples/minimal.c $(pkg-config --cflags --libs flamia) -lm
 * or statically (libflamia.a, and for a CUDA build the CUDA runtime and the C++ runtime):
 *        cc -std=c11 examples/minimal.c $(pkg-config --cflags flamia) -Wl,-Bstatic -lflamia \
 *           -Wl,-Bdynamic $(pkg-config --static --libs flamia | sed 's/-lflamia//') -lm */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <flamia.h>

int main(void) {
    /* which library this is; the CUDA entry points need an sm_90 GPU (docs/cuda-api.md) */
    printf("%s; sm_90 GPU for the CUDA calls: %s\n", flamia_version_string(), flamia_cuda_available() ? "yes" : "no");

    /* formats */
    uint8_t c = flamia_e4m3_encode(3.3f);
    printf("e4m3(3.3) = 0x%02X -> %g; e2m1(2.6) -> %g; block exponent(1000) = %d\n", c,
           (double)flamia_e4m3_decode(c), (double)flamia_e2m1_decode(flamia_e2m1_encode(2.6f)),
           flamia_block_exponent(1000.0f, FLAMIA_EXP_CEIL));

    /* two packed documents of 5 and 11 tokens, 2 query heads sharing 1 kv head, d = 64 */
    int32_t cu[] = {0, 5, 16};
    flamia_shape s = {16, 2, cu, 2, 1, 64, 1, 0.0f, 0, NULL};
    size_t nq = 16 * 2 * 64, nkv = 16 * 1 * 64;
    float *q = malloc(nq * 4), *k = malloc(nkv * 4), *v = malloc(nkv * 4), *o = malloc(nq * 4);
    float *lse = malloc(16 * 2 * 4), *dout = malloc(nq * 4), *dq = malloc(nq * 4);
    float *dk = malloc(nkv * 4), *dv = malloc(nkv * 4);
    if (!q || !k || !v || !o || !lse || !dout || !dq || !dk || !dv) return 1;
    for (size_t i = 0; i < nq; i++) q[i] = sinf(0.37f * (float)i), dout[i] = cosf(0.11f * (float)i);
    for (size_t i = 0; i < nkv; i++) k[i] = cosf(0.53f * (float)i), v[i] = sinf(0.07f * (float)i);

    flamia_recipe r;
    if (flamia_recipe_preset("mxfp8", &r) != FLAMIA_OK ||
        flamia_ref_forward(&r, &s, q, k, v, o, lse) != FLAMIA_OK ||
        flamia_ref_backward(&r, &s, q, k, v, o, lse, dout, dq, dk, dv) != FLAMIA_OK) {
        fprintf(stderr, "flamia: %s\n", flamia_last_error());
        return 1;
    }
    printf("mxfp8: O[0][0][0] = %g, lse[15][1] = %g, dQ[15][1][3] = %g\n", (double)o[0],
           (double)lse[31], (double)dq[15 * 128 + 64 + 3]);
    if (flamia_recipe_preset("fp4x", &r) == FLAMIA_OK) return 1;
    printf("unknown preset -> %s: %s\n", flamia_status_string(FLAMIA_ERR_INVALID), flamia_last_error());
    free(q); free(k); free(v); free(o); free(lse); free(dout); free(dq); free(dk); free(dv);
    return 0;
}
