/*
 * cuda_api.cu - the CUDA entry points of flamia.h (Hopper, sm_90a).
 *
 * Every check happens on the host before anything is enqueued, and none of
 * them synchronizes: recipe (flamia_recipe_validate, then the subset the GPU
 * implements), shape dimensions (cu_seqlens is a device pointer: its contents
 * are not read here; the optional host copy cu_seqlens_host is), pointers (NULL, 16-byte alignment, memory the device can
 * address), workspace size, and the GPU itself (sm_90). On any failure
 * nothing is enqueued, so nothing is written. Nothing is allocated: the
 * calls can be captured in a CUDA graph. docs/cuda-api.md is the user guide.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flamia.h"
#include "flamia_internal.h"
#include "sm90_launch.h"

static int host_doc_tiles(); /* FLAMIA_SM90_DOC_TILES (below, with the other settings) */

namespace {

flamia_status cuda_fail(const char *where, cudaError_t e) {
    return flamia_fail(FLAMIA_ERR_CUDA, "%s: CUDA error %d (%s): %s", where, (int)e, cudaGetErrorName(e),
                       cudaGetErrorString(e));
}

/* The driver's cuCtxGetCurrent through the runtime (no -lcuda link), or nullptr. */
typedef CUresult (*ctx_get_current_fn)(CUcontext *);
ctx_get_current_fn ctx_get_current() {
    static const ctx_get_current_fn fn = [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        return cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
                       q == cudaDriverEntryPointSuccess
                   ? (ctx_get_current_fn)p
                   : nullptr;
    }();
    return fn;
}

/* A thread that never made a CUDA context current (PyTorch's autograd device thread, a
 * framework's worker) has none, and cudaPointerGetAttributes then reports every device
 * pointer as unregistered host memory. Such a thread gets the device's primary context,
 * the one cudaMalloc'd memory and the runtime's streams belong to; a context the caller
 * made current is left as it is. */
flamia_status bind_context_if_none(const char *fn, int dev) {
    CUcontext cur = nullptr;
    const ctx_get_current_fn get = ctx_get_current();
    if (get && get(&cur) == CUDA_SUCCESS && cur) return FLAMIA_OK;
    const cudaError_t e = cudaSetDevice(dev);
    return e == cudaSuccess ? FLAMIA_OK : cuda_fail(fn, e);
}

/* The current device must be an sm_90 GPU (the kernels are sm_90a machine code). */
flamia_status check_device(const char *fn) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        (void)cudaGetLastError(); /* a missing device is an answer, not a pending error */
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "%s: no CUDA device visible (%s)", fn,
                           e != cudaSuccess ? cudaGetErrorString(e) : "device count 0");
    }
    int dev = 0, major = 0, minor = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess) return cuda_fail(fn, e);
    if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess)
        return cuda_fail(fn, e);
    if (major != 9 || minor != 0)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED,
                           "%s: GPU %d is sm_%d%d; libflamia's kernels are built for sm_90a (Hopper) only", fn,
                           dev, major, minor);
    return bind_context_if_none(fn, dev);
}

bool same_oq(const flamia_operand_quant &a, const flamia_operand_quant &b) {
    if (a.format != b.format) return false;
    if (a.format == FLAMIA_FMT_FP32 || a.format == FLAMIA_FMT_BF16) return true;
    return a.granularity == b.granularity && a.exp_rule == b.exp_rule;
}

/* Is r the preset p up to the Hadamard option and the row-sum rule, which every kind runs?
 * (name is informational only) */
bool same_recipe(const flamia_recipe &r, const flamia_recipe &p) {
    return same_oq(r.q_score, p.q_score) && same_oq(r.k_score, p.k_score) && same_oq(r.q, p.q) &&
           same_oq(r.k, p.k) && same_oq(r.v, p.v) && same_oq(r.dout, p.dout) && r.p_format == p.p_format &&
           (r.p_format != FLAMIA_FMT_E4M3 || r.p_offset_log2 == p.p_offset_log2) &&
           r.ds_format == p.ds_format &&
           (r.ds_format != FLAMIA_FMT_E4M3 || (r.ds_scale == p.ds_scale && r.ds_exp_rule == p.ds_exp_rule)) &&
           r.token_block == p.token_block && r.tile_q == p.tile_q && r.tile_k == p.tile_k &&
           r.exp_mode == p.exp_mode;
}

flamia_status recipe_kind(const char *fn, const flamia_recipe *r, enum flamia_sm90_kind *kind) {
    if (r->hadamard != 0 && r->hadamard != 1)
        return flamia_fail(FLAMIA_ERR_INVALID, "%s: recipe.hadamard must be 0 or 1 (got %d)", fn, r->hadamard);
    static const struct {
        const char *name;
        enum flamia_sm90_kind kind;
    } supported[] = {{"mxfp8", FLAMIA_SM90_MXFP8},
                     {"mxfp8-exact", FLAMIA_SM90_MXFP8_EXACT},
                     {"bf16", FLAMIA_SM90_BF16}};
    for (const auto &s : supported) {
        flamia_recipe p;
        if (flamia_recipe_preset(s.name, &p) != FLAMIA_OK) continue;
        if (same_recipe(*r, p)) {
            *kind = s.kind;
            return FLAMIA_OK;
        }
    }
    char name[sizeof r->name + 1];
    memcpy(name, r->name, sizeof r->name);
    name[sizeof r->name] = '\0';
    int edited = 0; /* named after a supported preset, but its knobs differ */
    for (const auto &s : supported) edited |= !strcmp(name, s.name);
    return flamia_fail(FLAMIA_ERR_UNSUPPORTED,
                       "%s: recipe '%s'%s is not implemented on the GPU: the CUDA backend runs the presets bf16, "
                       "mxfp8 and mxfp8-exact unchanged except for the hadamard and row_sum knobs (use the CPU reference "
                       "for the others)",
                       fn, name, edited ? " with edited knobs (tiles, P/dS format, exp mode...)" : "");
}

/* flamia_cuda_set_deterministic: read when a call is prepared (enqueued) */
int g_deterministic = 0;

/* The training call moves two pieces of the backward's preparation into the passes before
 * it, each with an environment switch (read once) that keeps it in the backward, where a
 * separate flamia_cuda_backward always does it:
 * - the forward zeroes dq_accum (its stores hide under the forward's softmax-bound loop)
 *   instead of bwd_pre_do; FLAMIA_SM90_DQ_ZERO=bwd (docs/perf-notes.md, "Backward kernel,
 *   fourteenth session");
 * - quantize writes Q^T and K^T, as it writes V^T, instead of bwd_transpose reading the
 *   codes back; FLAMIA_SM90_QKT=bwd (docs/perf-notes.md, "Backward kernel", fifteenth session). */
int moved_out_of_backward(const char *env_name, int *cached) {
    if (*cached < 0) {
        const char *e = getenv(env_name);
        *cached = !(e && !strcmp(e, "bwd"));
    }
    return *cached;
}
int dq_zero_in_forward() {
    static int v = -1;
    return moved_out_of_backward("FLAMIA_SM90_DQ_ZERO", &v);
}
int qkt_in_quantize() {
    static int v = -1;
    return moved_out_of_backward("FLAMIA_SM90_QKT", &v);
}

/* Which kernels a call runs: its recipe and head-dim checks depend on it */
enum api_call {
    CALL_QUANTIZE, /* quantize alone (and the workspace query): head_dim 64 or 128 */
    CALL_LAYOUT,   /* the workspace layout alone (flamia_sm90_layout_for_call): the workspace query's
                      checks, without a device, since the layout depends on none */
    CALL_FORWARD,  /* the forward: head_dim 128 */
    CALL_TRAINING  /* the backward too: head_dim 128, and a recipe a training call may use */
};

/* The shape's host copy of cu_seqlens, checked as a CPU call's cu_seqlens and against max_seqlen:
 * *doc_tiles = sum_d c(n_d), the split dQ's tiles a query head (sm90_launch.h), or 0 where
 * FLAMIA_SM90_DOC_TILES=0 asks for the bound from max_seqlen instead (measurements) */
flamia_status count_doc_tiles(const char *fn, const flamia_shape *s, long long *doc_tiles) {
    flamia_shape h = *s;
    h.cu_seqlens = s->cu_seqlens_host;
    if (flamia_shape_validate(&h)) {
        char why[256]; /* flamia_fail formats into the buffer flamia_last_error reads */
        snprintf(why, sizeof why, "%s", flamia_last_error());
        return flamia_fail(FLAMIA_ERR_INVALID, "%s: shape.cu_seqlens_host: %s", fn, why);
    }
    const int32_t *cu = s->cu_seqlens_host;
    for (int d = 0; d < s->num_docs; d++)
        if (cu[d + 1] - cu[d] > s->max_seqlen)
            return flamia_fail(FLAMIA_ERR_INVALID,
                               "%s: shape.cu_seqlens_host: document %d has %d tokens, more than shape.max_seqlen %d",
                               fn, d, (int)(cu[d + 1] - cu[d]), s->max_seqlen);
    *doc_tiles = host_doc_tiles() ? flamia_sm90_doc_tiles(cu, s->num_docs, s->causal) : 0;
    return FLAMIA_OK;
}

/* Recipe + shape + device (none for CALL_LAYOUT) -> validated problem. */
flamia_status prepare(const char *fn, const flamia_recipe *r, const flamia_shape *s, enum api_call call,
                      flamia_sm90_problem *P) {
    const int training = call == CALL_TRAINING;
    if (!r) return flamia_fail(FLAMIA_ERR_INVALID, "%s: recipe is NULL", fn);
    if (!s) return flamia_fail(FLAMIA_ERR_INVALID, "%s: shape is NULL", fn);
    flamia_status st = flamia_recipe_validate(r, training);
    if (st) return st;
    if ((st = flamia_shape_check_dims(s))) return st;
    /* refused here, before a training call enqueues its quantize and forward (which would
     * write o and lse) for a backward that cannot run, and before any device check, so that a
     * forward's refusal names the head dim (the kernel's own refusal was a bare CUDA error) */
    static_assert(FLAMIA_SM90_FWD_HEAD_DIM == FLAMIA_SM90_BWD_HEAD_DIM, "a training call runs both kernels");
    const int head_dim = training ? FLAMIA_SM90_BWD_HEAD_DIM : FLAMIA_SM90_FWD_HEAD_DIM;
    if (call != CALL_QUANTIZE && call != CALL_LAYOUT && s->head_dim != head_dim)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED,
                           "%s: head_dim %d: the sm_90 %s head_dim %d only; flamia_cuda_quantize also takes 64, the "
                           "CPU reference both",
                           fn, s->head_dim,
                           training ? "forward and backward (and so the training call) take" : "forward takes",
                           head_dim);
    if (s->max_seqlen < 1 || s->max_seqlen > s->total_tokens)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: shape.max_seqlen %d must be the longest document's length, in [1, total_tokens=%d] "
                           "(CUDA calls cannot read the device cu_seqlens on the host)",
                           fn, s->max_seqlen, s->total_tokens);
    if ((long long)s->max_seqlen * s->num_docs < s->total_tokens)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: shape.max_seqlen %d is too small: %d documents of at most %d tokens cannot hold %d",
                           fn, s->max_seqlen, s->num_docs, s->max_seqlen, s->total_tokens);
    if ((size_t)s->total_tokens > ((size_t)1 << 31) - 16)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "%s: total_tokens %d too large", fn, s->total_tokens);
    enum flamia_sm90_kind kind;
    if ((st = recipe_kind(fn, r, &kind))) return st;
    if (call != CALL_LAYOUT && (st = check_device(fn))) return st;
    memset(P, 0, sizeof *P);
    P->total_tokens = s->total_tokens;
    P->num_docs = s->num_docs;
    P->heads_q = s->heads_q;
    P->heads_kv = s->heads_kv;
    P->head_dim = s->head_dim;
    P->causal = s->causal;
    P->max_seqlen = s->max_seqlen;
    P->softmax_scale = flamia_effective_scale(s);
    P->cu_seqlens = s->cu_seqlens;
    P->kind = kind;
    P->hadamard = r->hadamard;
    P->row_sum_p_values = r->row_sum == FLAMIA_ROWSUM_P_VALUES;
    P->deterministic = __atomic_load_n(&g_deterministic, __ATOMIC_RELAXED);
    P->dq_room_chunks = flamia_sm90_dq_room_chunks();
    P->dq_room_growth = flamia_sm90_dq_room_growth();
    P->dq_room_one_growth = flamia_sm90_dq_room_one_growth();
    if (s->cu_seqlens_host && (st = count_doc_tiles(fn, s, &P->doc_tiles))) return st;
    return FLAMIA_OK;
}

/* A pointer the kernels dereference: non-NULL, aligned, addressable by the device. */
flamia_status check_ptr(const char *fn, const char *what, const void *p, size_t align) {
    if (!p) return flamia_fail(FLAMIA_ERR_INVALID, "%s: %s is NULL", fn, what);
    if ((uintptr_t)p % align)
        return flamia_fail(FLAMIA_ERR_INVALID, "%s: %s = %p is not %zu-byte aligned", fn, what, p, align);
    cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return flamia_fail(FLAMIA_ERR_INVALID, "%s: %s = %p is not memory the GPU can address (%s)", fn, what, p,
                           cudaGetErrorString(e));
    }
    if (at.type == cudaMemoryTypeUnregistered || !at.devicePointer)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: %s = %p is host memory; CUDA calls take device pointers (cudaMalloc)%s", fn, what, p,
                           !strcmp(what, "shape.cu_seqlens") ? " - cu_seqlens too is a device pointer here" : "");
    return FLAMIA_OK;
}

flamia_status check_workspace(const char *fn, const flamia_sm90_problem *P, const void *ws, size_t bytes) {
    flamia_status st = check_ptr(fn, "workspace", ws, 256);
    if (st) return st;
    const flamia_sm90_layout L = flamia_sm90_layout_of(P);
    if (bytes < L.total)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: workspace_bytes %zu too small: this recipe and shape need %zu "
                           "(flamia_cuda_workspace_size)",
                           fn, bytes, L.total);
    return FLAMIA_OK;
}

/* Nothing of ours may run on top of an error the caller has not collected. */
flamia_status check_pending(const char *fn) {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return flamia_fail(FLAMIA_ERR_CUDA, "%s: a CUDA error was pending before the call: %s: %s", fn,
                           cudaGetErrorName(e), cudaGetErrorString(e));
    return FLAMIA_OK;
}

flamia_status check_inputs(const char *fn, const flamia_shape *s, const void *q, const void *k, const void *v) {
    flamia_status st;
    if ((st = check_ptr(fn, "shape.cu_seqlens", s->cu_seqlens, 4)) || (st = check_ptr(fn, "q", q, 16)) ||
        (st = check_ptr(fn, "k", k, 16)) || (st = check_ptr(fn, "v", v, 16)))
        return st;
    return FLAMIA_OK;
}

flamia_status quantize_checked(const char *fn, const flamia_sm90_problem *P, const void *q, const void *k,
                               const void *v, void *ws, cudaStream_t stream) {
    cudaError_t e =
        flamia_sm90_quantize(P, (const uint16_t *)q, (const uint16_t *)k, (const uint16_t *)v, ws, stream);
    if (e != cudaSuccess) return cuda_fail(fn, e);
    return FLAMIA_OK;
}

flamia_status forward_checked(const char *fn, const flamia_sm90_problem *P, void *ws, void *o, float *lse,
                              cudaStream_t stream) {
    cudaError_t e = flamia_sm90_forward(P, ws, (uint16_t *)o, lse, stream);
    if (e != cudaSuccess) return cuda_fail(fn, e);
    return FLAMIA_OK;
}

flamia_status backward_checked(const char *fn, const flamia_sm90_problem *P, void *ws, const void *o,
                               const float *lse, const void *dout, void *dq, void *dk, void *dv,
                               cudaStream_t stream) {
    cudaError_t e = flamia_sm90_backward(P, ws, (const uint16_t *)o, lse, (const uint16_t *)dout, (uint16_t *)dq,
                                         (uint16_t *)dk, (uint16_t *)dv, stream);
    if (e != cudaSuccess) return cuda_fail(fn, e);
    return FLAMIA_OK;
}

} // namespace

extern "C" {

int flamia_cuda_available(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        return 0;
    }
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return major == 9 && minor == 0;
}

flamia_status flamia_cuda_workspace_size(const flamia_recipe *r, const flamia_shape *s, size_t *bytes) {
    static const char fn[] = "flamia_cuda_workspace_size";
    if (!bytes) return flamia_fail(FLAMIA_ERR_INVALID, "%s: bytes is NULL", fn);
    flamia_sm90_problem P = {};
    flamia_status st = prepare(fn, r, s, CALL_QUANTIZE, &P);
    if (st) return st;
    /* with the deterministic mode on, room for its split dQ too, every kv head at once where that
     * stays under the cap (sm90_launch.h; a smaller workspace runs the heads in chunks, in dq_accum's
     * room at the least, and one that holds no kv head's share there takes the turns) */
    *bytes = flamia_sm90_layout_of(&P).total_split;
    return FLAMIA_OK;
}

flamia_status flamia_cuda_quantize(const flamia_recipe *r, const flamia_shape *s, const void *q, const void *k,
                                   const void *v, void *workspace, size_t workspace_bytes, void *stream) {
    static const char fn[] = "flamia_cuda_quantize";
    flamia_sm90_problem P = {};
    flamia_status st;
    if ((st = prepare(fn, r, s, CALL_QUANTIZE, &P)) || (st = check_inputs(fn, s, q, k, v)) ||
        (st = check_workspace(fn, &P, workspace, workspace_bytes)) || (st = check_pending(fn)))
        return st;
    return quantize_checked(fn, &P, q, k, v, workspace, (cudaStream_t)stream);
}

flamia_status flamia_cuda_forward(const flamia_recipe *r, const flamia_shape *s, void *workspace,
                                  size_t workspace_bytes, void *o, float *lse, void *stream) {
    static const char fn[] = "flamia_cuda_forward";
    flamia_sm90_problem P = {};
    flamia_status st;
    if ((st = prepare(fn, r, s, CALL_FORWARD, &P)) || (st = check_ptr(fn, "shape.cu_seqlens", s->cu_seqlens, 4)) ||
        (st = check_workspace(fn, &P, workspace, workspace_bytes)) || (st = check_ptr(fn, "o", o, 16)) ||
        (st = check_ptr(fn, "lse", lse, 16)) || (st = check_pending(fn)))
        return st;
    return forward_checked(fn, &P, workspace, o, lse, (cudaStream_t)stream);
}

flamia_status flamia_cuda_backward(const flamia_recipe *r, const flamia_shape *s, void *workspace,
                                   size_t workspace_bytes, const void *o, const float *lse, const void *dout,
                                   void *dq, void *dk, void *dv, void *stream) {
    static const char fn[] = "flamia_cuda_backward";
    flamia_sm90_problem P = {};
    flamia_status st;
    if ((st = prepare(fn, r, s, CALL_TRAINING, &P)) || (st = check_ptr(fn, "shape.cu_seqlens", s->cu_seqlens, 4)) ||
        (st = check_workspace(fn, &P, workspace, workspace_bytes)) || (st = check_ptr(fn, "o", o, 16)) ||
        (st = check_ptr(fn, "lse", lse, 16)) || (st = check_ptr(fn, "dout", dout, 16)) ||
        (st = check_ptr(fn, "dq", dq, 16)) || (st = check_ptr(fn, "dk", dk, 16)) ||
        (st = check_ptr(fn, "dv", dv, 16)) || (st = check_pending(fn)))
        return st;
    P.dq_plan = flamia_sm90_dq_plan_for_call(&P, workspace_bytes);
    return backward_checked(fn, &P, workspace, o, lse, dout, dq, dk, dv, (cudaStream_t)stream);
}

flamia_status flamia_cuda_set_deterministic(int on) {
    __atomic_store_n(&g_deterministic, on ? 1 : 0, __ATOMIC_RELAXED);
    return FLAMIA_OK;
}

int flamia_cuda_deterministic(void) { return __atomic_load_n(&g_deterministic, __ATOMIC_RELAXED); }

extern int flamia_fwd_o_flush; /* forward.cu: read by fwd_setup when a forward is enqueued */
flamia_status flamia_cuda_set_o_sum_interval(int key_tiles) {
    if (!FLAMIA_SM90_O_SUM_INTERVAL_OK(key_tiles))
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "flamia_cuda_set_o_sum_interval: key_tiles = %d (0, 2, 4, 8, 16, 32 or 64)", key_tiles);
    __atomic_store_n(&flamia_fwd_o_flush, key_tiles, __ATOMIC_RELAXED);
    return FLAMIA_OK;
}

int flamia_cuda_o_sum_interval(void) { return __atomic_load_n(&flamia_fwd_o_flush, __ATOMIC_RELAXED); }

flamia_status flamia_cuda_train_step(const flamia_recipe *r, const flamia_shape *s, const void *q, const void *k,
                                     const void *v, const void *dout, void *o, float *lse, void *dq, void *dk,
                                     void *dv, void *workspace, size_t workspace_bytes, void *stream) {
    static const char fn[] = "flamia_cuda_train_step";
    flamia_sm90_problem P = {};
    flamia_status st;
    if ((st = prepare(fn, r, s, CALL_TRAINING, &P)) || (st = check_inputs(fn, s, q, k, v)) ||
        (st = check_ptr(fn, "dout", dout, 16)) || (st = check_ptr(fn, "o", o, 16)) ||
        (st = check_ptr(fn, "lse", lse, 16)) || (st = check_ptr(fn, "dq", dq, 16)) ||
        (st = check_ptr(fn, "dk", dk, 16)) || (st = check_ptr(fn, "dv", dv, 16)) ||
        (st = check_workspace(fn, &P, workspace, workspace_bytes)) || (st = check_pending(fn)))
        return st;
    const cudaStream_t cs = (cudaStream_t)stream;
    P.dq_plan = flamia_sm90_dq_plan_for_call(&P, workspace_bytes);
    P.dq_zero_in_forward = dq_zero_in_forward() && !P.dq_plan.heads; /* the split dQ has no dq_accum */
    P.qkt_in_quantize = qkt_in_quantize();
    if ((st = quantize_checked(fn, &P, q, k, v, workspace, cs)) ||
        (st = forward_checked(fn, &P, workspace, o, lse, cs)))
        return st;
    return backward_checked(fn, &P, workspace, o, lse, dout, dq, dk, dv, cs);
}

flamia_status flamia_cuda_check_finite(const void *workspace, size_t workspace_bytes, void *stream) {
    static const char fn[] = "flamia_cuda_check_finite";
    if (!workspace) return flamia_fail(FLAMIA_ERR_INVALID, "%s: workspace is NULL", fn);
    if (workspace_bytes < sizeof(int))
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: workspace_bytes %zu: pass the workspace and size the calls used "
                           "(flamia_cuda_workspace_size)",
                           fn, workspace_bytes);
    flamia_status st = check_device(fn);
    if (st) return st;
    const cudaStream_t cs = (cudaStream_t)stream;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(cs, &capture);
    if (e != cudaSuccess) return cuda_fail(fn, e);
    if (capture != cudaStreamCaptureStatusNone)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: the stream is capturing a graph, and this check synchronizes: call it after the "
                           "graph's launch, on a stream that is not capturing",
                           fn);
    if ((st = check_ptr(fn, "workspace", workspace, 256)) || (st = check_pending(fn))) return st;
    int flag = 0; /* the layout's err_flag region: offset 0 of every workspace */
    static_assert(FLAMIA_SM90_BAD_Q == 1 && FLAMIA_SM90_BAD_K == 2 && FLAMIA_SM90_BAD_V == 4, "quantize sets 1 << ti");
    if ((e = cudaMemcpyAsync(&flag, workspace, sizeof flag, cudaMemcpyDeviceToHost, cs)) != cudaSuccess ||
        (e = cudaStreamSynchronize(cs)) != cudaSuccess)
        return cuda_fail(fn, e);
    if (!flag) return FLAMIA_OK;
    if (flag & FLAMIA_SM90_BAD_SPLIT_TILES)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: a backward found more (query tile, key tile) pairs in the device's cu_seqlens than "
                           "its shape allowed (shape.cu_seqlens_host or max_seqlen understates the documents): its "
                           "dQ is wrong; pass a host copy equal to the device's",
                           fn);
    static const struct {
        int bit;
        const char *name;
    } inputs[] = {{FLAMIA_SM90_BAD_Q, "Q"}, {FLAMIA_SM90_BAD_K, "K"}, {FLAMIA_SM90_BAD_V, "V"},
                  {FLAMIA_SM90_BAD_DOUT, "dO"}};
    char names[64] = "";
    int known = 0; /* the bits the table names */
    for (const auto &in : inputs) {
        known |= in.bit;
        if (flag & in.bit) {
            if (names[0]) strcat(names, ", ");
            strcat(names, in.name);
        }
    }
    if (flag & ~known) /* only a workspace no quantize call has filled holds bits no call sets */
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "%s: the workspace's record reads 0x%x, which no call writes: was it filled by "
                           "flamia_cuda_quantize or flamia_cuda_train_step?",
                           fn, (unsigned)flag);
    return flamia_fail(FLAMIA_ERR_INVALID,
                       "%s: non-finite (NaN or Inf) elements in %s: the outputs of the calls that read %s are "
                       "meaningless",
                       fn, names, strchr(names, ',') ? "them" : "it");
}

flamia_status flamia_cuda_debug_p_codes(const flamia_recipe *r, const flamia_shape *s, void *workspace,
                                        size_t workspace_bytes, const void *o, const float *lse, const void *dout,
                                        uint8_t *fwd_codes, uint8_t *bwd_codes, float *fwd_frames, void *stream) {
    static const char fn[] = "flamia_cuda_debug_p_codes";
    enum { kMaxTokens = 4096 }; /* [heads_q][T][T] bytes per output: 16 MiB a head at 4096 */
    flamia_sm90_problem P = {};
    flamia_status st;
    if ((st = prepare(fn, r, s, CALL_TRAINING, &P))) return st;
    if (P.kind == FLAMIA_SM90_BF16)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED,
                           "%s: recipe '%.*s' has no E4M3 P codes (debug P codes exist for mxfp8 and mxfp8-exact)",
                           fn, (int)sizeof r->name, r->name);
    if (P.total_tokens > kMaxTokens)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED,
                           "%s: total_tokens %d > %d: the debug P codes are [heads_q][T][T] arrays, for small "
                           "problems only",
                           fn, P.total_tokens, (int)kMaxTokens);
    if ((st = check_ptr(fn, "shape.cu_seqlens", s->cu_seqlens, 4)) ||
        (st = check_workspace(fn, &P, workspace, workspace_bytes)) || (st = check_ptr(fn, "o", o, 16)) ||
        (st = check_ptr(fn, "lse", lse, 16)) || (st = check_ptr(fn, "dout", dout, 16)) ||
        (st = check_ptr(fn, "fwd_codes", fwd_codes, 1)) || (st = check_ptr(fn, "bwd_codes", bwd_codes, 1)) ||
        (fwd_frames && (st = check_ptr(fn, "fwd_frames", fwd_frames, 4))) || (st = check_pending(fn)))
        return st;
    const cudaStream_t cs = (cudaStream_t)stream;
    cudaError_t e = flamia_sm90_forward_debug(&P, workspace, fwd_codes, fwd_frames, cs);
    if (e != cudaSuccess) return cuda_fail(fn, e);
    e = flamia_sm90_backward_debug(&P, workspace, (const uint16_t *)o, lse, (const uint16_t *)dout, bwd_codes, cs);
    if (e != cudaSuccess) return cuda_fail(fn, e);
    return FLAMIA_OK;
}

} // extern "C"

/* The default mode's split dQ limits (sm90_launch.h), each an integer setting read once from the
 * environment (else its default, never below `lo`) and settable by tests to cover every path in one
 * process:
 *   FLAMIA_SM90_DQ_SPLIT_CHUNKS    the most chunks (0: never, -1: no split in either mode, the
 *                                  reduce-adds or the turns), else FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS;
 *   FLAMIA_SM90_DQ_SPLIT_MIN_CTAS  the fewest CTAs an SM in each chunk's grid, else
 *                                  FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_PER_SM (grid order) or
 *                                  FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_ORDERED (longest first);
 *   FLAMIA_SM90_SPLIT_ORDER        0: the split in the grid's order, 1: longest first (GQA's floor and
 *                                  limit), else by the plan's path (flamia_sm90_dq_plan_for_call);
 *   FLAMIA_SM90_DQ_SPLIT_LONG_TILES   the longest document's 128-token tiles from which groups below
 *                                  FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP take the long documents' path, else
 *                                  the macro (a huge value: never);
 *   FLAMIA_SM90_DQ_SPLIT_LONG_CHUNKS  the most chunks on that path, else the macro;
 *   FLAMIA_SM90_DQ_ROOM_CHUNKS     the chunks the workspace layout grows dq_accum's room for (region
 *                                  dq_room; 0: no growth), else FLAMIA_SM90_DQ_ROOM_CHUNKS. Read
 *                                  by every call's prepare, so a workspace query and the calls agree;
 *   FLAMIA_SM90_DQ_ROOM_GROWTH     that growth's cap, 1 / n of the regions before dq_accum, else the
 *                                  macro (read the same way);
 *   FLAMIA_SM90_DQ_ROOM_ONE_GROWTH the cap of the growth tried first, for one chunk (0: not tried), else
 *                                  the macro (read the same way);
 *   FLAMIA_SM90_DOC_TILES          0: size the split dQ from max_seqlen even where the shape has a host
 *                                  copy of cu_seqlens (still checked), for measuring what that copy buys. */
struct EnvSetting {
    const char *name;
    int dflt, lo, value; /* value kUnread until read */
};
static const int kUnread = -1000;
static EnvSetting g_split_chunks = {"FLAMIA_SM90_DQ_SPLIT_CHUNKS", FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS, -1, kUnread};
static EnvSetting g_split_min_ctas = {"FLAMIA_SM90_DQ_SPLIT_MIN_CTAS", -1, -1, kUnread}; /* -1: the order's floor */
static EnvSetting g_split_order = {"FLAMIA_SM90_SPLIT_ORDER", -1, -1, kUnread};      /* -1: by the group */
static EnvSetting g_room_chunks = {"FLAMIA_SM90_DQ_ROOM_CHUNKS", FLAMIA_SM90_DQ_ROOM_CHUNKS, 0, kUnread};
static EnvSetting g_doc_tiles = {"FLAMIA_SM90_DOC_TILES", 1, 0, kUnread};
static EnvSetting g_room_growth = {"FLAMIA_SM90_DQ_ROOM_GROWTH", FLAMIA_SM90_DQ_ROOM_GROWTH, 1, kUnread};
static EnvSetting g_room_one_growth = {"FLAMIA_SM90_DQ_ROOM_ONE_GROWTH", FLAMIA_SM90_DQ_ROOM_ONE_GROWTH, 0, kUnread};
static EnvSetting g_split_long_tiles = {"FLAMIA_SM90_DQ_SPLIT_LONG_TILES", FLAMIA_SM90_DQ_SPLIT_LONG_TILES, 1, kUnread};
static EnvSetting g_split_long_chunks = {"FLAMIA_SM90_DQ_SPLIT_LONG_CHUNKS", FLAMIA_SM90_DQ_SPLIT_LONG_CHUNKS, 0, kUnread};
static int env_setting(EnvSetting *s) {
    int v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
    if (v == kUnread) {
        const char *e = getenv(s->name);
        v = e && *e ? atoi(e) : s->dflt;
        if (v < s->lo) v = s->lo;
        __atomic_store_n(&s->value, v, __ATOMIC_RELAXED);
    }
    return v;
}
static void set_env_setting(EnvSetting *s, int n) { __atomic_store_n(&s->value, n < s->lo ? s->lo : n, __ATOMIC_RELAXED); }
extern "C" int flamia_sm90_dq_split_max_chunks(void) { return env_setting(&g_split_chunks); }
extern "C" void flamia_sm90_set_dq_split_max_chunks(int n) { set_env_setting(&g_split_chunks, n); }
extern "C" int flamia_sm90_dq_split_min_ctas(int path) {
    const int v = env_setting(&g_split_min_ctas);
    return v >= 0                                  ? v
           : path == FLAMIA_SM90_SPLIT_LONG_ORDERED ? FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_LONG
           : path == FLAMIA_SM90_SPLIT_GQA_ORDERED  ? FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_ORDERED
                                                    : FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_PER_SM;
}
extern "C" void flamia_sm90_set_dq_split_min_ctas(int n) { set_env_setting(&g_split_min_ctas, n); }
extern "C" int flamia_sm90_dq_room_chunks(void) { return env_setting(&g_room_chunks); }
extern "C" int flamia_sm90_dq_room_growth(void) { return env_setting(&g_room_growth); }
extern "C" int flamia_sm90_dq_room_one_growth(void) { return env_setting(&g_room_one_growth); }
static int host_doc_tiles() { return env_setting(&g_doc_tiles) != 0; }
extern "C" flamia_status flamia_sm90_layout_for_call(const flamia_recipe *r, const flamia_shape *s,
                                                      struct flamia_sm90_layout *layout) {
    static const char fn[] = "flamia_sm90_layout_for_call";
    if (!layout) return flamia_fail(FLAMIA_ERR_INVALID, "%s: layout is NULL", fn);
    flamia_sm90_problem P = {};
    flamia_status st = prepare(fn, r, s, CALL_LAYOUT, &P); /* one layout for every call */
    if (st) return st;
    *layout = flamia_sm90_layout_of(&P);
    return FLAMIA_OK;
}
extern "C" struct flamia_sm90_dq_plan flamia_sm90_dq_plan_for_call(const struct flamia_sm90_problem *P,
                                                                   size_t workspace_bytes) {
    /* the grid's order and GQA's longest first up to `limit` chunks, long documents' longest first up to
     * `long_limit` */
    const int limit = flamia_sm90_dq_split_max_chunks(), more = env_setting(&g_split_long_chunks),
              long_limit = limit > 0 && limit < more ? more : limit;
    struct flamia_sm90_dq_plan pl = flamia_sm90_dq_plan_of(P, workspace_bytes, long_limit, P->heads_kv);
    if (!pl.heads) return pl;
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        sms = 132;
    }
    const long long grid = flamia_sm90_dq_chunk_grid(P, pl.heads); /* the smallest chunk's */
    const int chunks = flamia_sm90_dq_chunks(P, pl.heads), order = env_setting(&g_split_order);
    /* the longest CTA's query tiles (a document's first key tile), and the smallest chunk's tile pairs */
    const long long longest = (P->max_seqlen + FLAMIA_SM90_TILE_TOKENS - 1) / FLAMIA_SM90_TILE_TOKENS,
                    work = (long long)(P->heads_kv / chunks) * flamia_sm90_layout_of(P).ds_tiles_kv;
    int path;
    if (order >= 0) path = order == 1 ? FLAMIA_SM90_SPLIT_GQA_ORDERED : FLAMIA_SM90_SPLIT_GRID_ORDER;
    else if (grid >= (long long)FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_PER_SM * sms && chunks <= limit)
        path = FLAMIA_SM90_SPLIT_GRID_ORDER;
    else if (P->heads_q / P->heads_kv >= FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP) path = FLAMIA_SM90_SPLIT_GQA_ORDERED;
    else if (longest >= env_setting(&g_split_long_tiles) && work >= longest * sms) path = FLAMIA_SM90_SPLIT_LONG_ORDERED;
    else path = FLAMIA_SM90_SPLIT_GRID_ORDER; /* below its floor: the default mode's reduce-adds */
    pl.ordered = path != FLAMIA_SM90_SPLIT_GRID_ORDER;
    /* the default mode: every chunk's grid past the floor of its path, and no more chunks than its limit */
    if (!P->deterministic && (grid < (long long)flamia_sm90_dq_split_min_ctas(path) * sms ||
                              chunks > (path == FLAMIA_SM90_SPLIT_LONG_ORDERED ? long_limit : limit)))
        pl.heads = pl.ordered = 0;
    return pl;
}
