/*
 * sm90_pdl.cuh - programmatic dependent launch (PDL) for the Hopper kernels.
 *
 * A call enqueues several kernels back to back (the training call: quantize, forward, its
 * split pass, bwd_pre_do, the backward's main kernel, bwd_dq_out). Launched plainly, each
 * one starts only after the one before it has drained, flushed and signalled the stream.
 * Launched with PDL, a kernel's CTAs may be dispatched onto SMs as the previous kernel's
 * last CTAs leave; they then stop in `griddepcontrol.wait` until that kernel has completed
 * and its memory is visible. So what is saved is the launch latency and the tail's idle
 * SMs, never an ordering: every kernel launched this way calls pdl_enter() before its first
 * global-memory access (read or write), and the chain stays ordered kernel by kernel
 * (each kernel's wait returns after its predecessor completed, and that predecessor had
 * itself waited for its own). The first kernel of a call waits for whatever the caller
 * enqueued before it in the same way.
 *
 * FLAMIA_SM90_PDL=0 in the environment (read once) launches every kernel plainly;
 * `griddepcontrol.wait` is then a no-op.
 */
#ifndef FLAMIA_SM90_PDL_CUH
#define FLAMIA_SM90_PDL_CUH

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

namespace flamia_sm90 {

/* Every thread: wait for the previous kernel in the stream (a no-op without PDL), then let
 * the next one be scheduled once every CTA of this grid has got here. Triggering after
 * the wait keeps the chain transitive. */
__device__ __forceinline__ void pdl_enter() {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

/* 1 unless FLAMIA_SM90_PDL is "0" or "off" */
inline bool pdl_enabled() {
    static const int on = [] {
        const char *e = getenv("FLAMIA_SM90_PDL");
        return !(e && (!strcmp(e, "0") || !strcmp(e, "off")));
    }();
    return on != 0;
}

/* cudaLaunchKernelEx with the programmatic-serialization attribute (when enabled) */
inline cudaLaunchConfig_t pdl_config(dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                     cudaLaunchAttribute *attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl_enabled() ? 1 : 0;
    return cfg;
}
template <typename... KernelArgs, typename... Args>
inline cudaError_t pdl_launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t smem,
                              cudaStream_t stream, Args &&...args) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = pdl_config(grid, block, smem, stream, &attr);
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args &&>(args)...);
}
/* the same for a kernel chosen at run time as `const void *` with its argument array */
inline cudaError_t pdl_launch_c(const void *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                void **args) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = pdl_config(grid, block, smem, stream, &attr);
    return cudaLaunchKernelExC(&cfg, kernel, args);
}

} // namespace flamia_sm90

#endif
