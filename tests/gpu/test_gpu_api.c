/*
 * test_gpu_api.c - the CUDA entry points refuse bad input with a clear status
 * and message, write nothing when they refuse, can be captured in a CUDA
 * graph (the replay reproduces the eager call bit for bit), and work from a
 * thread that never touched CUDA (a framework's backward thread).
 */
#include <pthread.h>

#include "gpu_common.h"

/* The call must return `want` and leave a message naming `needle`. */
#define EXPECT_STATUS(call, want, needle)                                                                   \
    do {                                                                                                    \
        flamia_status got_ = (call);                                                                        \
        const char *msg_ = flamia_last_error();                                                             \
        EXPECT(got_ == (want), "%s -> %s (want %s): %s", #call, flamia_status_string(got_),                 \
               flamia_status_string(want), msg_);                                                           \
        EXPECT(msg_ && strstr(msg_, (needle)), "%s: message '%s' does not mention '%s'", #call, msg_, needle); \
        printf("  %-22s %-12s %s\n", flamia_status_string(got_), needle, msg_);                              \
    } while (0)
#define EXPECT_STATUS_OK(call, what)                                                                        \
    do {                                                                                                    \
        flamia_status got_ = (call);                                                                        \
        EXPECT(got_ == FLAMIA_OK, "%s (%s) -> %s: %s", #call, what, flamia_status_string(got_),             \
               flamia_last_error());                                                                        \
        printf("  %-22s %-12s\n", flamia_status_string(got_), what);                                        \
    } while (0)

/* A training call's outputs poisoned before it runs, and read back after it as one host
 * block: O, lse, dK, dV (bit-comparable: `fixed` bytes), then dQ (its reduce-add order varies) */
static void poison_outputs(uint16_t *o, uint16_t *dq, uint16_t *dk, uint16_t *dv, size_t nq, size_t nk) {
    CK(cudaMemset(o, 0xFF, nq * 2));
    CK(cudaMemset(dq, 0xFF, nq * 2));
    CK(cudaMemset(dk, 0xFF, nk * 2));
    CK(cudaMemset(dv, 0xFF, nk * 2));
}
static void fetch_outputs(uint8_t *p, const uint16_t *o, const float *lse, const uint16_t *dk, const uint16_t *dv,
                          const uint16_t *dq, size_t nq, size_t nk, size_t nl) {
    CK(cudaMemcpy(p, o, nq * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p + nq * 2, lse, nl * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p + nq * 2 + nl * 4, dk, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p + nq * 2 + nl * 4 + nk * 2, dv, nk * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(p + nq * 2 + nl * 4 + nk * 4, dq, nq * 2, cudaMemcpyDeviceToHost));
}

/* The training call under CUDA graph capture: replayed 3x, O, lse, dK and dV equal the
 * eager call's bit for bit (their sums have a fixed order); dQ is reduce-added across key
 * tiles by FP32 reduce-adds in whatever order the CTAs finish (the non-deterministic mode,
 * docs/cuda-api.md), so it may differ by a BF16 rounding step: rel. L2 <= 2^-8. The same
 * bounds hold against the three separate calls (quantize, forward, backward) on the same
 * inputs: the training call zeroes the dQ accumulator in its forward, the separate backward
 * in its own preprocessing, and a row either misses (the workspace is poisoned with
 * 0xCD bytes, -4.3e8 as FP32) would be off by far more. */
static void train_step_capture(const char *preset, const flamia_recipe *rec, const flamia_shape *sh,
                               const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *dout,
                               uint16_t *o, float *lse, uint16_t *dq, uint16_t *dk, uint16_t *dv, void *ws,
                               size_t wsb, size_t nq, size_t nk, cudaStream_t st) {
    const size_t nl = (size_t)sh->total_tokens * sh->heads_q;
    const size_t bytes = nq * 2 + nl * 4 + nq * 2 + nk * 2 * 2;
    uint8_t *eager = xmalloc(bytes), *replay = xmalloc(bytes), *separate = xmalloc(bytes);
    uint8_t *res[3] = {eager, replay, separate};
    for (int pass = 0; pass < 3; pass++) {
        poison_outputs(o, dq, dk, dv, nq, nk);
        CK(cudaMemset(ws, 0xCD, wsb));
        flamia_status s;
        if (pass == 0) {
            s = flamia_cuda_train_step(rec, sh, q, k, v, dout, o, lse, dq, dk, dv, ws, wsb, st);
        } else if (pass == 2) {
            s = flamia_cuda_quantize(rec, sh, q, k, v, ws, wsb, st);
            if (s == FLAMIA_OK) s = flamia_cuda_forward(rec, sh, ws, wsb, o, lse, st);
            if (s == FLAMIA_OK) s = flamia_cuda_backward(rec, sh, ws, wsb, o, lse, dout, dq, dk, dv, st);
        } else {
            cudaGraph_t graph;
            cudaGraphExec_t exec;
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
            s = flamia_cuda_train_step(rec, sh, q, k, v, dout, o, lse, dq, dk, dv, ws, wsb, st);
            CK(cudaStreamEndCapture(st, &graph));
            if (s == FLAMIA_OK) {
                CK(cudaGraphInstantiate(&exec, graph, 0));
                for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(exec, st));
                CK(cudaGraphExecDestroy(exec));
            }
            CK(cudaGraphDestroy(graph));
        }
        EXPECT(s == FLAMIA_OK, "%s: train_step (%s) -> %s: %s", preset,
               pass == 0 ? "eager" : pass == 1 ? "captured" : "as quantize, forward, backward", flamia_status_string(s),
               flamia_last_error());
        CK(cudaStreamSynchronize(st));
        fetch_outputs(res[pass], o, lse, dk, dv, dq, nq, nk, nl);
    }
    const size_t fixed = nq * 2 + nl * 4 + nk * 4;
    const int same = !memcmp(eager, replay, fixed);
    const bf16_diff dqd = bf16_compare((const uint16_t *)(eager + fixed), (const uint16_t *)(replay + fixed), nq);
    EXPECT(same, "%s: captured train_step: O / lse / dK / dV differ from the eager call", preset);
    EXPECT(dqd.nonfinite == 0 && dqd.rel <= 1.0 / 256,
           "%s: captured train_step: dQ %ld non-finite, rel. L2 vs eager %.2e", preset, dqd.nonfinite, dqd.rel);
    printf("graph capture %-11s: train_step replayed 3x, O/lse/dK/dV %s the eager call's, dQ rel. L2 %.1e\n", preset,
           same ? "bit-identical to" : "DIFFER from", dqd.rel);
    const int same3 = !memcmp(eager, separate, fixed);
    const bf16_diff dq3 = bf16_compare((const uint16_t *)(eager + fixed), (const uint16_t *)(separate + fixed), nq);
    EXPECT(same3, "%s: train_step: O / lse / dK / dV differ from quantize, forward, backward called apart", preset);
    EXPECT(dq3.nonfinite == 0 && dq3.rel <= 1.0 / 256,
           "%s: train_step: dQ %ld non-finite, rel. L2 vs the separate calls %.2e", preset, dq3.nonfinite, dq3.rel);
    printf("train_step    %-11s: O/lse/dK/dV %s quantize + forward + backward called apart, dQ rel. L2 %.1e\n",
           preset, same3 ? "bit-identical to" : "DIFFER from", dq3.rel);
    free(eager);
    free(replay);
    free(separate);
}

/* One training call's arguments and answer, for a thread of its own. */
typedef struct {
    const flamia_recipe *rec;
    const flamia_shape *sh;
    const uint16_t *q, *k, *v, *dout;
    uint16_t *o, *dq, *dk, *dv;
    float *lse;
    void *ws;
    size_t wsb;
    cudaStream_t st;
    flamia_status status;
    char msg[512];
} train_call;

static void *train_step_thread(void *arg) {
    train_call *c = arg;
    c->status = flamia_cuda_train_step(c->rec, c->sh, c->q, c->k, c->v, c->dout, c->o, c->lse, c->dq, c->dk, c->dv,
                                       c->ws, c->wsb, c->st);
    snprintf(c->msg, sizeof c->msg, "%s", c->status == FLAMIA_OK ? "" : flamia_last_error());
    return NULL;
}

/* The training call from a new thread that has made no CUDA call (no context current
 * there: PyTorch runs a custom Function's backward on such a thread), with memory and a
 * stream the main thread made: it must accept the device pointers and give O / lse / dK /
 * dV bit-identical to the same call on the main thread (dQ within the atomics' order,
 * rel. L2 <= 2^-8). Before the library bound a context there, it refused cu_seqlens as
 * host memory (eighteenth session, examples/torch_attention.py on the H200). */
static void train_step_other_thread(train_call c, size_t nq, size_t nk) {
    const size_t nl = (size_t)c.sh->total_tokens * c.sh->heads_q, fixed = nq * 2 + nl * 4 + nk * 4;
    uint8_t *res[2] = {xmalloc(fixed + nq * 2), xmalloc(fixed + nq * 2)};
    for (int pass = 0; pass < 2; pass++) {
        poison_outputs(c.o, c.dq, c.dk, c.dv, nq, nk);
        CK(cudaDeviceSynchronize());
        if (pass == 0) {
            train_step_thread(&c);
        } else {
            pthread_t t;
            EXPECT(pthread_create(&t, NULL, train_step_thread, &c) == 0, "pthread_create failed");
            pthread_join(t, NULL);
        }
        EXPECT(c.status == FLAMIA_OK, "train_step from %s -> %s: %s", pass ? "a new thread" : "the main thread",
               flamia_status_string(c.status), c.msg);
        CK(cudaStreamSynchronize(c.st));
        fetch_outputs(res[pass], c.o, c.lse, c.dk, c.dv, c.dq, nq, nk, nl);
    }
    const int same = !memcmp(res[0], res[1], fixed);
    const bf16_diff d = bf16_compare((const uint16_t *)(res[0] + fixed), (const uint16_t *)(res[1] + fixed), nq);
    EXPECT(same, "train_step from a new thread: O / lse / dK / dV differ from the main thread's call");
    EXPECT(d.nonfinite == 0 && d.rel <= 1.0 / 256, "train_step from a new thread: dQ %ld non-finite, rel. L2 %.2e",
           d.nonfinite, d.rel);
    printf("new thread    %-11s: train_step %s, O/lse/dK/dV %s the main thread's, dQ rel. L2 %.1e\n", c.rec->name,
           c.status == FLAMIA_OK ? "accepted" : "REFUSED", same ? "bit-identical to" : "DIFFER from", d.rel);
    free(res[0]);
    free(res[1]);
}

/* Training calls on two input sets, enqueued back to back on one stream with one workspace
 * (A, B, A, B) and no synchronization, must each give what the same call gives alone after
 * a synchronization (O / lse / dK / dV bit for bit, dQ within the reduce-adds' order): no
 * kernel of a call may depend on a workspace region the call before it left (the forward's
 * counters, dq_accum, the transposed codes), nor race with that call's last kernels. The
 * thirtieth session's programmatic dependent launch (dev/pdl_v1.patch) was checked with it. */
static void train_step_back_to_back(train_call a, const uint16_t *q2, const uint16_t *dout2, size_t nq, size_t nk) {
    const size_t nl = (size_t)a.sh->total_tokens * a.sh->heads_q, fixed = nq * 2 + nl * 4 + nk * 4;
    train_call b = a;
    b.q = q2;
    b.dout = dout2;
    b.o = dmalloc(nq * 2);
    b.dq = dmalloc(nq * 2);
    b.dk = dmalloc(nk * 2);
    b.dv = dmalloc(nk * 2);
    b.lse = dmalloc(nl * 4);
    train_call *calls[2] = {&a, &b};
    uint8_t *alone[2] = {xmalloc(fixed + nq * 2), xmalloc(fixed + nq * 2)};
    uint8_t *chained[2] = {xmalloc(fixed + nq * 2), xmalloc(fixed + nq * 2)};
    for (int i = 0; i < 2; i++) {
        train_call *c = calls[i];
        poison_outputs(c->o, c->dq, c->dk, c->dv, nq, nk);
        CK(cudaMemset(c->ws, 0xCD, c->wsb));
        train_step_thread(c);
        EXPECT(c->status == FLAMIA_OK, "train_step (input set %d) -> %s: %s", i, flamia_status_string(c->status),
               c->msg);
        CK(cudaStreamSynchronize(c->st));
        fetch_outputs(alone[i], c->o, c->lse, c->dk, c->dv, c->dq, nq, nk, nl);
        poison_outputs(c->o, c->dq, c->dk, c->dv, nq, nk);
    }
    CK(cudaMemset(a.ws, 0xCD, a.wsb));
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < 4; i++) {
        train_call *c = calls[i & 1];
        train_step_thread(c);
        EXPECT(c->status == FLAMIA_OK, "back-to-back train_step %d -> %s: %s", i, flamia_status_string(c->status),
               c->msg);
    }
    CK(cudaStreamSynchronize(a.st));
    int same = 1;
    double worst = 0;
    long nonfinite = 0;
    for (int i = 0; i < 2; i++) {
        train_call *c = calls[i];
        fetch_outputs(chained[i], c->o, c->lse, c->dk, c->dv, c->dq, nq, nk, nl);
        same &= !memcmp(alone[i], chained[i], fixed);
        const bf16_diff d = bf16_compare((const uint16_t *)(alone[i] + fixed), (const uint16_t *)(chained[i] + fixed), nq);
        nonfinite += d.nonfinite;
        worst = d.rel > worst ? d.rel : worst;
        free(alone[i]);
        free(chained[i]);
    }
    EXPECT(same, "%s: back-to-back train_step calls: O / lse / dK / dV differ from the same calls alone", a.rec->name);
    EXPECT(nonfinite == 0 && worst <= 1.0 / 256, "%s: back-to-back train_step calls: dQ %ld non-finite, rel. L2 %.2e",
           a.rec->name, nonfinite, worst);
    printf("back to back  %-11s: 4 train_step calls on 2 input sets, O/lse/dK/dV %s the calls alone, dQ rel. L2 "
           "%.1e\n",
           a.rec->name, same ? "bit-identical to" : "DIFFER from", worst);
    CK(cudaFree(b.o));
    CK(cudaFree(b.dq));
    CK(cudaFree(b.dk));
    CK(cudaFree(b.dv));
    CK(cudaFree(b.lse));
}

int main(void) {
    gpu_skip_if_unavailable("test_gpu_api");
    rng_t r = {gpu_seed("test_gpu_api")};
    int lens[] = {1, 300, 77, 129, 500};
    int32_t cu[6];
    const int nd = 5, T = cu_from_lens(lens, nd, cu), Hq = 4, Hkv = 2, D = 128;
    size_t nq = (size_t)T * Hq * D, nk = (size_t)T * Hkv * D;
    int32_t *dcu = dmalloc(sizeof cu);
    CK(cudaMemcpy(dcu, cu, sizeof cu, cudaMemcpyHostToDevice));
    flamia_recipe rec;
    FL(flamia_recipe_preset("mxfp8", &rec));
    flamia_shape sh = {T, nd, dcu, Hq, Hkv, D, 1, 0.0f, max_len(cu, nd), NULL};
    size_t wsb = 0, wsb_bf16 = 0;
    FL(flamia_cuda_workspace_size(&rec, &sh, &wsb));
    flamia_recipe bf;
    FL(flamia_recipe_preset("bf16", &bf));
    FL(flamia_cuda_workspace_size(&bf, &sh, &wsb_bf16)); /* the largest: the graph tests below run bf16 too */
    EXPECT(wsb_bf16 > wsb, "bf16 workspace %zu not above mxfp8's %zu (the FP8 kinds need no BF16 operands)",
           wsb_bf16, wsb);
    uint8_t *ws = dmalloc(wsb_bf16);
    uint16_t *dq = dmalloc(nq * 2 + 64), *dk = dmalloc(nk * 2 + 64), *dv = dmalloc(nk * 2 + 64);
    uint16_t *dO = dmalloc(nq * 2 + 64), *ddo = dmalloc(nq * 2), *ddq = dmalloc(nq * 2);
    uint16_t *ddk = dmalloc(nk * 2), *ddv = dmalloc(nk * 2);
    float *dlse = dmalloc((size_t)T * Hq * 4 + 64);
    float *scratch = xmalloc(nq * 4);
    uint16_t *h = xmalloc(nq * 2);
    fill_bf16(&r, scratch, h, nq, 1.0);
    CK(cudaMemcpy(dq, h, nq * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk, h, nk * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, h + nk, nk * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ddo, h, nq * 2, cudaMemcpyHostToDevice));
    fill_bf16(&r, scratch, h, nq, 1.0); /* a second input set (Q, dO) for the back-to-back calls */
    uint16_t *q2 = dupload(h, nq * 2);
    fill_bf16(&r, scratch, h, nq, 1.0);
    uint16_t *dout2 = dupload(h, nq * 2);

    printf("refusals (status, key word, message):\n");
    /* ---- recipes */
    flamia_recipe bad;
    const char *unsupported[] = {"nvfp4", "fp8-tensor", "mx-floor"};
    for (int i = 0; i < 3; i++) {
        FL(flamia_recipe_preset(unsupported[i], &bad));
        EXPECT_STATUS(flamia_cuda_workspace_size(&bad, &sh, &wsb), FLAMIA_ERR_UNSUPPORTED, unsupported[i]);
        EXPECT_STATUS(flamia_cuda_quantize(&bad, &sh, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_UNSUPPORTED,
                      "not implemented on the GPU");
    }
    bad = rec;
    bad.exp_mode = FLAMIA_EXP2_SCHRAUDOLPH;
    EXPECT_STATUS(flamia_cuda_forward(&bad, &sh, ws, wsb, dO, dlse, NULL), FLAMIA_ERR_UNSUPPORTED, "mxfp8");
    EXPECT_STATUS(flamia_cuda_train_step(&bad, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL),
                  FLAMIA_ERR_INVALID, "inference-only");
    bad = rec;
    bad.tile_q = 64;
    EXPECT_STATUS(flamia_cuda_quantize(&bad, &sh, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_UNSUPPORTED, "preset");
    bad = rec;
    bad.hadamard = 2;
    EXPECT_STATUS(flamia_cuda_quantize(&bad, &sh, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "hadamard");
    EXPECT_STATUS(flamia_cuda_quantize(NULL, &sh, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "recipe");

    /* ---- shapes */
    flamia_shape s2 = sh;
    s2.head_dim = 96;
    EXPECT_STATUS(flamia_cuda_workspace_size(&rec, &s2, &wsb), FLAMIA_ERR_UNSUPPORTED, "head_dim");
    s2 = sh;
    s2.heads_q = 3;
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &s2, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "heads");
    s2 = sh;
    s2.max_seqlen = 0;
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &s2, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "max_seqlen");
    s2.max_seqlen = 10; /* 5 documents of <= 10 tokens cannot hold T */
    EXPECT_STATUS(flamia_cuda_forward(&rec, &s2, ws, wsb, dO, dlse, NULL), FLAMIA_ERR_INVALID, "max_seqlen");
    s2 = sh;
    s2.cu_seqlens = cu; /* a host pointer */
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &s2, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "cu_seqlens");
    s2.cu_seqlens = NULL;
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &s2, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "cu_seqlens");
    EXPECT_STATUS(flamia_cuda_quantize(&rec, NULL, dq, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "shape");
    s2 = sh;
    s2.softmax_scale = -1.0f;
    EXPECT_STATUS(flamia_cuda_forward(&rec, &s2, ws, wsb, dO, dlse, NULL), FLAMIA_ERR_INVALID, "softmax_scale");

    /* ---- pointers and workspace */
    size_t none = 0;
    EXPECT_STATUS(flamia_cuda_workspace_size(&rec, &sh, NULL), FLAMIA_ERR_INVALID, "bytes");
    (void)none;
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &sh, NULL, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "q is NULL");
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &sh, dq + 1, dk, dv, ws, wsb, NULL), FLAMIA_ERR_INVALID, "aligned");
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &sh, dq, dk, h, ws, wsb, NULL), FLAMIA_ERR_INVALID, "host memory");
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, wsb - 1, NULL), FLAMIA_ERR_INVALID,
                  "too small");
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, NULL, wsb, NULL), FLAMIA_ERR_INVALID, "workspace");
    EXPECT_STATUS(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws + 16, wsb, NULL), FLAMIA_ERR_INVALID, "aligned");

    /* ---- refusals write nothing */
    CK(cudaMemset(dO, 0x5A, nq * 2));
    CK(cudaMemset(dlse, 0x5A, (size_t)T * Hq * 4));
    EXPECT_STATUS(flamia_cuda_forward(&rec, &sh, ws, wsb, dO + 3, dlse, NULL), FLAMIA_ERR_INVALID, "aligned");
    EXPECT_STATUS(flamia_cuda_forward(&rec, &sh, ws, wsb, dO, NULL, NULL), FLAMIA_ERR_INVALID, "lse");
    EXPECT_STATUS(flamia_cuda_forward(&rec, &sh, ws, wsb / 2, dO, dlse, NULL), FLAMIA_ERR_INVALID, "too small");
    EXPECT_STATUS(flamia_cuda_backward(&rec, &sh, ws, wsb, dO, dlse, ddo, ddq + 1, ddk, ddv, NULL),
                  FLAMIA_ERR_INVALID, "aligned");
    EXPECT_STATUS(flamia_cuda_backward(&rec, &sh, ws, wsb, dO, dlse, NULL, ddq, ddk, ddv, NULL), FLAMIA_ERR_INVALID,
                  "dout");
    EXPECT_STATUS(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb - 1, NULL),
                  FLAMIA_ERR_INVALID, "too small");
    EXPECT_STATUS(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, NULL, ddv, ws, wsb, NULL),
                  FLAMIA_ERR_INVALID, "dk");
    s2 = sh;
    s2.head_dim = 64; /* quantize takes it, the forward and backward do not: refused before anything runs */
    EXPECT_STATUS(flamia_cuda_forward(&rec, &s2, ws, wsb, dO, dlse, NULL), FLAMIA_ERR_UNSUPPORTED, "head_dim");
    EXPECT_STATUS(flamia_cuda_train_step(&rec, &s2, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL),
                  FLAMIA_ERR_UNSUPPORTED, "head_dim");
    EXPECT_STATUS(flamia_cuda_backward(&rec, &s2, ws, wsb, dO, dlse, ddo, ddq, ddk, ddv, NULL), FLAMIA_ERR_UNSUPPORTED,
                  "head_dim");
    { /* the optional host copy of cu_seqlens, checked like a CPU call's and against max_seqlen */
        int32_t bad_cu[6];
        memcpy(bad_cu, cu, sizeof cu);
        s2 = sh;
        s2.cu_seqlens_host = bad_cu;
        bad_cu[2] = bad_cu[1]; /* an empty document */
        EXPECT_STATUS(flamia_cuda_forward(&rec, &s2, ws, wsb, dO, dlse, NULL), FLAMIA_ERR_INVALID, "cu_seqlens_host");
        memcpy(bad_cu, cu, sizeof cu);
        bad_cu[nd] = T - 1;
        EXPECT_STATUS(flamia_cuda_train_step(&rec, &s2, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL),
                      FLAMIA_ERR_INVALID, "total_tokens");
        s2.cu_seqlens_host = cu;
        s2.max_seqlen = max_len(cu, nd) - 1; /* shorter than the longest document the copy shows */
        EXPECT_STATUS(flamia_cuda_backward(&rec, &s2, ws, wsb, dO, dlse, ddo, ddq, ddk, ddv, NULL), FLAMIA_ERR_INVALID,
                      "max_seqlen");
        EXPECT_STATUS(flamia_cuda_workspace_size(&rec, &s2, &none), FLAMIA_ERR_INVALID, "max_seqlen");
    }
    CK(cudaDeviceSynchronize());
    {
        uint8_t *chk = xmalloc(nq * 2);
        CK(cudaMemcpy(chk, dO, nq * 2, cudaMemcpyDeviceToHost));
        long touched = 0;
        for (size_t i = 0; i < nq * 2; i++) touched += chk[i] != 0x5A;
        CK(cudaMemcpy(chk, dlse, (size_t)T * Hq * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < (size_t)T * Hq * 4; i++) touched += chk[i] != 0x5A;
        EXPECT(touched == 0, "refused calls wrote %ld bytes of O / lse", touched);
        free(chk);
    }

    /* ---- the non-finite record (flamia_cuda_check_finite): its own refusals, then each input
     * tensor named when it holds a NaN or Inf, the record cleared by the next quantize, bf16
     * never recording, and a capturing stream refused */
    FL(flamia_recipe_preset("mxfp8", &rec));
    EXPECT_STATUS(flamia_cuda_check_finite(NULL, wsb, NULL), FLAMIA_ERR_INVALID, "workspace is NULL");
    EXPECT_STATUS(flamia_cuda_check_finite(ws, 0, NULL), FLAMIA_ERR_INVALID, "workspace_bytes");
    static _Alignas(256) unsigned char host_ws[256]; /* aligned, so that what is refused is its kind */
    EXPECT_STATUS(flamia_cuda_check_finite(host_ws, sizeof host_ws, NULL), FLAMIA_ERR_INVALID, "host memory");
    EXPECT_STATUS(flamia_cuda_check_finite(ws + 16, wsb, NULL), FLAMIA_ERR_INVALID, "aligned");
    {
        const uint16_t nan_bits = 0x7fc0, inf_bits = 0xff80; /* BF16 NaN, -Inf */
        uint16_t keep;
        FL(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL));
        EXPECT_STATUS_OK(flamia_cuda_check_finite(ws, wsb, NULL), "finite inputs");
        /* one bad element in dO (read by the backward), then one in K too (read by quantize) */
        const size_t at_do = (size_t)rng_int(&r, 0, (int)nq - 1), at_k = (size_t)rng_int(&r, 0, (int)nk - 1);
        CK(cudaMemcpy(&keep, ddo + at_do, 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(ddo + at_do, &nan_bits, 2, cudaMemcpyHostToDevice));
        FL(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL));
        EXPECT_STATUS(flamia_cuda_check_finite(ws, wsb, NULL), FLAMIA_ERR_INVALID, "elements in dO:");
        uint16_t keep_k;
        CK(cudaMemcpy(&keep_k, dk + at_k, 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(dk + at_k, &inf_bits, 2, cudaMemcpyHostToDevice));
        FL(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL));
        EXPECT_STATUS(flamia_cuda_check_finite(ws, wsb, NULL), FLAMIA_ERR_INVALID, "elements in K, dO:");
        /* quantize alone clears the record and sets K's */
        FL(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, wsb, NULL));
        EXPECT_STATUS(flamia_cuda_check_finite(ws, wsb, NULL), FLAMIA_ERR_INVALID, "elements in K:");
        /* bf16 never records */
        FL(flamia_cuda_quantize(&bf, &sh, dq, dk, dv, ws, wsb_bf16, NULL));
        EXPECT_STATUS_OK(flamia_cuda_check_finite(ws, wsb_bf16, NULL), "bf16, an Inf in K");
        CK(cudaMemcpy(dk + at_k, &keep_k, 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(ddo + at_do, &keep, 2, cudaMemcpyHostToDevice));
        FL(flamia_cuda_train_step(&rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, NULL));
        EXPECT_STATUS_OK(flamia_cuda_check_finite(ws, wsb, NULL), "inputs restored");
        /* a capturing stream: refused, and the capture goes on undisturbed */
        cudaStream_t st;
        cudaGraph_t graph;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        flamia_status cs = flamia_cuda_check_finite(ws, wsb, st);
        const char *cmsg = flamia_last_error();
        EXPECT(cs == FLAMIA_ERR_INVALID && strstr(cmsg, "capturing"), "check_finite under capture -> %s: %s",
               flamia_status_string(cs), cmsg);
        printf("  %-22s %-12s %s\n", flamia_status_string(cs), "capturing", cmsg);
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphDestroy(graph));
        CK(cudaStreamDestroy(st));
    }

    /* ---- CUDA graph capture. (1) quantize alone: the replayed workspace equals the
     * eager one byte for byte; (2) quantize + forward: the replayed O equals the eager O. */
    for (int pass = 0; pass < 3; pass++) {
        const char *preset = pass == 0 ? "mxfp8" : pass == 1 ? "mxfp8-exact" : "bf16";
        FL(flamia_recipe_preset(preset, &rec));
        rec.hadamard = pass == 1;
        FL(flamia_cuda_workspace_size(&rec, &sh, &wsb));
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        uint8_t *w_eager = xmalloc(wsb), *w_replay = xmalloc(wsb);
        CK(cudaMemset(ws, 0xCD, wsb));
        FL(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, wsb, st));
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(w_eager, ws, wsb, cudaMemcpyDeviceToHost));
        CK(cudaMemset(ws, 0xCD, wsb));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        flamia_status s1 = flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, wsb, st);
        CK(cudaStreamEndCapture(st, &graph));
        EXPECT(s1 == FLAMIA_OK, "%s: quantize under capture -> %s: %s", preset, flamia_status_string(s1),
               flamia_last_error());
        CK(cudaGraphInstantiate(&exec, graph, 0));
        for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(exec, st));
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(w_replay, ws, wsb, cudaMemcpyDeviceToHost));
        int same = !memcmp(w_eager, w_replay, wsb);
        EXPECT(same, "%s: graph replay of quantize leaves a different workspace", preset);
        printf("graph capture %-11s: quantize replayed 3x, workspace %s the eager call's\n", preset,
               same ? "bit-identical to" : "DIFFERS from");
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(graph));
        free(w_eager);
        free(w_replay);

        CK(cudaMemset(dO, 0xFF, nq * 2));
        FL(flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, wsb, st));
        flamia_status fs = flamia_cuda_forward(&rec, &sh, ws, wsb, dO, dlse, st);
        if (fs != FLAMIA_OK) {
            fprintf(stderr, "FAIL: eager flamia_cuda_forward -> %s: %s\n", flamia_status_string(fs),
                    flamia_last_error());
            return 1;
        }
        CK(cudaStreamSynchronize(st));
        uint16_t *eager = xmalloc(nq * 2), *replay = xmalloc(nq * 2);
        CK(cudaMemcpy(eager, dO, nq * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemset(dO, 0xFF, nq * 2));
        CK(cudaMemset(ws, 0xCD, wsb));
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        s1 = flamia_cuda_quantize(&rec, &sh, dq, dk, dv, ws, wsb, st);
        flamia_status s2s = flamia_cuda_forward(&rec, &sh, ws, wsb, dO, dlse, st);
        CK(cudaStreamEndCapture(st, &graph));
        EXPECT(s1 == FLAMIA_OK && s2s == FLAMIA_OK, "%s: calls under capture -> %s / %s: %s", preset,
               flamia_status_string(s1), flamia_status_string(s2s), flamia_last_error());
        CK(cudaGraphInstantiate(&exec, graph, 0));
        for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(exec, st));
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(replay, dO, nq * 2, cudaMemcpyDeviceToHost));
        same = !memcmp(eager, replay, nq * 2);
        EXPECT(same, "%s: graph replay differs from the eager call", preset);
        printf("graph capture %-11s: quantize + forward replayed 3x, output %s the eager call's\n", preset,
               same ? "bit-identical to" : "DIFFERS from");
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(graph));
        free(eager);
        free(replay);
        train_step_capture(preset, &rec, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, nq, nk, st);
        if (pass == 0) { /* the row-sum rule of P's values: the training call's own forward instantiation */
            flamia_recipe lp = rec;
            lp.row_sum = FLAMIA_ROWSUM_P_VALUES;
            train_step_capture("mxfp8 l=P", &lp, &sh, dq, dk, dv, ddo, dO, dlse, ddq, ddk, ddv, ws, wsb, nq, nk, st);
        }
        const train_call c = {&rec, &sh, dq, dk, dv, ddo, dO, ddq, ddk, ddv, dlse, ws, wsb, st, FLAMIA_OK, ""};
        if (pass == 0) train_step_other_thread(c, nq, nk);
        /* the FP8 kinds; not under compute-sanitizer (FLAMIA_TEST_SMALL), whose racecheck it
         * slowed by 44 s and which sees no cross-call hazard */
        if (pass < 2 && !getenv("FLAMIA_TEST_SMALL")) train_step_back_to_back(c, q2, dout2, nq, nk);
        CK(cudaStreamDestroy(st));
    }
    if (failures) {
        fprintf(stderr, "test_gpu_api: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_api: ok\n");
    return 0;
}
