/* gpu_run.c - packed_memory's GPU side (packed_memory.h): one layout's training call on the
 * device, its memory counted and measured, its time, and the real tokens' outputs.
 *
 * The padded layout is built on the device: every input buffer is zeroed, then each document's
 * rows are copied to the start of its slot, so the host never holds a padded tensor (the
 * padded logu-128k layout is ~1.3M tokens: tens of GB on the GPU, none on the host). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packed_memory.h"

#ifdef XP_HAVE_CUDA
#include <cuda_runtime_api.h>

#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));     \
            goto done;                                                             \
        }                                                                          \
    } while (0)

typedef struct {
    void *cu, *q, *k, *v, *dout, *o, *dq, *dk, *dv, *ws;
    float *lse;
} dev_bufs;

static void dev_bufs_free(dev_bufs *b) {
    void *all[] = {b->cu, b->q, b->k, b->v, b->dout, b->o, b->dq, b->dk, b->dv, b->ws, b->lse};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cudaFree(all[i]);
    memset(b, 0, sizeof *b);
}

/* cudaMalloc that tells an out-of-memory failure (*oom = 1, error cleared) from others */
static int alloc(void **p, size_t n, int *oom) {
    const cudaError_t e = cudaMalloc(p, n);
    if (e == cudaSuccess) return 0;
    *p = NULL;
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *oom = 1;
        return -1;
    }
    fprintf(stderr, "error: cudaMalloc(%zu): %s\n", n, cudaGetErrorString(e));
    return -1;
}

/* Each document's rows from its place in layout src_lay to its place in dst_lay (row = bytes a
 * token; its length from the packed workload w): packed host rows into the device layout's
 * slots (cudaMemcpyHostToDevice), or the device layout's real rows back (DeviceToHost) */
static int copy_docs(void *dst, const xp_workload *dst_lay, const void *src, const xp_workload *src_lay, size_t row,
                     const xp_workload *w, enum cudaMemcpyKind kind) {
    for (int d = 0; d < w->num_docs; d++) {
        const size_t len = (size_t)(w->cu_seqlens[d + 1] - w->cu_seqlens[d]);
        if (cudaMemcpy((char *)dst + (size_t)dst_lay->cu_seqlens[d] * row,
                       (const char *)src + (size_t)src_lay->cu_seqlens[d] * row, len * row, kind) != cudaSuccess)
            return -1;
    }
    return 0;
}

/* a BF16 device tensor's real rows -> floats (exact BF16 values) */
static int fetch_bf16(float *out, const void *dev, size_t row_elems, const xp_workload *w, const xp_workload *lay) {
    const size_t n = (size_t)w->total_tokens * row_elems;
    uint16_t *h = xp_xmalloc(sizeof(uint16_t) * (n ? n : 1));
    const int rc = copy_docs(h, w, dev, lay, 2 * row_elems, w, cudaMemcpyDeviceToHost);
    if (rc == 0) xp_from_bf16(h, out, n);
    free(h);
    return rc;
}

static int train(const flamia_recipe *rc, const flamia_shape *s, const dev_bufs *b, size_t wsb) {
    if (flamia_cuda_train_step(rc, s, b->q, b->k, b->v, b->dout, b->o, b->lse, b->dq, b->dk, b->dv, b->ws, wsb,
                               NULL) == FLAMIA_OK)
        return 0;
    fprintf(stderr, "error: flamia_cuda_train_step: %s\n", flamia_last_error());
    return -1;
}

int pm_gpu_run(const flamia_recipe *rc, const xp_workload *w, const xp_workload *lay, const xp_inputs *in,
               int warmup, int iters, xp_result *real, pm_cost *cost) {
    int rv = -1, oom = 0;
    dev_bufs b = {0};
    cudaEvent_t ev[2] = {NULL, NULL};
    double *times = xp_xmalloc(sizeof(double) * (size_t)(iters > 0 ? iters : 1));
    uint16_t *hq = NULL, *hk = NULL, *hv = NULL, *hdo = NULL;
    const int det0 = flamia_cuda_deterministic();
    const size_t T = (size_t)lay->total_tokens, D = (size_t)w->head_dim;
    const size_t qrow = (size_t)w->heads_q * D, kvrow = (size_t)w->heads_kv * D;
    const size_t nq = T * qrow, nkv = T * kvrow, nlse = T * (size_t)w->heads_q;
    flamia_shape s = xp_workload_shape(lay);
    size_t wsb = 0, free0 = 0, free1 = 0, total = 0;

    cost->tensor_bytes = pm_tensor_bytes(lay, 2.0);
    cost->workspace_bytes = cost->device_bytes = cost->train_ms = NAN;
    cost->out_of_memory = 0;

    CK(cudaFree(0)); /* the context exists before the first reading */
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free0, &total));
    if (alloc(&b.cu, sizeof(int32_t) * (size_t)(lay->num_docs + 1), &oom)) goto done;
    CK(cudaMemcpy(b.cu, lay->cu_seqlens, sizeof(int32_t) * (size_t)(lay->num_docs + 1), cudaMemcpyHostToDevice));
    s.cu_seqlens = b.cu;
    s.cu_seqlens_host = lay->cu_seqlens; /* as a framework that knows its documents passes them */
    if (flamia_cuda_workspace_size(rc, &s, &wsb) != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_cuda_workspace_size (%s, %s): %s\n", rc->name, lay->name, flamia_last_error());
        goto done;
    }
    cost->workspace_bytes = (double)wsb;
    if (alloc(&b.ws, wsb, &oom) || alloc(&b.q, 2 * nq, &oom) || alloc(&b.k, 2 * nkv, &oom) ||
        alloc(&b.v, 2 * nkv, &oom) || alloc(&b.dout, 2 * nq, &oom) || alloc(&b.o, 2 * nq, &oom) ||
        alloc(&b.dq, 2 * nq, &oom) || alloc(&b.dk, 2 * nkv, &oom) || alloc(&b.dv, 2 * nkv, &oom) ||
        alloc((void **)&b.lse, sizeof(float) * nlse, &oom))
        goto done;

    /* inputs: padding zero, each document at the start of its slot */
    hq = xp_to_bf16(in->q, in->nq);
    hk = xp_to_bf16(in->k, in->nkv);
    hv = xp_to_bf16(in->v, in->nkv);
    hdo = xp_to_bf16(in->dout, in->nq);
    CK(cudaMemset(b.q, 0, 2 * nq));
    CK(cudaMemset(b.k, 0, 2 * nkv));
    CK(cudaMemset(b.v, 0, 2 * nkv));
    CK(cudaMemset(b.dout, 0, 2 * nq));
    const enum cudaMemcpyKind up = cudaMemcpyHostToDevice;
    if (copy_docs(b.q, lay, hq, w, 2 * qrow, w, up) || copy_docs(b.k, lay, hk, w, 2 * kvrow, w, up) ||
        copy_docs(b.v, lay, hv, w, 2 * kvrow, w, up) || copy_docs(b.dout, lay, hdo, w, 2 * qrow, w, up)) {
        fprintf(stderr, "error: copying the inputs into %s: %s\n", lay->name, cudaGetErrorString(cudaGetLastError()));
        goto done;
    }

    if (real) { /* the outputs compared across layouts: dQ's reduce-adds in a fixed order */
        if (flamia_cuda_set_deterministic(1) != FLAMIA_OK || train(rc, &s, &b, wsb)) goto done;
        CK(cudaDeviceSynchronize());
        if (flamia_cuda_check_finite(b.ws, wsb, NULL) != FLAMIA_OK) {
            fprintf(stderr, "error: %s, %s: %s\n", rc->name, lay->name, flamia_last_error());
            goto done;
        }
        if (fetch_bf16(real->o, b.o, qrow, w, lay) || fetch_bf16(real->dq, b.dq, qrow, w, lay) ||
            fetch_bf16(real->dk, b.dk, kvrow, w, lay) || fetch_bf16(real->dv, b.dv, kvrow, w, lay) ||
            copy_docs(real->lse, w, b.lse, lay, sizeof(float) * (size_t)w->heads_q, w, cudaMemcpyDeviceToHost)) {
            fprintf(stderr, "error: reading the outputs of %s back: %s\n", lay->name,
                    cudaGetErrorString(cudaGetLastError()));
            goto done;
        }
        flamia_cuda_set_deterministic(det0);
    }

    CK(cudaEventCreate(&ev[0]));
    CK(cudaEventCreate(&ev[1]));
    for (int i = 0; i < warmup + iters; i++) {
        if (i >= warmup) CK(cudaEventRecord(ev[0], NULL));
        if (train(rc, &s, &b, wsb)) goto done;
        if (i >= warmup) {
            float t;
            CK(cudaEventRecord(ev[1], NULL));
            CK(cudaEventSynchronize(ev[1]));
            CK(cudaEventElapsedTime(&t, ev[0], ev[1]));
            times[i - warmup] = t;
        }
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free1, &total));
    cost->device_bytes = (double)free0 - (double)free1;
    cost->train_ms = iters > 0 ? xp_median(times, (size_t)iters) : NAN;
    rv = 0;
done:
    if (oom) {
        cost->out_of_memory = 1;
        rv = 0;
    }
    flamia_cuda_set_deterministic(det0);
    if (ev[0]) cudaEventDestroy(ev[0]);
    if (ev[1]) cudaEventDestroy(ev[1]);
    dev_bufs_free(&b);
    free(times);
    free(hq);
    free(hk);
    free(hv);
    free(hdo);
    return rv;
}
#else
int pm_gpu_run(const flamia_recipe *rc, const xp_workload *w, const xp_workload *lay, const xp_inputs *in,
               int warmup, int iters, xp_result *real, pm_cost *cost) {
    (void)rc, (void)w, (void)lay, (void)in, (void)warmup, (void)iters, (void)real, (void)cost;
    fprintf(stderr, "error: --backend cuda: the drivers were built without CUDA\n");
    return -1;
}
#endif
