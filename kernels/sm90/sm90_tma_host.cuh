/*
 * sm90_tma_host.cuh - host side of TMA: the driver's cuTensorMapEncodeTiled, fetched
 * once through the runtime (no -lcuda link needed). Shared by forward.cu and backward_fp8.cu.
 */
#ifndef FLAMIA_SM90_TMA_HOST_CUH
#define FLAMIA_SM90_TMA_HOST_CUH

#include <cuda.h>
#include <cuda_runtime.h>

#include "sm90_perm_rows.h"

typedef CUresult (*flamia_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                          const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                          const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                          CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* cuTensorMapEncodeTiled, or nullptr when the driver does not offer it */
static inline flamia_encode_tiled_fn flamia_encode_tiled() {
    static flamia_encode_tiled_fn fn = nullptr;
    if (!fn) {
        void *ptr = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (flamia_encode_tiled_fn)ptr;
    }
    return fn;
}

/* The TMA map of a transposed-codes region (vt_codes, qt_codes, kt_codes: uint8
 * [heads][head_dim][t_vpad], documents on 32-token boundaries, sm90_launch.h): boxes of
 * `box_tokens` positions x head_dim, 128-byte swizzle. The forward's V^T tiles and the
 * backward's Q^T / K^T tiles are the same shape. False when the driver cannot encode it. */
static inline bool flamia_tma_transposed_codes(CUtensorMap *map, void *base, int t_vpad, int head_dim, int heads,
                                               int box_tokens) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return false;
    const cuuint64_t dims[3] = {(cuuint64_t)t_vpad, (cuuint64_t)head_dim, (cuuint64_t)heads};
    const cuuint64_t strides[2] = {(cuuint64_t)t_vpad, (cuuint64_t)t_vpad * head_dim};
    const cuuint32_t box[3] = {(cuuint32_t)box_tokens, (cuuint32_t)head_dim, 1};
    const cuuint32_t estr[3] = {1, 1, 1};
    return enc(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* Rows of `row_elems` elements of `esize` bytes (E4M3 codes: 1; BF16: 2) forming all heads'
 * 128-element rows of a token, [T][row_elems], as 2-D: a box of 128 B x box_rows rows at
 * (128 h [+ 64 for a BF16 row's second panel], first token) is a tile in natural order,
 * 128-byte swizzled (sw128); rows past T are zero-filled on loads and skipped on stores. The
 * forward's Q tiles (codes, 128 rows) and its epilogue's O stores (BF16, 64 rows) use it.
 * False when the driver cannot encode it or base is not 16-byte aligned (TMA's requirement; a
 * caller's O may not be). */
static inline bool flamia_tma_rows(CUtensorMap *map, const void *base, int T, int row_elems, int esize = 1,
                                   int box_rows = 128) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc || ((uintptr_t)base & 15)) return false;
    const cuuint64_t dims[2] = {(cuuint64_t)row_elems, (cuuint64_t)T};
    const cuuint64_t strides[1] = {(cuuint64_t)row_elems * esize};
    const cuuint32_t box[2] = {(cuuint32_t)(128 / esize), (cuuint32_t)box_rows};
    const cuuint32_t estr[2] = {1, 1};
    return enc(map, esize == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2,
               const_cast<void *>(base), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* Rows of `row_elems` elements (all heads' 128-element rows of a token) of `esize` bytes
 * (E4M3 codes: 1, F16: 2), [T][row_elems], seen as 5-D (elements, e, t, j0, j1b) with token
 * strides (1, 4, 2, 16) rows: a box of 128 B x 2 x 4 x 2 x 8 read at (128 h [+ 64 for an
 * F16 row's second panel], first token) lands a 128-row tile in flamia_fp8_perm_row's order
 * (sm90_perm_rows.h has the geometry; tests/gpu/test_perm_rows.c checks it), 128-byte
 * swizzled. The driver accepts the non-monotonic strides; only the e dimension is
 * bound-checked (size T), so a kernel takes this path only for tiles inside T. The forward's
 * K tiles and the backward's Q / dO tiles use it. False when the driver cannot encode it. */
static inline bool flamia_tma_perm_rows(CUtensorMap *map, const void *base, int T, int row_elems, int esize) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return false;
    const cuuint32_t rows_box[4] = FLAMIA_PERM_ROWS_BOX;
    const cuuint64_t token_stride[4] = FLAMIA_PERM_ROWS_TOKEN_STRIDE;
    const cuuint64_t row = (cuuint64_t)row_elems * esize;
    /* only the e dimension has the tensor's extent (T): the others are the box's own */
    const cuuint64_t dims[5] = {(cuuint64_t)row_elems, (cuuint64_t)T, rows_box[1], rows_box[2], rows_box[3]};
    const cuuint64_t strides[4] = {token_stride[0] * row, token_stride[1] * row, token_stride[2] * row,
                                   token_stride[3] * row};
    const cuuint32_t box[5] = {(cuuint32_t)(128 / esize), rows_box[0], rows_box[1], rows_box[2], rows_box[3]};
    const cuuint32_t estr[5] = {1, 1, 1, 1, 1};
    return enc(map, esize == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 5,
               const_cast<void *>(base), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

#endif
