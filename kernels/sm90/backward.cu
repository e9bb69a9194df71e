/*
 * backward.cu - the Hopper (sm_90a) attention backward of FLAMIA-H.
 *
 * Computes docs/numerics.md section 4 on the operands quantize.cu and forward.cu
 * left in the workspace (layout: sm90_launch.h). Four launches on the caller's
 * stream, no allocation, no host synchronization (graph-capturable):
 *
 *  1. bwd_pre_do     dO -> E4M3 codes with the recipe's groups (32-token document
 *                    blocks, CEIL; per token for mxfp8-exact), do_codes / do_exp,
 *                    and D_i = sum_d dO^_id O_id from the SAME quantized dO (FP32);
 *                    FP8 kinds: the main kernel's per-row constants (bwd_rows) and
 *                    the dO codes as exact F16 values (do_bf16, dV's B operand);
 *                    BF16 kind: do_bf16 copy and D from the BF16 dO.
 *  2. bwd_transpose  qt_codes, kt_codes: the same codes transposed to [H][D][t_vpad] in
 *                    V^T's layout (each document on a 32-token boundary, the gaps zero;
 *                    flamia_sm90_vt_shift) - one payload, two directions. Skipped in the
 *                    training call, whose quantize wrote them (P->qkt_in_quantize).
 *     (dq_accum and the deterministic mode's turn counters are zeroed by bwd_pre_do; in the
 *     training call dq_accum is zeroed by the forward instead: P->dq_zero_in_forward.)
 *  3. main kernel, one CTA per (128-key tile aligned to the document start, kv head):
 *     a 1-D grid over the batch's tile slots (sm90_tiles.cuh) x kv heads, kv head fastest
 *     (GQA: the longest CTAs first instead, by the order bwd_order writes; use_order below);
 *     looping over the GQA group's query heads and the query tiles that see the key tile
 *     (causal: from the diagonal one). dK, dV stay in registers; dQ is reduce-added
 *     (TMA reduce-adds, taken in turn in the deterministic mode; the simt kernel's FP32
 *     atomics likewise) into dq_accum.
 *       bwd_main_fp8 (mxfp8, mxfp8-exact; the default): FP8 wgmma (QGMMA) for the
 *       products, see "FP8 main kernel" in backward_fp8.cu.
 *       bwd_simt (BF16 kind; FP8 kinds with FLAMIA_SM90_BWD=plain): 32x32 blocks in
 *       shared memory, FP32 FMA, the reference's function to FP32 summation order; slow.
 *  4. bwd_dq_out     dq_accum -> BF16 dq.
 *  The split dQ (the deterministic mode with its workspace; sm90_launch.h): the main kernel
 *  stores its dS codes instead (dQ mode kDqSplit) and backward_dq.cu's dq_split sums dQ per query
 *  tile in a fixed order and writes it in BF16 (no dq_accum, no turns, no bwd_dq_out); both per
 *  chunk of kv heads, as many as the workspace holds (all of them in one with the size asked for).
 *  The default mode takes the same split where dq_accum's own room holds it in few enough chunks
 *  (sm90_launch.h flamia_sm90_dq_plan_of), and its dQ is then deterministic too.
 *
 * P is rebuilt exactly as numerics.md 3.3 / 4.2 say: t = fl(s c) (s from the exact
 * FP32 products of the codes times the power-of-two factors), ti = trunc(t),
 * tf = t - ti, E = ex2.approx(tf) * 2^(ti - m_i) with m_i the forward's final
 * integer frame (row_frame), evaluated as the forward does (sm90_exp2.cuh),
 * pb = e4m3(E 2^8), P = dec(pb) 2^-8 exp2(m_i - lse_i/ln2) (the normalizer in FP64, as
 * the reference). dS = P (dP - D_i) in FP32, quantized
 * by the recipe's group (32x32 block max / query row x 32 keys, CEIL).
 *
 * Files (one role each; backward_launch.h is the interface between them):
 *   backward.cu          this overview and the host orchestration: bwd_run, the public
 *                        entry points, the main kernel's selection (FLAMIA_SM90_BWD)
 *   backward_prep.cu     1. bwd_pre_do, 2. bwd_transpose, 4. bwd_dq_out
 *   backward_simt.cu     3. bwd_simt
 *   backward_fp8.cu      3. bwd_main_fp8 (and bwd_main_fp8_dbg), with its design notes
 *   backward_dq.cu       the split deterministic dQ (dq_split_offsets, dq_split)
 *   backward_common.cuh  device helpers the kernel TUs share
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backward_launch.h"
#include "sm90_launch.h"

/* Which main kernel the FP8 kinds run.
 *   1 (default) the FP8 wgmma kernel bwd_main_fp8 (v6). Measured on the H200
 *     (2026-11-29, docs/perf-notes.md "Backward kernel"): 217 / 206 TFLOP/s causal at
 *     16x4096 / 4x4096; vs flamia_ref_backward relL2 1.0-1.4e-2 (cosine >= 0.99989), ten
 *     times below the recipe's own error vs FP64 (1.1-1.4e-1 on the same inputs): the
 *     difference is Hopper's FP8 wgmma accumulation moving P / dS codes across E4M3
 *     rounding boundaries (docs/numerics.md 8), not a defect of the kernel.
 *   0 the plain FP32 kernel bwd_simt: matches the reference to FP32 summation order
 *     (relL2 ~1e-5) on every layout, ~5 TFLOP/s; the debugging oracle on the GPU.
 * BF16 kind: always bwd_simt (the control path; no BF16 wgmma backward yet).
 * Set by the dev harness (BWD_VARIANT) or FLAMIA_SM90_BWD=plain|fp8 in the environment. */
int flamia_bwd_debug_variant = -1;

static int bwd_variant() {
    if (flamia_bwd_debug_variant < 0) {
        const char *e = getenv("FLAMIA_SM90_BWD");
        flamia_bwd_debug_variant = (e && !strcmp(e, "plain")) ? 0 : 1;
    }
    return flamia_bwd_debug_variant;
}

/* The FP8 main kernel's launch order (launch_order, region bwd_order): the longest CTAs
 * first where the grid's own order leaves a tail. GQA makes a CTA `group` times longer and the
 * grid as many times shorter, so a late document's longest CTAs start near the end of the run
 * (dev/tail_model.py). Measured on the H200 (docs/perf-notes.md, "Backward kernel", forty-
 * seventh / forty-eighth sessions): gqa-16x1024's backward -8.5 %, but gqa-4x4096's +4 % and
 * every MHA workload's +4..+16 % - longest first spreads the CTAs resident together over
 * many documents, whose Q / dO tiles and dQ rows then no longer share L2. The threshold is the
 * last measured gain per GQA group (queries per kv head; the tail grows with the group):
 * groups of 4 -12 % at gqa-5x3072, 0 at gqa-4x3584, +4.8 % at gqa-4x4096 (forty-ninth session);
 * groups of 8 -24 % at 4x4096, +4.6 % at 2x8192, groups of 2 +8.9 % at 16x1024 (fifty-third
 * session, dev/sessions/fiftieth_groups.sh: v114 with groups of 2 never). Default: GQA (heads_q > heads_kv) with documents of at most
 * order_max_seqlen(group) tokens; FLAMIA_SM90_BWD_ORDER=0 never, =2 always (measurements).
 * Never in the deterministic mode: its dQ turns wait on key tiles in the grid's own order.
 * Read once. */
int flamia_bwd_order_mode = -1;

/* the longest document the order pays for, per GQA group (-1: never, MHA) */
static int order_max_seqlen(int group) {
    if (group >= 8) return 4096; /* measured -23 % at 16x1024 and 5x3072, -24 % at 4x4096, +4.6 % at 2x8192 */
    if (group >= 4) return 3072; /* measured, forty-ninth session */
    /* groups of 2: never (fiftieth_groups.sh, 2026-12-05: +8.9 % at 16x1024, +2.2 % at 8x2048,
     * -1.6 % at 5x3072 against the grid's order) */
    return -1;
}

static bool use_order(const struct flamia_sm90_problem *P) {
    if (flamia_bwd_order_mode < 0) {
        const char *e = getenv("FLAMIA_SM90_BWD_ORDER");
        flamia_bwd_order_mode = e && (e[0] == '0' || e[0] == '2') && !e[1] ? e[0] - '0' : 1;
    }
    return flamia_bwd_order_mode == 2 ||
           (flamia_bwd_order_mode == 1 && P->max_seqlen <= order_max_seqlen(P->heads_q / P->heads_kv));
}

extern "C" int flamia_sm90_bwd_uses_order(const struct flamia_sm90_problem *P) {
    return P->kind != FLAMIA_SM90_BF16 && !P->deterministic && P->dq_plan.heads == 0 && bwd_variant() != 0 && use_order(P);
}

/* The backward's launches; dbg_codes != NULL: the debug run (FP8 kinds, always the FP8
 * main kernel, its debug instantiation; no dq/dk/dv written, no dq_out). */
static cudaError_t bwd_run(const struct flamia_sm90_problem *P, void *workspace, const uint16_t *o, const float *lse,
                           const uint16_t *dout, uint16_t *dq, uint16_t *dk, uint16_t *dv, uint8_t *dbg_codes,
                           cudaStream_t stream) {
    using namespace flamia_bwd;
    const flamia_sm90_layout L = flamia_sm90_layout_of(P);
    uint8_t *ws = (uint8_t *)workspace;
    const int T = P->total_tokens;
    const bool fp8 = P->kind != FLAMIA_SM90_BF16;
    cudaError_t e;

    /* 1. dO codes / exponents / D */
    PreParams pp;
    pp.dout = dout;
    pp.o = o;
    pp.do_codes = ws + L.do_codes;
    pp.do_exp = (int8_t *)(ws + L.do_exp);
    pp.do_bf16 = (uint16_t *)(ws + L.do_bf16);
    pp.delta = (float *)(ws + L.delta);
    pp.err = (int *)(ws + L.err_flag);
    pp.cu = P->cu_seqlens;
    pp.T = T;
    pp.Hq = P->heads_q;
    pp.num_docs = P->num_docs;
    pp.rows = (float *)(ws + L.bwd_rows);
    pp.row_frame = (const float *)(ws + L.row_frame);
    pp.lse = lse;
    pp.qe = (const int8_t *)(ws + L.q_exp);
    pp.c = P->softmax_scale * 1.44269504088896341f;
    float *dq_acc = (float *)(ws + L.dq_accum);
    /* the split dQ (backward_dq.cu) where the call's plan has one (sm90_launch.h flamia_sm90_dq_plan_of) */
    const flamia_sm90_dq_plan &plan = P->dq_plan;
    const bool split = plan.heads > 0 && fp8 && !dbg_codes && bwd_variant() != 0;
    int *dq_turn = P->deterministic && !dbg_codes && !split ? (int *)(ws + L.dq_turn) : nullptr;
    pp.dq_acc = P->dq_zero_in_forward || split ? nullptr : dq_acc; /* else the forward zeroed it; split: unused */
    pp.dq_turn = dq_turn;
    if ((e = launch_pre_do(P->kind, pp, stream)) != cudaSuccess) return e;

    /* 2. transposed codes (in the training call quantize wrote them) */
    if (fp8 && !P->qkt_in_quantize) {
        TrParams tp;
        tp.src[0] = ws + L.q_codes;
        tp.src[1] = ws + L.k_codes;
        tp.dst[0] = ws + L.qt_codes;
        tp.dst[1] = ws + L.kt_codes;
        tp.heads[0] = P->heads_q;
        tp.heads[1] = P->heads_kv;
        tp.cu = P->cu_seqlens;
        tp.num_docs = P->num_docs;
        tp.t_vpad = L.t_vpad;
        /* Q^T and K^T (TMA sources of the FP8 kernel); dO needs no transposed copy: dV takes
         * the dO codes as F16 rows (do_bf16, MN-major) */
        if ((e = launch_transpose(tp, stream)) != cudaSuccess) return e;
    }

    /* the split dQ's chunks: `split_kv` kv heads each (the workspace's share, sm90_launch.h) */
    const int split_kv = split ? plan.heads : 0, group = P->heads_q / P->heads_kv;
    const long long split_tiles = (long long)split_kv * L.ds_tiles_kv;
    DqParams dp = {};
    if (split) {
        dp.ds = ws + plan.codes;
        dp.fac = (const int16_t *)(ws + plan.fac);
        dp.off = (const long long *)(ws + plan.off);
        dp.next = (int *)(ws + plan.next);
        dp.dq = dq;
        dp.cu = P->cu_seqlens;
        dp.T = T;
        dp.Hq = P->heads_q;
        dp.group = group;
        dp.num_docs = P->num_docs;
        dp.causal = P->causal;
        dp.hadamard = P->hadamard;
        dp.t_vpad = L.t_vpad;
        dp.tiles = split_tiles;
        dp.had_norm = 1.0f / sqrtf((float)kD);
        dp.scale = P->softmax_scale;
        dp.stride_h = split_kv * group;
        dp.chunks = (P->heads_kv + split_kv - 1) / split_kv;
        dp.err = (int *)(ws + L.err_flag);
        if ((e = launch_dq_split_offsets(dp, stream)) != cudaSuccess) return e;
    }

    /* 3. main kernel */
    MainParams mp;
    mp.q8 = ws + L.q_codes;
    mp.k8 = ws + L.k_codes;
    mp.v8 = ws + L.v_codes;
    mp.do8 = ws + L.do_codes;
    mp.qe = (const int8_t *)(ws + L.q_exp);
    mp.ke = (const int8_t *)(ws + L.k_exp);
    mp.ve = (const int8_t *)(ws + L.v_exp);
    mp.doe = (const int8_t *)(ws + L.do_exp);
    mp.qb = (const uint16_t *)(ws + L.q_bf16);
    mp.kb = (const uint16_t *)(ws + L.k_bf16);
    mp.vb = (const uint16_t *)(ws + L.v_bf16);
    mp.dob = (const uint16_t *)(ws + L.do_bf16);
    mp.row_frame = (const float *)(ws + L.row_frame);
    mp.lse = lse;
    mp.delta = (const float *)(ws + L.delta);
    mp.rows = (const float *)(ws + L.bwd_rows);
    mp.dof16 = (const uint16_t *)(ws + L.do_bf16);
    mp.dq_acc = dq_acc;
    mp.dq_turn = dq_turn;
    mp.dk = dk;
    mp.dv = dv;
    mp.cu = P->cu_seqlens;
    mp.T = T;
    mp.Hq = P->heads_q;
    mp.Hkv = P->heads_kv;
    mp.group = group;
    mp.num_docs = P->num_docs;
    mp.hk0 = 0;
    mp.nhk = P->heads_kv;
    mp.causal = P->causal;
    mp.c = P->softmax_scale * 1.44269504088896341f;
    mp.scale = P->softmax_scale;
    mp.hadamard = P->hadamard;
    mp.had_norm = 1.0f / sqrtf((float)kD); /* as flamia_ref_hadamard */
    mp.ds_codes = ws + plan.codes;
    mp.ds_fac = (int16_t *)(ws + plan.fac);
    mp.ds_off = (const long long *)(ws + plan.off);
    mp.ds_tiles = split_tiles;
    const bool fp8_main = fp8 && (dbg_codes || bwd_variant() != 0);
    const bool det = dq_turn != nullptr;
    mp.order = nullptr;
    if (!dbg_codes && flamia_sm90_bwd_uses_order(P)) {
        mp.order = (const int *)(ws + L.bwd_order);
        if ((e = launch_order(P->cu_seqlens, P->num_docs, T, P->heads_kv, P->causal, (int *)(ws + L.bwd_order),
                              stream)) != cudaSuccess)
            return e;
    }
    const int dq_mode = split ? kDqSplit : det ? kDqTurns : kDqAdds;
    if (split) { /* per chunk of kv heads: the main kernel stores its dS codes, the dQ kernel sums them */
        int *order = plan.ordered ? (int *)(ws + L.bwd_order) : nullptr; /* longest first (cuda_api.cu) */
        int order_heads = 0; /* the kv heads the table in bwd_order was made for */
        for (int c = 0; c < dp.chunks; c++) { /* balanced: chunk sizes differ by at most one kv head */
            mp.hk0 = c * P->heads_kv / dp.chunks;
            mp.nhk = (c + 1) * P->heads_kv / dp.chunks - mp.hk0;
            if (order && mp.nhk != order_heads) { /* items slot nhk + the chunk's kv head; stream-ordered
                                                     after the previous chunk's main kernel read it */
                if ((e = launch_order(P->cu_seqlens, P->num_docs, T, mp.nhk, P->causal, order, stream)) != cudaSuccess)
                    return e;
                order_heads = mp.nhk;
            }
            mp.order = order;
            dp.h0 = mp.hk0 * group;
            dp.nh = mp.nhk * group;
            dp.next = (int *)(ws + plan.next) + c;
            if ((e = launch_main_fp8(P->kind, dq_mode, mp, ws + L.qt_codes, ws + L.kt_codes, L.t_vpad, nullptr, stream)) !=
                    cudaSuccess ||
                (e = launch_dq_split(dp, ws + L.kt_codes, stream)) != cudaSuccess)
                return e;
        }
        return cudaSuccess;
    }
    e = fp8_main ? launch_main_fp8(P->kind, dq_mode, mp, ws + L.qt_codes, ws + L.kt_codes, L.t_vpad, dbg_codes, stream)
                 : launch_main_simt(P->kind, det, mp, P->num_docs, P->max_seqlen, stream);
    if (dbg_codes || e != cudaSuccess) return e;

    /* 4. dq -> BF16 */
    return launch_dq_out(dq_acc, dq, (size_t)T * P->heads_q, P->hadamard, stream);
}

cudaError_t flamia_sm90_backward(const struct flamia_sm90_problem *P, void *workspace, const uint16_t *o,
                                 const float *lse, const uint16_t *dout, uint16_t *dq, uint16_t *dk, uint16_t *dv,
                                 cudaStream_t stream) {
    if (P->head_dim != flamia_bwd::kD) return cudaErrorNotSupported;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    return bwd_run(P, workspace, o, lse, dout, dq, dk, dv, nullptr, stream);
}

cudaError_t flamia_sm90_backward_debug(const struct flamia_sm90_problem *P, void *workspace, const uint16_t *o,
                                       const float *lse, const uint16_t *dout, uint8_t *codes, cudaStream_t stream) {
    if (P->head_dim != flamia_bwd::kD || P->kind == FLAMIA_SM90_BF16) return cudaErrorNotSupported;
    const size_t T = (size_t)P->total_tokens;
    cudaError_t e = cudaMemsetAsync(codes, 0xFF, (size_t)P->heads_q * T * T, stream);
    if (e != cudaSuccess) return e;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    return bwd_run(P, workspace, o, lse, dout, nullptr, nullptr, nullptr, codes, stream);
}
