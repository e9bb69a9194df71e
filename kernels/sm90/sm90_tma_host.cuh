/*
 * sm90_tma_host.cuh - host side of TMA: the driver's cuTensorMapEncodeTiled, fetched
 * once through the runtime (no -lcuda link needed). Shared by forward.cu and backward.cu.
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

#endif
