/* packed_memory.h - the two sides of experiments/packed_memory: the driver (main.c) and its
 * GPU run (gpu_run.c, built with CUDA only; a stub that refuses otherwise). */
#ifndef FLAMIA_PACKED_MEMORY_H
#define FLAMIA_PACKED_MEMORY_H

#include "xp.h"

/* What one training call on one layout held and took. */
typedef struct {
    double tensor_bytes;    /* the caller's tensors: Q, K, V, dO, O, dQ, dK, dV, lse, cu_seqlens */
    double workspace_bytes; /* flamia_cuda_workspace_size (NaN on the CPU) */
    double device_bytes;    /* cudaMemGetInfo: free before the allocations minus free after the
                               timed calls (NaN on the CPU) */
    double train_ms;        /* median time of one training call (quantize + forward + backward) */
    int out_of_memory;      /* 1: an allocation failed; the sizes are counted, nothing measured */
} pm_cost;

/* The caller's tensors of one training call on layout `lay`: Q, dO, O, dQ (query heads) and K,
 * V, dK, dV (key/value heads) of elem_bytes an element (cuda BF16: 2; the CPU reference: 4),
 * lse in FP32, cu_seqlens */
static inline double pm_tensor_bytes(const xp_workload *lay, double elem_bytes) {
    const double T = lay->total_tokens, D = lay->head_dim;
    return elem_bytes * 4.0 * T * D * (lay->heads_q + lay->heads_kv) + 4.0 * T * lay->heads_q +
           4.0 * (lay->num_docs + 1);
}

/* The training call on the GPU on layout `lay` (w itself, or w's documents padded): document d
 * of the packed inputs `in` goes to the start of lay's document d on the device, the rest of
 * that document is padding (zero inputs). When `real` is not NULL
 * one call runs with deterministic dQ first and the real tokens' outputs come back into it
 * (w's packed shape). Then `warmup` untimed and `iters` timed calls (default dQ mode), timed by
 * CUDA events. An allocation that fails sets out_of_memory and returns 0 (a result, not an
 * error). Returns 0, or -1 with a message on stderr. */
int pm_gpu_run(const flamia_recipe *rc, const xp_workload *w, const xp_workload *lay, const xp_inputs *in,
               int warmup, int iters, xp_result *real, pm_cost *cost);

#endif
