/* tile_dots.c - the dot products of a tile of query rows with a run of key rows, for the
 * CPU reference (FP32 scores) and the FP64 ground truth alike.
 *
 * Each dot product is summed over d ascending from 0 in FP64, as the per-row loop
 * acc += (double)a[d] * b[d] sums; the tile's rows run side by side (the rows transposed,
 * the innermost loop over rows, which the compiler vectorizes), so the results are the same
 * bits several times faster (a row at a time, each sum is one chain of dependent adds). */
#include "ref_internal.h"

enum { kMaxHeadDim = 128 }; /* head_dim is 64 or 128 (validate.c) */

void flamia_ref_tile_dots(const float *a, int Ha, int ha, const float *b, int Hb, int hb, int D, int d0, int i0,
                          int n, int jmax, double scale, float *outf, double *outd, size_t ld) {
    double aT[kMaxHeadDim * FLAMIA_REF_DOT_ROWS], acc[FLAMIA_REF_DOT_ROWS];
    for (int r = 0; r < n; r++)
        for (int d = 0; d < D; d++) aT[d * FLAMIA_REF_DOT_ROWS + r] = a[((size_t)(d0 + i0 + r) * Ha + ha) * D + d];
    for (int j = 0; j < jmax; j++) {
        const float *bj = b + ((size_t)(d0 + j) * Hb + hb) * D;
        for (int r = 0; r < n; r++) acc[r] = 0.0;
        for (int d = 0; d < D; d++) {
            const double bd = bj[d];
            for (int r = 0; r < n; r++) acc[r] += aT[d * FLAMIA_REF_DOT_ROWS + r] * bd;
        }
        if (outf)
            for (int r = 0; r < n; r++) outf[(size_t)r * ld + j] = (float)(scale * acc[r]);
        else
            for (int r = 0; r < n; r++) outd[(size_t)r * ld + j] = scale * acc[r];
    }
}
