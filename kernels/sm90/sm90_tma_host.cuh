/*
 * sm90_tma_host.cuh - host side of TMA: the driver's cuTensorMapEncodeTiled, fetched
 * once through the runtime (no -lcuda link needed). Shared by forward.cu and backward_fp8.cu.
 */
#ifndef FLAMIA_SM90_TMA_HOST_CUH
#define FLAMIA_SM90_TMA_HOST_CUH

#include <cuda.h>
#include <cuda_runtime.h>

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

#endif
