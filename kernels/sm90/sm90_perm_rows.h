/*
 * sm90_perm_rows.h - the permuted row order of the FP8 operand tiles the sm90 kernels stage
 * (the forward's K tiles, the backward's Q / dO tiles) and the geometry of the one TMA box
 * that loads a 128-row tile in that order (sm90_tma_host.cuh, flamia_tma_perm_rows). Plain
 * C11 as well as CUDA, so that the host-only test tests/gpu/test_perm_rows.c checks the box
 * against the order without a GPU.
 */
#ifndef FLAMIA_SM90_PERM_ROWS_H
#define FLAMIA_SM90_PERM_ROWS_H

#ifdef __CUDACC__
#define FLAMIA_PERM_HD __host__ __device__ __forceinline__
#else
#define FLAMIA_PERM_HD inline
#endif

/* The token held by row c of a tile staged with permuted rows:
 * pi(32b + 8j + 2t + e) = 32b + 16(j >> 1) + 4t + 2(j & 1) + e, so that the columns of a
 * wgmma accumulator (8j + 2t + e for lane quad t) are already the keys of the k = 32 FP8
 * A fragment built from it (forward.cu's header). It keeps every 32-row block in place. */
static FLAMIA_PERM_HD int flamia_fp8_perm_row(int c) {
    const int e = c & 1, t = (c >> 1) & 3, j = (c >> 3) & 3, b = c >> 5;
    return (b << 5) | ((j >> 1) << 4) | (t << 2) | ((j & 1) << 1) | e;
}

/* The box: the tile's rows as four tensor dimensions (e, t, j0, j1b) after the elements of a
 * row. A box walks them innermost first, so smem row c = e + 2 t + 8 j0 + 16 j1b; with these
 * token strides (rows) it reads token e + 4 t + 2 j0 + 16 j1b = flamia_fp8_perm_row(c).
 * Initializers, for both languages. */
#define FLAMIA_PERM_ROWS_BOX {2, 4, 2, 8}
#define FLAMIA_PERM_ROWS_TOKEN_STRIDE {1, 4, 2, 16}

#endif
