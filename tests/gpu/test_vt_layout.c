/*
 * test_vt_layout.c - host-only check of V^T's document-aligned layout (sm90_launch.h:
 * flamia_sm90_vt_shift, t_vpad, flamia_sm90_vt_host), the contract quantize.cu writes and
 * forward.cu reads by TMA: every document starts on a 32-token boundary, documents never
 * overlap, 1..63 positions lie between them and after the last, and the region holds the
 * whole row. Needs no GPU (cpu suite), but is built with the CUDA kernels because
 * sm90_launch.h includes the CUDA runtime header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h" /* EXPECT, failures */
#include "sm90_launch.h"
#include "test_inputs.h"

static void check_pack(const char *label, const int32_t *cu, int ndocs, rng_t *r) {
    const int T = cu[ndocs], Hkv = 2, D = 8;
    const struct flamia_sm90_layout L = gpu_layout_of_kind(FLAMIA_SM90_MXFP8, T, ndocs, Hkv, Hkv, D);
    EXPECT(L.t_vpad % FLAMIA_SM90_VT_ALIGN == 0 && L.t_vpad >= L.t_pad, "%s: t_vpad %d (t_pad %d)", label,
           L.t_vpad, L.t_pad);
    EXPECT(L.q_exp - L.vt_codes >= (size_t)Hkv * D * L.t_vpad, "%s: vt_codes region too small", label);
    int prev_end = 0; /* one past the previous document's last position */
    for (int d = 0; d <= ndocs; d++) {
        const int start = cu[d] + flamia_sm90_vt_shift(cu[d], d); /* d = ndocs: the row end */
        const int gap = start - prev_end;
        if (d < ndocs) EXPECT(start % FLAMIA_SM90_VT_ALIGN == 0, "%s: document %d starts at %d", label, d, start);
        if (d > 0) EXPECT(gap >= 1 && gap <= 2 * FLAMIA_SM90_VT_ALIGN - 1, "%s: gap %d before %d", label, gap, d);
        if (d < ndocs) prev_end = start + cu[d + 1] - cu[d];
        else EXPECT(start == L.t_vpad, "%s: row end %d, t_vpad %d", label, start, L.t_vpad);
    }
    /* the host image: each token's code at its position, every other byte zero */
    uint8_t *v = malloc((size_t)T * Hkv * D + 1), *vt = malloc((size_t)Hkv * D * L.t_vpad);
    for (size_t i = 0; i < (size_t)T * Hkv * D; i++) v[i] = (uint8_t)rng_int(r, 1, 255);
    memset(vt, 0xCD, (size_t)Hkv * D * L.t_vpad);
    flamia_sm90_vt_host(v, cu, ndocs, Hkv, D, L.t_vpad, vt);
    size_t placed = 0, nonzero = 0;
    for (int d = 0; d < ndocs; d++)
        for (int t = cu[d]; t < cu[d + 1]; t++)
            for (int h = 0; h < Hkv; h++)
                for (int e = 0; e < D; e++) {
                    const size_t at = ((size_t)h * D + e) * L.t_vpad + t + flamia_sm90_vt_shift(cu[d], d);
                    placed += vt[at] == v[((size_t)t * Hkv + h) * D + e];
                }
    for (size_t i = 0; i < (size_t)Hkv * D * L.t_vpad; i++) nonzero += vt[i] != 0;
    EXPECT(placed == (size_t)T * Hkv * D, "%s: %zu of %zu codes at their positions", label, placed,
           (size_t)T * Hkv * D);
    EXPECT(nonzero == (size_t)T * Hkv * D, "%s: %zu nonzero bytes for %zu codes (gaps not zero)", label, nonzero,
           (size_t)T * Hkv * D);
    free(v);
    free(vt);
}

int main(void) {
    rng_t r = {20261201};
    enum { CAP = 4096 };
    static int lens[CAP];
    static int32_t cu[CAP + 1];
    for (int i = 0; i < 200; i++) {
        const int n = random_lens(&r, rng_int(&r, 1, 6000), lens, CAP);
        cu_from_lens(lens, n, cu);
        check_pack("random", cu, n, &r);
    }
    for (int i = 0; i < 300; i++) lens[i] = 1; /* one-token documents: the largest relative gaps */
    cu_from_lens(lens, 300, cu);
    check_pack("300 x 1", cu, 300, &r);
    for (int i = 0; i < 7; i++) lens[i] = 32 * (i + 1); /* already aligned: the gaps are 32 */
    cu_from_lens(lens, 7, cu);
    check_pack("multiples of 32", cu, 7, &r);
    const int logu64k[] = {644, 266, 4260, 1092, 55,    3420, 612, 333,  161, 197, 46,   18293,
                           66,  125, 976,  20103, 124, 1142, 886, 58,   140, 1162, 9359, 2016};
    memcpy(lens, logu64k, sizeof logu64k);
    cu_from_lens(lens, 24, cu);
    check_pack("logu-64k", cu, 24, &r);
    if (failures) {
        fprintf(stderr, "test_vt_layout: %d failures\n", failures);
        return 1;
    }
    printf("test_vt_layout: ok (V^T layout on 203 packs)\n");
    return 0;
}
