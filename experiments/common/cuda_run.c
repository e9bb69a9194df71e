/* cuda_run.c - the drivers' --backend cuda path (xp.h: xp_run, xp_cuda_runtime).
 *
 * Converts the float inputs to BF16, runs flamia_cuda_quantize -> forward -> backward on
 * the current GPU, and returns the outputs as floats (exact BF16 values). Built with CUDA
 * only when meson found it (XP_HAVE_CUDA); otherwise --backend cuda is refused earlier by
 * xp_opts_finish (flamia_cuda_available() is 0). Where the sm_90 backward refuses the shape
 * (FLAMIA_ERR_UNSUPPORTED: it takes head_dim 128 only) the call is forward-only: dQ, dK, dV
 * come back as NaN and xp_run returns 1. First run on an H200 in the eighteenth session
 * (dev/eighteenth_drivers.sh; the *_gpu experiments of pipelines/config.yaml).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia_formats.h"
#include "xp.h"

#ifdef XP_HAVE_CUDA
#include <cuda_runtime_api.h>

const char *xp_cuda_runtime(void) {
    static char buf[64];
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    snprintf(buf, sizeof buf, "runtime %d.%d, driver API %d.%d", rt / 1000, (rt % 1000) / 10, drv / 1000,
             (drv % 1000) / 10);
    return buf;
}

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(e_));                 \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

static uint16_t *to_bf16(const float *x, size_t n) {
    uint16_t *b = xp_xmalloc(sizeof(uint16_t) * n);
    for (size_t i = 0; i < n; i++) b[i] = flamia_bf16_bits(x[i]);
    return b;
}

static void from_bf16(const uint16_t *b, float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = flamia_bf16_value(b[i]);
}

static int run_cuda(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in, xp_result *out) {
    int rv = -1, fwd_only = 0;
    void *dq_ = NULL, *dk_ = NULL, *dv_ = NULL, *ddo = NULL, *dqq = NULL, *dkk = NULL, *dvv = NULL, *dO = NULL,
         *ws = NULL, *dcu = NULL;
    float *dlse = NULL;
    uint16_t *hq = to_bf16(in->q, in->nq), *hk = to_bf16(in->k, in->nkv), *hv = to_bf16(in->v, in->nkv),
             *hdo = to_bf16(in->dout, in->nq), *hbuf = xp_xmalloc(sizeof(uint16_t) * (in->nq > in->nkv ? in->nq : in->nkv));
    flamia_shape s = xp_workload_shape(w);
    size_t wsb = 0;
    flamia_status st;
    CK(cudaMalloc(&dcu, sizeof(int32_t) * (size_t)(w->num_docs + 1)));
    CK(cudaMemcpy(dcu, w->cu_seqlens, sizeof(int32_t) * (size_t)(w->num_docs + 1), cudaMemcpyHostToDevice));
    s.cu_seqlens = dcu;
    if ((st = flamia_cuda_workspace_size(rc, &s, &wsb)) != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_cuda_workspace_size (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
        goto fail;
    }
    CK(cudaMalloc(&ws, wsb));
    CK(cudaMalloc(&dq_, 2 * in->nq));
    CK(cudaMalloc(&dk_, 2 * in->nkv));
    CK(cudaMalloc(&dv_, 2 * in->nkv));
    CK(cudaMalloc(&ddo, 2 * in->nq));
    CK(cudaMalloc(&dO, 2 * in->nq));
    CK(cudaMalloc(&dqq, 2 * in->nq));
    CK(cudaMalloc(&dkk, 2 * in->nkv));
    CK(cudaMalloc(&dvv, 2 * in->nkv));
    CK(cudaMalloc((void **)&dlse, sizeof(float) * out->nlse));
    CK(cudaMemcpy(dq_, hq, 2 * in->nq, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk_, hk, 2 * in->nkv, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv_, hv, 2 * in->nkv, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ddo, hdo, 2 * in->nq, cudaMemcpyHostToDevice));
    if ((st = flamia_cuda_quantize(rc, &s, dq_, dk_, dv_, ws, wsb, NULL)) != FLAMIA_OK ||
        (st = flamia_cuda_forward(rc, &s, ws, wsb, dO, dlse, NULL)) != FLAMIA_OK) {
        fprintf(stderr, "error: CUDA quantize/forward (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
        goto fail;
    }
    st = flamia_cuda_backward(rc, &s, ws, wsb, dO, dlse, ddo, dqq, dkk, dvv, NULL);
    if (st == FLAMIA_ERR_UNSUPPORTED) fwd_only = 1;
    else if (st != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_cuda_backward (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
        goto fail;
    }
    CK(cudaDeviceSynchronize());
    int32_t flag = 0;
    CK(cudaMemcpy(&flag, ws, sizeof flag, cudaMemcpyDeviceToHost));
    if (flag) {
        fprintf(stderr, "error: CUDA quantize flagged non-finite inputs (%s, %s)\n", rc->name, w->name);
        goto fail;
    }
    CK(cudaMemcpy(hbuf, dO, 2 * in->nq, cudaMemcpyDeviceToHost));
    from_bf16(hbuf, out->o, in->nq);
    CK(cudaMemcpy(out->lse, dlse, sizeof(float) * out->nlse, cudaMemcpyDeviceToHost));
    if (fwd_only) {
        for (size_t i = 0; i < in->nq; i++) out->dq[i] = NAN;
        for (size_t i = 0; i < in->nkv; i++) out->dk[i] = out->dv[i] = NAN;
    } else {
        CK(cudaMemcpy(hbuf, dqq, 2 * in->nq, cudaMemcpyDeviceToHost));
        from_bf16(hbuf, out->dq, in->nq);
        CK(cudaMemcpy(hbuf, dkk, 2 * in->nkv, cudaMemcpyDeviceToHost));
        from_bf16(hbuf, out->dk, in->nkv);
        CK(cudaMemcpy(hbuf, dvv, 2 * in->nkv, cudaMemcpyDeviceToHost));
        from_bf16(hbuf, out->dv, in->nkv);
    }
    memset(&out->stats, 0, sizeof out->stats);
    rv = fwd_only;
fail:
    cudaFree(dq_);
    cudaFree(dk_);
    cudaFree(dv_);
    cudaFree(ddo);
    cudaFree(dO);
    cudaFree(dqq);
    cudaFree(dkk);
    cudaFree(dvv);
    cudaFree(dlse);
    cudaFree(ws);
    cudaFree(dcu);
    free(hq);
    free(hk);
    free(hv);
    free(hdo);
    free(hbuf);
    return rv;
}
#else
const char *xp_cuda_runtime(void) { return "n/a (built without CUDA)"; }
#endif

int xp_run(const xp_opts *o, const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in, xp_result *out) {
    if (!strcmp(o->backend, "cpu")) return xp_run_ref(rc, w, in, out);
#ifdef XP_HAVE_CUDA
    return run_cuda(rc, w, in, out);
#else
    (void)rc;
    (void)w;
    (void)in;
    (void)out;
    fprintf(stderr, "error: --backend cuda: the drivers were built without CUDA\n");
    return -1;
#endif
}

/* --oracle gpu: the FP64 ground truth by flamia_cuda_ref64 (kernels/sm90/ref64_gpu.h) */
#ifdef XP_HAVE_REF64_GPU
#include "ref64_gpu.h"
int xp_have_gpu_oracle(void) { return 1; }
int xp_ref64_gpu(const flamia_shape *s, const xp_inputs *in, xp_result64 *r) {
    const flamia_status st =
        flamia_cuda_ref64(s, in->q, in->k, in->v, in->dout, r->o, r->lse, r->dq, r->dk, r->dv);
    if (st == FLAMIA_OK) return 0;
    fprintf(stderr, "error: flamia_cuda_ref64: %s: %s\n", flamia_status_string(st), flamia_last_error());
    return -1;
}
#else
int xp_have_gpu_oracle(void) { return 0; }
int xp_ref64_gpu(const flamia_shape *s, const xp_inputs *in, xp_result64 *r) {
    (void)s;
    (void)in;
    (void)r;
    fprintf(stderr, "error: --oracle gpu: this build has no GPU oracle (needs CUDA and cuBLAS)\n");
    return -1;
}
#endif
