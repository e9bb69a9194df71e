/* cuda_run.c - the drivers' --backend cuda path (xp.h: xp_run, xp_cuda_fwd_*, xp_cuda_runtime).
 *
 * Converts the float inputs to BF16, runs flamia_cuda_quantize -> forward -> backward on
 * the current GPU, and returns the outputs as floats (exact BF16 values). Built with CUDA
 * only when meson found it (XP_HAVE_CUDA); otherwise --backend cuda is refused earlier by
 * xp_opts_finish (flamia_cuda_available() is 0). Where the sm_90 backward refuses a shape the
 * forward took (FLAMIA_ERR_UNSUPPORTED; none today: both take head_dim 128 only, and the forward
 * refuses the others itself) the call is forward-only: dQ, dK, dV come back as NaN and xp_run
 * returns 1. First run on an H200 in the eighteenth session
 * (dev/sessions/eighteenth_drivers.sh; the *_gpu experiments of pipelines/config.yaml).
 * xp_cuda_fwd_*: the forward alone on inputs quantized once, timed by CUDA events (osum_ablation).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* the forward's device state: BF16 Q, K, V, the document offsets, the workspace, O and lse */
typedef struct {
    flamia_shape s;
    void *q, *k, *v, *o, *ws, *cu;
    float *lse;
    size_t wsb;
} dev_fwd;

static void dev_fwd_free(dev_fwd *d) {
    cudaFree(d->q);
    cudaFree(d->k);
    cudaFree(d->v);
    cudaFree(d->o);
    cudaFree(d->lse);
    cudaFree(d->ws);
    cudaFree(d->cu);
    memset(d, 0, sizeof *d);
}

/* allocate, upload the inputs as BF16 and quantize them (flamia_cuda_quantize) */
static int dev_fwd_setup(dev_fwd *d, const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in) {
    int rv = -1;
    flamia_status st;
    memset(d, 0, sizeof *d);
    uint16_t *hq = xp_to_bf16(in->q, in->nq), *hk = xp_to_bf16(in->k, in->nkv), *hv = xp_to_bf16(in->v, in->nkv);
    d->s = xp_workload_shape(w);
    CK(cudaMalloc(&d->cu, sizeof(int32_t) * (size_t)(w->num_docs + 1)));
    CK(cudaMemcpy(d->cu, w->cu_seqlens, sizeof(int32_t) * (size_t)(w->num_docs + 1), cudaMemcpyHostToDevice));
    d->s.cu_seqlens = d->cu;
    d->s.cu_seqlens_host = w->cu_seqlens; /* as a framework that knows its documents passes them */
    if ((st = flamia_cuda_workspace_size(rc, &d->s, &d->wsb)) != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_cuda_workspace_size (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
        goto fail;
    }
    CK(cudaMalloc(&d->ws, d->wsb));
    CK(cudaMalloc(&d->q, 2 * in->nq));
    CK(cudaMalloc(&d->k, 2 * in->nkv));
    CK(cudaMalloc(&d->v, 2 * in->nkv));
    CK(cudaMalloc(&d->o, 2 * in->nq));
    CK(cudaMalloc((void **)&d->lse, sizeof(float) * (size_t)w->total_tokens * (size_t)w->heads_q));
    CK(cudaMemcpy(d->q, hq, 2 * in->nq, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d->k, hk, 2 * in->nkv, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d->v, hv, 2 * in->nkv, cudaMemcpyHostToDevice));
    if ((st = flamia_cuda_quantize(rc, &d->s, d->q, d->k, d->v, d->ws, d->wsb, NULL)) != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_cuda_quantize (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
        goto fail;
    }
    rv = 0;
fail:
    free(hq);
    free(hk);
    free(hv);
    return rv;
}

static int dev_fwd_forward(dev_fwd *d, const flamia_recipe *rc, const xp_workload *w) {
    if (flamia_cuda_forward(rc, &d->s, d->ws, d->wsb, d->o, d->lse, NULL) == FLAMIA_OK) return 0;
    fprintf(stderr, "error: flamia_cuda_forward (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
    return -1;
}

/* after the calls: the workspace's non-finite record clear (flamia_cuda_check_finite), O and
 * lse to the host */
static int dev_fwd_fetch(dev_fwd *d, const flamia_recipe *rc, const xp_workload *w, size_t nq, float *o, float *lse) {
    int rv = -1;
    uint16_t *hbuf = xp_xmalloc(sizeof(uint16_t) * nq);
    CK(cudaDeviceSynchronize());
    if (flamia_cuda_check_finite(d->ws, d->wsb, NULL) != FLAMIA_OK) {
        fprintf(stderr, "error: %s (%s, %s)\n", flamia_last_error(), rc->name, w->name);
        goto fail;
    }
    CK(cudaMemcpy(hbuf, d->o, 2 * nq, cudaMemcpyDeviceToHost));
    xp_from_bf16(hbuf, o, nq);
    if (lse) CK(cudaMemcpy(lse, d->lse, sizeof(float) * (size_t)w->total_tokens * (size_t)w->heads_q, cudaMemcpyDeviceToHost));
    rv = 0;
fail:
    free(hbuf);
    return rv;
}

static int run_cuda(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in, xp_result *out) {
    int rv = -1, fwd_only = 0;
    dev_fwd d;
    void *ddo = NULL, *dqq = NULL, *dkk = NULL, *dvv = NULL;
    uint16_t *hdo = xp_to_bf16(in->dout, in->nq), *hbuf = xp_xmalloc(sizeof(uint16_t) * (in->nq > in->nkv ? in->nq : in->nkv));
    flamia_status st;
    if (dev_fwd_setup(&d, rc, w, in) || dev_fwd_forward(&d, rc, w)) goto fail;
    CK(cudaMalloc(&ddo, 2 * in->nq));
    CK(cudaMalloc(&dqq, 2 * in->nq));
    CK(cudaMalloc(&dkk, 2 * in->nkv));
    CK(cudaMalloc(&dvv, 2 * in->nkv));
    CK(cudaMemcpy(ddo, hdo, 2 * in->nq, cudaMemcpyHostToDevice));
    st = flamia_cuda_backward(rc, &d.s, d.ws, d.wsb, d.o, d.lse, ddo, dqq, dkk, dvv, NULL);
    if (st == FLAMIA_ERR_UNSUPPORTED) fwd_only = 1;
    else if (st != FLAMIA_OK) {
        fprintf(stderr, "error: flamia_cuda_backward (%s, %s): %s\n", rc->name, w->name, flamia_last_error());
        goto fail;
    }
    if (dev_fwd_fetch(&d, rc, w, in->nq, out->o, out->lse)) goto fail;
    if (fwd_only) {
        for (size_t i = 0; i < in->nq; i++) out->dq[i] = NAN;
        for (size_t i = 0; i < in->nkv; i++) out->dk[i] = out->dv[i] = NAN;
    } else {
        CK(cudaMemcpy(hbuf, dqq, 2 * in->nq, cudaMemcpyDeviceToHost));
        xp_from_bf16(hbuf, out->dq, in->nq);
        CK(cudaMemcpy(hbuf, dkk, 2 * in->nkv, cudaMemcpyDeviceToHost));
        xp_from_bf16(hbuf, out->dk, in->nkv);
        CK(cudaMemcpy(hbuf, dvv, 2 * in->nkv, cudaMemcpyDeviceToHost));
        xp_from_bf16(hbuf, out->dv, in->nkv);
    }
    memset(&out->stats, 0, sizeof out->stats);
    rv = fwd_only;
fail:
    dev_fwd_free(&d);
    cudaFree(ddo);
    cudaFree(dqq);
    cudaFree(dkk);
    cudaFree(dvv);
    free(hdo);
    free(hbuf);
    return rv;
}

struct xp_cuda_fwd {
    dev_fwd d;
    const flamia_recipe *rc;
    const xp_workload *w;
    size_t nq;
};

xp_cuda_fwd *xp_cuda_fwd_open(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in) {
    xp_cuda_fwd *h = xp_xmalloc(sizeof *h);
    h->rc = rc;
    h->w = w;
    h->nq = in->nq;
    if (dev_fwd_setup(&h->d, rc, w, in) == 0) return h;
    dev_fwd_free(&h->d);
    free(h);
    return NULL;
}

void xp_cuda_fwd_close(xp_cuda_fwd *h) {
    if (!h) return;
    dev_fwd_free(&h->d);
    free(h);
}

int xp_cuda_fwd_run(xp_cuda_fwd *h, int warmup, int iters, double *ms) {
    int rv = -1;
    cudaEvent_t ev[2] = {NULL, NULL};
    double *times = xp_xmalloc(sizeof(double) * (size_t)(iters > 0 ? iters : 1));
    CK(cudaEventCreate(&ev[0]));
    CK(cudaEventCreate(&ev[1]));
    for (int i = 0; i < warmup + iters || i == 0; i++) { /* at least one call */
        if (i >= warmup && iters > 0) CK(cudaEventRecord(ev[0], NULL));
        if (dev_fwd_forward(&h->d, h->rc, h->w)) goto fail;
        if (i >= warmup && iters > 0) {
            CK(cudaEventRecord(ev[1], NULL));
            CK(cudaEventSynchronize(ev[1]));
            float t;
            CK(cudaEventElapsedTime(&t, ev[0], ev[1]));
            times[i - warmup] = t;
        }
    }
    CK(cudaDeviceSynchronize());
    *ms = iters > 0 ? xp_median(times, (size_t)iters) : NAN;
    rv = 0;
fail:
    if (ev[0]) cudaEventDestroy(ev[0]);
    if (ev[1]) cudaEventDestroy(ev[1]);
    free(times);
    return rv;
}

int xp_cuda_fwd_output(xp_cuda_fwd *h, float *o) { return dev_fwd_fetch(&h->d, h->rc, h->w, h->nq, o, NULL); }
#else
const char *xp_cuda_runtime(void) { return "n/a (built without CUDA)"; }

xp_cuda_fwd *xp_cuda_fwd_open(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in) {
    (void)rc;
    (void)w;
    (void)in;
    fprintf(stderr, "error: --backend cuda: the drivers were built without CUDA\n");
    return NULL;
}
void xp_cuda_fwd_close(xp_cuda_fwd *h) { (void)h; }
int xp_cuda_fwd_run(xp_cuda_fwd *h, int warmup, int iters, double *ms) {
    (void)h;
    (void)warmup;
    (void)iters;
    (void)ms;
    return -1;
}
int xp_cuda_fwd_output(xp_cuda_fwd *h, float *o) {
    (void)h;
    (void)o;
    return -1;
}
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
