/* ref64_gpu.h - the FP64 ground truth (flamia_ref64_forward / _backward, attention_f64.c)
 * computed on the GPU, for accuracy studies at full size (the CPU's takes minutes per
 * workload there: 107 s for 16x4096 on 16 cores). A tool of the experiment drivers and
 * tests, not of the training library: it allocates device memory, synchronizes, and links
 * cuBLAS, so it is a separate library (flamia_ref64_gpu), built when cuBLAS is found.
 *
 * Same semantics and layouts as the CPU functions (host pointers, [T][H][D] rows, packed
 * documents, causal or not, GQA, head_dim 64 or 128); every product is an FP64 cuBLAS
 * GEMM, so sums run in another order than the CPU's: the two agree to FP64 rounding, not
 * bit for bit (tests/gpu/test_gpu_ref64.c). */
#ifndef FLAMIA_REF64_GPU_H
#define FLAMIA_REF64_GPU_H

#include "flamia.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward (o, lse) and, when dout is not NULL, backward (dq, dk, dv) of the FP64 textbook
 * attention on the current CUDA device. FLAMIA_ERR_NOMEM when the device cannot hold the
 * inputs in FP64 plus two [max_seqlen][block] score buffers. */
flamia_status flamia_cuda_ref64(const flamia_shape *s, const float *q, const float *k, const float *v,
                                const float *dout, double *o, double *lse, double *dq, double *dk, double *dv);

#ifdef __cplusplus
}
#endif

#endif
