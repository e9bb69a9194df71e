/*
 * sm90_launch.h - the contract between the C API plumbing (cuda_api.cu) and the
 * Hopper kernels (quantize.cu, forward.cu, backward*.cu): the problem
 * description after validation and the workspace layout both sides index.
 * Included from CUDA C++ and from the gpu tests (C).
 */
#ifndef FLAMIA_SM90_LAUNCH_H
#define FLAMIA_SM90_LAUNCH_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
#include "flamia.h"

/* The one head dim the forward and backward kernels take (quantize also takes 64); the
 * forward and training calls refuse the others before anything is enqueued (cuda_api.cu
 * prepare), so that the refusal is FLAMIA_ERR_UNSUPPORTED with its reason, not a CUDA error. */
#define FLAMIA_SM90_FWD_HEAD_DIM 128
#define FLAMIA_SM90_BWD_HEAD_DIM 128

/* The forward's O-sum intervals in key tiles (flamia_cuda_set_o_sum_interval, numerics.md 8):
 * 0 (never) or a power of two from 2 to 64; not 1, since the forward's loop adds after even key
 * tiles only (forward.cu). The API's check and forward.cu's compile-time default both ask here. */
#define FLAMIA_SM90_O_SUM_INTERVAL_OK(n) ((n) == 0 || ((n) >= 2 && (n) <= 64 && ((n) & ((n)-1)) == 0))

/* Which function the kernels compute (docs/numerics.md section 6). */
enum flamia_sm90_kind {
    FLAMIA_SM90_BF16 = 0,    /* BF16 control path through the same code */
    FLAMIA_SM90_MXFP8,       /* 32-token blocks, CEIL, dS 32x32 */
    FLAMIA_SM90_MXFP8_EXACT  /* per-token scales, dS per row x 32 keys */
};

/* err_flag's bits: which input held a non-finite element (E4M3 kinds only; quantize's
 * tensor index ti = 0, 1, 2 sets 1 << ti). flamia_cuda_check_finite names them. */
enum {
    FLAMIA_SM90_BAD_Q = 1,
    FLAMIA_SM90_BAD_K = 2,
    FLAMIA_SM90_BAD_V = 4,
    FLAMIA_SM90_BAD_DOUT = 8,
    /* not an input's value: the documents on the device hold more split-dQ tiles than the regions
     * sized from the shape (max_seqlen, cu_seqlens_host) have; dQ of that backward is wrong (never
     * a write past the workspace). dq_split_offsets sets it */
    FLAMIA_SM90_BAD_SPLIT_TILES = 16
};

/* Where a backward's split dQ goes (flamia_sm90_dq_plan_of): regions ds_off, ds_next, ds_codes and
 * ds_fac (offsets from the workspace base) and the kv heads a chunk takes; heads 0: no split.
 * ordered: the main kernel launches each chunk's CTAs longest first (flamia_sm90_dq_plan_for_call) */
struct flamia_sm90_dq_plan {
    int heads;
    size_t off, next, codes, fac;
    int ordered;
};

/* A validated problem: every field checked by cuda_api.cu before a launch. */
struct flamia_sm90_problem {
    int total_tokens, num_docs, heads_q, heads_kv, head_dim, causal, max_seqlen;
    float softmax_scale;          /* effective (never 0) */
    const int32_t *cu_seqlens;    /* device [num_docs+1] */
    enum flamia_sm90_kind kind;
    int hadamard;
    int deterministic;            /* dQ summed in a fixed order (flamia_cuda_set_deterministic) */
    int dq_zero_in_forward;       /* training call only: the forward zeroes dq_accum and
                                     bwd_pre_do does not (unless FLAMIA_SM90_DQ_ZERO=bwd) */
    int qkt_in_quantize;          /* training call only: quantize writes qt_codes, kt_codes
                                     and the backward skips bwd_transpose (unless
                                     FLAMIA_SM90_QKT=bwd) */
    int row_sum_p_values;         /* the forward's l adds P's rounded values (recipe row_sum =
                                     FLAMIA_ROWSUM_P_VALUES, numerics.md 3.4) */
    struct flamia_sm90_dq_plan dq_plan; /* the split dQ's regions and chunks (flamia_sm90_dq_plan_of);
                                     heads 0: dQ by reduce-adds (turns in the deterministic mode) */
    long long doc_tiles;          /* sum over documents of c(n_d) (flamia_sm90_doc_tiles) from the shape's
                                     host copy of cu_seqlens; 0: not given, the layout bounds it from
                                     max_seqlen (cuda_api.cu prepare; FLAMIA_SM90_DOC_TILES=0 ignores it) */
    int dq_room_chunks;           /* the layout grows dq_accum's room (region dq_room) until the split
                                     dQ fits there in this many chunks, within dq_room_growth; 0: no
                                     growth. cuda_api.cu sets FLAMIA_SM90_DQ_ROOM_CHUNKS, which the
                                     environment's FLAMIA_SM90_DQ_ROOM_CHUNKS overrides */
    int dq_room_growth;           /* ... by at most 1 / this of the regions before dq_accum; 0:
                                     FLAMIA_SM90_DQ_ROOM_GROWTH (cuda_api.cu sets the environment's
                                     FLAMIA_SM90_DQ_ROOM_GROWTH, for measuring other trades) */
    int dq_room_one_growth;       /* first, room for every kv head in one chunk where that takes at
                                     most 1 / this of the regions before dq_accum; 0: not tried.
                                     cuda_api.cu sets FLAMIA_SM90_DQ_ROOM_ONE_GROWTH (environment or
                                     macro) */
};

/* Workspace layout: regions aligned to 256 bytes, offsets from the workspace base.
 *   err_flag   int32: FLAMIA_SM90_BAD_* bits, or'ed (atomically, never cleared by kernels) for
 *              each input that holds a non-finite element; quantize clears it first
 *   q_codes    uint8 [T][Hq][D]   E4M3 codes (K-major for Q K^T and for dS^T Q's transpose)
 *   k_codes    uint8 [T][Hkv][D]
 *   v_codes    uint8 [T][Hkv][D]  (dO V^T needs this layout)
 *   vt_codes   uint8 [Hkv][D][t_vpad] the same V codes transposed (P V needs keys contiguous),
 *                                     each document starting on a 32-token boundary
 *                                     (flamia_sm90_vt_shift), the gaps between them zero
 *   q_exp, k_exp, v_exp  int8 [T][H]: each token's block exponent (its block's, repeated)
 *   q_bf16, k_bf16, v_bf16  uint16 [T][H][D]: BF16 path operands (after the Hadamard option);
 *                                     empty for the FP8 kinds, which never touch them (quantize's
 *                                     !FP8 path, the forward's BF16 branches, simt_operand<0>)
 *   row_frame  float [T][Hq]: the forward's final integer frame m_i (docs/numerics.md 3.2)
 * Backward (docs/numerics.md 4; written by the backward's own preprocessing unless
 * quantize already wrote them):
 *   qt_codes   uint8 [Hq][D][t_vpad]  Q codes transposed (dK = dS^T Q contracts over queries)
 *   kt_codes   uint8 [Hkv][D][t_vpad] K codes transposed (dQ = dS K contracts over keys);
 *                                     both in vt_codes' document-aligned layout (every
 *                                     transposed tile a TMA box from a 32-token boundary)
 *   do_codes   uint8 [T][Hq][D]       dO codes (dP = dO V^T)
 *   do_exp     int8 [T][Hq]           dO's per-token block exponent
 *   do_bf16    uint16 [T][Hq][D]      BF16 kind: dO as BF16; FP8 kinds: the dO codes as exact F16
 *                                     values (dV's B operand, loaded by cp.async, no per-tile convert)
 *   delta      float [T][Hq]          D_i = rowsum(dO^ * O)
 *   dq_accum   float [T][Hq][D]       dQ accumulated across key tiles (reduce-add)
 *   dq_turn    int32 [T][Hq]          deterministic mode: per query block (its first token) and
 *                                     head, how many contributions have completed (simt: key
 *                                     tiles; FP8 kernel: warpgroup halves, two per key tile)
 *   bwd_rows   word [Hq][8][T]        per query row, the FP8 main kernel's row constants, made once
 *                                     by the dO preprocessing (field w of token t at (h 8 + w) T + t):
 *                                     0 c 2^eQ, 1 2^(8 - m) (0 where the direct exponential of
 *                                     sm90_exp2.cuh does not hold), 2 the normalizer exp2(m - lse/ln2)
 *                                     2^-8, 3 D, 4 2^eDO, 5 eDO (int), 6 unused, 7 eQ (int); so that
 *                                     the main kernel stages them by cp.async with its query tile
 * Forward scheduler:
 *   fwd_work   int32 [4 + ceil(I/32) + I], I = Hq (T/128 + num_docs) work items: the persistent
 *                                     forward's counters (next item, split-list count, next split
 *                                     item), a bit per item and the list of items its second launch
 *                                     recomputes with the split exponential (header and bits zeroed
 *                                     per call; forward.cu)
 * Split dQ (FP8 kinds; backward_dq.cu): the main kernel stores its dS codes and a second kernel sums
 * dQ per query tile in key-tile order, in chunks of as many kv heads as the room holds, main kernel
 * then dQ kernel per chunk (flamia_sm90_dq_plan_of). The room is either past total (the deterministic
 * mode's workspace size asks for every kv head there while that stays under
 * FLAMIA_SM90_DQ_SPLIT_MAX_BYTES, else for as many as fit; a kv head's share past the cap leaves the
 * mode to the turns) or regions dq_accum, dq_turn and dq_room, which the split leaves unused (the default
 * mode, where it takes few chunks of large enough grids: FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS; the
 * deterministic mode with a smaller workspace), grown by region dq_room:
 *   dq_room    uint8 [bytes]        nothing but room: what dq_accum and dq_turn lack to hold the split's
 *                                     regions for every kv head, where that is at most
 *                                     1 / FLAMIA_SM90_DQ_ROOM_ONE_GROWTH of the regions before dq_accum,
 *                                     else for ceil(Hkv / dq_room_chunks) kv heads within
 *                                     1 / FLAMIA_SM90_DQ_ROOM_GROWTH (else 0 bytes). 1,024-token
 *                                     documents: +5.6 %, 1 chunk instead of 2; 4,096-token: +3.6 %,
 *                                     4 chunks instead of 6.
 * In either room, from its start:
 *   ds_off     int64 [num_docs]         each document's first tile in a chunk (a prefix, made per call)
 *   ds_next    int32 [Hkv]              the dQ kernel's next work item, one counter per chunk (zeroed
 *                                     per call)
 *   ds_codes   uint8 [tiles][128][128]  per (document, query head of the chunk, query tile m, key tile n
 *                                     of the causal triangle or the full square) the dQ operand's codes
 *                                     [query][key], unshifted (numerics.md 4.6's exact option)
 *   ds_fac     int16 [tiles][2][2][2][64]  their exponents G = eDS + EKmax per (64-key pair, 64-query
 *                                     half, 32-key block, query): 1 KB a tile (the row factor is
 *                                     2^G softmax_scale), right after ds_codes' chunk-dependent size
 *   tiles = heads x ds_tiles_kv, ds_tiles_kv = group sum_d c(n_d) per kv head, n_d = ceil(len_d /
 *   128), c(n) = n (n + 1) / 2 causal, n^2 not: counted from the shape's host copy of cu_seqlens
 *   where the caller gave one (problem.doc_tiles), else bounded by n_d <= ceil(max_seqlen / 128)
 *   and sum_d n_d <= tile slots (8192+224x256: 23,952 tiles for the 2,752 it has).
 * Backward scheduler:
 *   bwd_order  int32 [slots Hkv]      the FP8 main kernel's launch order where it is used (default
 *                                     dQ mode, GQA; backward.cu): entry p the item (slot Hkv + kv
 *                                     head) the p-th CTA takes, the longest first; -1: none (the
 *                                     CTA exits). Made per call by bwd_order (backward_prep.cu)
 * t_pad = T rounded up to 16 (no region uses it now; kept for dev variants built on older
 * kernels); t_vpad = V^T's row length,
 * align32(T) + 32 num_docs. */
struct flamia_sm90_layout {
    size_t err_flag, q_codes, k_codes, v_codes, vt_codes, q_exp, k_exp, v_exp;
    size_t q_bf16, k_bf16, v_bf16, row_frame;
    size_t qt_codes, kt_codes, do_codes, do_exp, do_bf16, delta, dq_accum, dq_turn, dq_room, bwd_rows;
    size_t fwd_work, bwd_order, total;
    size_t total_split;     /* the deterministic mode's size (== total: no room for the split asked) */
    long long ds_tiles_kv;  /* the split dQ's tiles per kv head (0: the BF16 kind, no split) */
    int t_pad, t_vpad;
};

static inline size_t flamia_sm90_align(size_t x) { return (x + 255) & ~(size_t)255; }

/* What the split deterministic dQ's regions may ask for: every kv head at once where they fit
 * under it, else chunks of fewer heads; a kv head whose own share does not fit (one 131,072-token
 * document: 9 GB a query head) leaves the mode to the turns */
#define FLAMIA_SM90_DQ_SPLIT_MAX_BYTES ((size_t)16 << 30)
/* a split tile's bytes: 128 x 128 dS codes and 2 x 128 FP32 row factors */
#define FLAMIA_SM90_DQ_SPLIT_TILE_BYTES (128 * 128 + 2 * 128 * 4)

/* The split dQ's fixed regions from `base` (ds_off, then ds_next: its `*next`): where ds_codes
 * starts. The deterministic mode's size (flamia_sm90_layout_of) and every plan
 * (flamia_sm90_dq_plan_at) place them by this. */
static inline size_t flamia_sm90_dq_codes_at(size_t base, int num_docs, int heads_kv, size_t *next) {
    *next = flamia_sm90_align(base + (size_t)num_docs * 8);
    return flamia_sm90_align(*next + (size_t)heads_kv * 4);
}

/* Region dq_room's bytes: what the room from dq_accum (`base`, `room` bytes so far) lacks to hold the
 * split dQ's regions for ceil(Hkv / dq_room_chunks) kv heads of `per_kv` bytes, if that is at most
 * 1 / dq_room_growth (default FLAMIA_SM90_DQ_ROOM_GROWTH) of the `base` bytes before it; else 0. The curve it aims at (16x4096,
 * H100, sixty-fifth session): the split's backward 0.890x the reduce-adds' in 4 chunks, 0.936x in 6.
 * Measured with it against without (H100, perf-notes "Backward kernel", sixty-sixth session): training
 * call 0.969x at 16x4096 (4 chunks, not 6), 0.932x at 8x4096 (4 chunks clear the grid floor, 6 did
 * not), 0.992-1.004x on ten other workloads. */
#define FLAMIA_SM90_DQ_ROOM_CHUNKS 4
#define FLAMIA_SM90_DQ_ROOM_GROWTH 16
/* Before that, one chunk (every kv head at once) where it costs at most 1 / this (problem.dq_room_one_growth):
 * the shapes it reaches are short documents, whose chunks' grids gain most from one launch. Measured
 * against without it (H100, perf-notes "Backward kernel", sixty-eighth session): training call
 * 0.931-0.989x on 16x1024, 64x1024, gqa-16x1024, 8x1024 and 12x1024 (+25 MB at 16x1024),
 * 0.999-1.001x where the plan stays. */
#define FLAMIA_SM90_DQ_ROOM_ONE_GROWTH 8
/* What the room from `base` (`room` bytes so far) lacks to hold ceil(Hkv / chunks) kv heads of the
 * split, if that is at most 1 / growth of `base`; else 0 */
static inline size_t flamia_sm90_dq_room_lack(const struct flamia_sm90_problem *p, size_t base, size_t room,
                                              size_t per_kv, int chunks, size_t growth) {
    size_t next;
    const size_t heads = (size_t)((p->heads_kv + chunks - 1) / chunks);
    const size_t need = flamia_sm90_dq_codes_at(base, p->num_docs, p->heads_kv, &next) + heads * per_kv - base;
    return need > room && need - room <= base / growth ? need - room : 0;
}
static inline size_t flamia_sm90_dq_room_bytes(const struct flamia_sm90_problem *p, size_t base, size_t room,
                                               size_t per_kv) {
    if (p->dq_room_chunks <= 0 || per_kv == 0) return 0;
    const size_t one = p->dq_room_one_growth > 0
                           ? flamia_sm90_dq_room_lack(p, base, room, per_kv, 1, (size_t)p->dq_room_one_growth)
                           : 0;
    return one ? one
               : flamia_sm90_dq_room_lack(p, base, room, per_kv, p->dq_room_chunks,
                                          (size_t)(p->dq_room_growth > 0 ? p->dq_room_growth : FLAMIA_SM90_DQ_ROOM_GROWTH));
}

/* Slots of 128-token tiles of a packed batch: one per whole 128 tokens plus one per
 * document (its partial last tile); sm90_tiles.cuh maps a slot to its document and tile.
 * The forward's work items are heads_q of these, the backward's grid one per kv head. */
#define FLAMIA_SM90_TILE_TOKENS 128
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int flamia_sm90_tile_slots(int total_tokens, int num_docs) {
    return total_tokens / FLAMIA_SM90_TILE_TOKENS + num_docs;
}

/* The split dQ's (query tile, key tile) pairs of a document of n 128-token tiles, per query head:
 * c(n) (backward_common.cuh split_doc_tiles, which the kernels index by) */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline long long flamia_sm90_split_doc_tiles(long long n, int causal) {
    return causal ? n * (n + 1) / 2 : n * n;
}
/* sum_d c(n_d) over a host copy of cu_seqlens (problem.doc_tiles) */
static inline long long flamia_sm90_doc_tiles(const int32_t *cu, int num_docs, int causal) {
    long long sum = 0;
    for (int d = 0; d < num_docs; d++)
        sum += flamia_sm90_split_doc_tiles((cu[d + 1] - cu[d] + FLAMIA_SM90_TILE_TOKENS - 1) / FLAMIA_SM90_TILE_TOKENS,
                                           causal);
    return sum;
}

/* V^T's document-aligned positions: token t of document d (d's first token cu[d]) sits at
 * t + flamia_sm90_vt_shift(cu[d], d) = align32(cu[d]) + 32 d + (t - cu[d]), so that
 * - the forward loads any document's V^T tiles by TMA (a box at a token coordinate off a
 *   16-byte boundary faults: illegal instruction, measured; the shared-memory transpose
 *   this replaces cost 41 % of logu-64k's forward);
 * - the quantizer's 32-token blocks land on whole 32-byte sectors (16-token alignment left
 *   every other document's rows straddling sectors: quantize +11 % at 16x4096, measured).
 * Documents never overlap (d - 1 ends before align32(cu[d - 1]) + 32 (d - 1) + len_{d-1}
 * <= cu[d] + 32 d - 1); between them lie 1..63 zero bytes, so a tile running past its
 * document reads finite codes. No scan: the shift needs only cu[d] and d. With
 * d = num_docs and cu = T it gives the row's end, t_vpad - T. */
#define FLAMIA_SM90_VT_ALIGN 32

/* The forward's row V exponent E_i (numerics.md 3.5, the fold of V's exponent into P) is
 * taken no lower than this. A row that sees only all-zero V blocks has E_i = -127
 * (FLAMIA_EXP_MIN), and l, which the forward accumulates in the frame 2^(8 - E_i), left
 * FP32 (2^135): the row's O came out NaN and its lse inf (thirty-fourth session). With the
 * floor, l <= N 2^104; only keys with |v| below ~2^-105 fold to a zero code, inside the
 * fold's documented latitude. */
#define FLAMIA_SM90_FWD_E_MIN (-96)
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int flamia_sm90_vt_shift(int doc_start, int doc) {
    const int a = FLAMIA_SM90_VT_ALIGN;
    return ((doc_start + a - 1) & -a) - doc_start + a * doc;
}

/* vt_codes from V's codes [T][Hkv][D] on the host, as the quantizer writes it: the tests'
 * expectation and the dev harnesses' input (cu: host copy of cu_seqlens). */
static inline void flamia_sm90_vt_host(const uint8_t *v_codes, const int32_t *cu, int num_docs, int heads_kv,
                                       int head_dim, int t_vpad, uint8_t *vt) {
    const int rows = heads_kv * head_dim;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int row = 0; row < rows; row++) { /* row = h D + dim */
        const int h = row / head_dim, dim = row % head_dim;
        uint8_t *out = vt + (size_t)row * t_vpad;
        for (int i = 0; i < t_vpad; i++) out[i] = 0;
        for (int doc = 0; doc < num_docs; doc++) {
            uint8_t *o = out + flamia_sm90_vt_shift(cu[doc], doc);
            for (int t = cu[doc]; t < cu[doc + 1]; t++) o[t] = v_codes[((size_t)t * heads_kv + h) * head_dim + dim];
        }
    }
}

/* fwd_work's words: a header (the next work item, the split list's count, its next entry,
 * one unused word), then a bit per work item, then the split list (forward.cu) */
enum {
    FLAMIA_SM90_FWD_NEXT = 0,
    FLAMIA_SM90_FWD_SPLIT_COUNT = 1,
    FLAMIA_SM90_FWD_SPLIT_NEXT = 2,
    FLAMIA_SM90_FWD_HEADER = 4
};

static inline struct flamia_sm90_layout flamia_sm90_layout_of(const struct flamia_sm90_problem *p) {
    struct flamia_sm90_layout L;
    size_t T = (size_t)p->total_tokens, Hq = (size_t)p->heads_q, Hk = (size_t)p->heads_kv,
           D = (size_t)p->head_dim;
    L.t_pad = (int)((T + 15) / 16 * 16);
    L.t_vpad = p->total_tokens + flamia_sm90_vt_shift(p->total_tokens, p->num_docs);
    const size_t items = Hq * (size_t)flamia_sm90_tile_slots(p->total_tokens, p->num_docs); /* the forward's work items */
    { /* the split dQ's tiles a kv head: counted where the host knows the documents, else bounded */
        const long long nmax = (p->max_seqlen + 127) / 128, nsum = flamia_sm90_tile_slots(p->total_tokens, p->num_docs);
        const long long doc_tiles = p->doc_tiles > 0 ? p->doc_tiles : p->causal ? (nmax + 1) * nsum / 2 : nmax * nsum;
        L.ds_tiles_kv = p->kind == FLAMIA_SM90_BF16 ? 0 : (long long)(Hq / Hk) * doc_tiles;
    }
    const size_t per_kv = (size_t)L.ds_tiles_kv * FLAMIA_SM90_DQ_SPLIT_TILE_BYTES;
    size_t off = 0;
#define FLAMIA_REGION(field, bytes) L.field = off; off = flamia_sm90_align(off + (bytes));
    FLAMIA_REGION(err_flag, 4)
    FLAMIA_REGION(q_codes, T * Hq * D)
    FLAMIA_REGION(k_codes, T * Hk * D)
    FLAMIA_REGION(v_codes, T * Hk * D)
    FLAMIA_REGION(vt_codes, Hk * D * (size_t)L.t_vpad)
    FLAMIA_REGION(q_exp, T * Hq)
    FLAMIA_REGION(k_exp, T * Hk)
    FLAMIA_REGION(v_exp, T * Hk)
    const size_t bf16_ops = p->kind == FLAMIA_SM90_BF16; /* the FP8 kinds' workspace leaves them out */
    FLAMIA_REGION(q_bf16, bf16_ops * T * Hq * D * 2)
    FLAMIA_REGION(k_bf16, bf16_ops * T * Hk * D * 2)
    FLAMIA_REGION(v_bf16, bf16_ops * T * Hk * D * 2)
    FLAMIA_REGION(row_frame, T * Hq * 4)
    FLAMIA_REGION(qt_codes, Hq * D * (size_t)L.t_vpad)
    FLAMIA_REGION(kt_codes, Hk * D * (size_t)L.t_vpad)
    FLAMIA_REGION(do_codes, T * Hq * D)
    FLAMIA_REGION(do_exp, T * Hq)
    FLAMIA_REGION(do_bf16, T * Hq * D * 2)
    FLAMIA_REGION(delta, T * Hq * 4)
    FLAMIA_REGION(dq_accum, T * Hq * D * 4)
    FLAMIA_REGION(dq_turn, T * Hq * 4)
    FLAMIA_REGION(dq_room, flamia_sm90_dq_room_bytes(p, L.dq_accum, off - L.dq_accum, per_kv))
    FLAMIA_REGION(bwd_rows, Hq * 8 * T * 4)
    FLAMIA_REGION(fwd_work, (FLAMIA_SM90_FWD_HEADER + (items + 31) / 32 + items) * 4)
    FLAMIA_REGION(bwd_order, Hk * (size_t)flamia_sm90_tile_slots(p->total_tokens, p->num_docs) * 4)
    L.total = off;
    { /* the deterministic mode's room for the split dQ past total */
        const int on = p->deterministic && L.ds_tiles_kv > 0 && per_kv <= FLAMIA_SM90_DQ_SPLIT_MAX_BYTES;
        const size_t heads = on ? (FLAMIA_SM90_DQ_SPLIT_MAX_BYTES / per_kv < Hk ? FLAMIA_SM90_DQ_SPLIT_MAX_BYTES / per_kv : Hk) : 0;
        size_t next;
        L.total_split = on ? flamia_sm90_dq_codes_at(off, p->num_docs, p->heads_kv, &next) + heads * per_kv : off;
    }
#undef FLAMIA_REGION
    return L;
}

/* The split dQ's regions from `base`, `bytes` long: the kv heads a chunk takes there (as many as
 * fit, at most max_heads and Hkv; 0: not one) */
static inline struct flamia_sm90_dq_plan flamia_sm90_dq_plan_at(const struct flamia_sm90_problem *p,
                                                                const struct flamia_sm90_layout *L, size_t base,
                                                                size_t bytes, int max_heads) {
    struct flamia_sm90_dq_plan pl = {0, 0, 0, 0, 0, 0};
    if (L->ds_tiles_kv <= 0) return pl;
    pl.off = base;
    pl.codes = flamia_sm90_dq_codes_at(base, p->num_docs, p->heads_kv, &pl.next);
    if (base + bytes < pl.codes) return pl;
    size_t heads = (base + bytes - pl.codes) / ((size_t)L->ds_tiles_kv * FLAMIA_SM90_DQ_SPLIT_TILE_BYTES);
    const size_t cap = (size_t)(max_heads < p->heads_kv ? (max_heads > 0 ? max_heads : 0) : p->heads_kv);
    if (heads > cap) heads = cap;
    pl.heads = (int)heads;
    pl.fac = pl.codes + heads * (size_t)L->ds_tiles_kv * 128 * 128;
    return pl;
}

/* The default mode takes the split (in dq_accum's room, or past total where the caller's workspace
 * has room) when it needs at most this many chunks and every chunk's grid clears the floor below,
 * else the reduce-adds; 0: never. Measured on an H100 (perf-notes "Backward kernel", sixty-fifth
 * session): with both, the training call 0.917-0.973x the reduce-adds' on the 5 of 12 workloads
 * that take it (16x4096, 16x1024, 64x1024, 32x2048, 128x512), 0.996-1.006x on the others; without
 * the floor 4x4096's was 1.12x. FLAMIA_SM90_DQ_SPLIT_CHUNKS=n in the environment overrides it
 * (cuda_api.cu). */
#define FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS 6

static inline int flamia_sm90_dq_chunks(const struct flamia_sm90_problem *p, int heads) {
    return heads > 0 ? (p->heads_kv + heads - 1) / heads : 0;
}
/* The main kernel's grid of the smallest chunk (chunks balanced, backward.cu): tile slots x its kv heads */
static inline long long flamia_sm90_dq_chunk_grid(const struct flamia_sm90_problem *p, int heads) {
    const int chunks = flamia_sm90_dq_chunks(p, heads);
    return chunks ? (long long)flamia_sm90_tile_slots(p->total_tokens, p->num_docs) * (p->heads_kv / chunks) : 0;
}
/* The default mode's split also wants every chunk's grid to hold at least this many CTAs an SM in
 * the grid's own order: each chunk's grid ends on its longest CTAs. 4x4096's 6 chunks of 264-396 CTAs
 * (2-3 an SM on an H100) lost 13 % to those tails while 16x4096's of 1056-1584 gained 7 %
 * (perf-notes, "Backward kernel", sixty-fifth session). FLAMIA_SM90_DQ_SPLIT_MIN_CTAS in the
 * environment overrides it and the two floors below. */
#define FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_PER_SM 8
/* GQA groups of at least FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP query heads whose chunks miss that floor
 * launch each chunk's CTAs longest first instead (bwd_order's table), down to this floor: the
 * training call 0.69-0.87x the reduce-adds' on gqa-16x1024, gqa-32x1024, gqa-16x2048 and five shapes
 * new to the rule (2.1-6.5 CTAs an SM). MHA's training call lost 2-10 % with its split launched
 * longest first (its documents' CTAs no longer resident together), as did the deterministic mode's
 * GQA at 8.7 CTAs an SM (+2.5 %). Both modes' plans follow this (sixty-sixth session);
 * FLAMIA_SM90_SPLIT_ORDER=0 / 1: never / always. */
#define FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_ORDERED 2
#define FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP 4
/* Smaller groups (MHA, 2) whose chunks miss the grid order's floor or limit launch longest first too
 * where the chunk's work outlasts its longest CTA (tile pairs / SMs >= the longest document's tiles:
 * else that CTA alone sets the chunk's time) and that document has at least
 * FLAMIA_SM90_DQ_SPLIT_LONG_TILES tiles (shorter ones gain too little over the reduce-adds), with this
 * floor and up to FLAMIA_SM90_DQ_SPLIT_LONG_CHUNKS chunks. Set from rule H's run, which had neither
 * count (logu:32768:32:16384:7, a chunk's work 0.70 of its longest CTA, 1.20x; 8x1024 and 12x1024
 * 1.01-1.02x); measured as rule I against rule F (H100, perf-notes "Backward kernel", sixty-seventh
 * session): training call 0.944-0.984x on six new shapes, 0.94-0.98x on the nine it was set from. */
#define FLAMIA_SM90_DQ_SPLIT_MIN_CTAS_LONG 4
#define FLAMIA_SM90_DQ_SPLIT_LONG_TILES 16
#define FLAMIA_SM90_DQ_SPLIT_LONG_CHUNKS 16
/* The paths of flamia_sm90_dq_plan_for_call (and flamia_sm90_dq_split_min_ctas's argument) */
enum { FLAMIA_SM90_SPLIT_GRID_ORDER = 0, FLAMIA_SM90_SPLIT_GQA_ORDERED = 1, FLAMIA_SM90_SPLIT_LONG_ORDERED = 2 };

/* A call's split dQ with this workspace size: in the room past total (what the deterministic mode's
 * workspace size adds) or in regions dq_accum, dq_turn and dq_room (unused by the split), whichever
 * holds more kv heads a chunk (at most max_heads; past total on a tie). The deterministic mode takes
 * it whenever a kv head fits (else the turns); the default mode when max_chunks > 0 and it needs at
 * most max_chunks chunks (else the reduce-adds); max_chunks < 0: neither (a debugging switch,
 * FLAMIA_SM90_DQ_SPLIT_CHUNKS=-1). */
static inline struct flamia_sm90_dq_plan flamia_sm90_dq_plan_of(const struct flamia_sm90_problem *p,
                                                                size_t workspace_bytes, int max_chunks,
                                                                int max_heads) {
    const struct flamia_sm90_layout L = flamia_sm90_layout_of(p);
    const struct flamia_sm90_dq_plan none = {0, 0, 0, 0, 0, 0};
    if (max_chunks < 0) return none;
    const struct flamia_sm90_dq_plan past =
        workspace_bytes > L.total ? flamia_sm90_dq_plan_at(p, &L, L.total, workspace_bytes - L.total, max_heads) : none;
    const struct flamia_sm90_dq_plan accum = flamia_sm90_dq_plan_at(p, &L, L.dq_accum, L.bwd_rows - L.dq_accum, max_heads);
    const struct flamia_sm90_dq_plan pl = past.heads && past.heads >= accum.heads ? past : accum; /* ties: past total */
    if (!p->deterministic && (max_chunks == 0 || flamia_sm90_dq_chunks(p, pl.heads) > max_chunks)) return none;
    return pl;
}

/* Kernels (return the launch's cudaError_t; never synchronize). */
cudaError_t flamia_sm90_quantize(const struct flamia_sm90_problem *p, const uint16_t *q,
                                 const uint16_t *k, const uint16_t *v, void *workspace,
                                 cudaStream_t stream);
cudaError_t flamia_sm90_forward(const struct flamia_sm90_problem *p, void *workspace,
                                uint16_t *o, float *lse, cudaStream_t stream);
/* Backward: quantizes dO, forms D, recomputes P in the forward's frames, writes BF16
 * dq [T][Hq][D], dk, dv [T][Hkv][D]. Needs the workspace quantize and forward filled. */
cudaError_t flamia_sm90_backward(const struct flamia_sm90_problem *p, void *workspace,
                                 const uint16_t *o, const float *lse, const uint16_t *dout,
                                 uint16_t *dq, uint16_t *dk, uint16_t *dv, cudaStream_t stream);

/* Whether flamia_sm90_backward launches its FP8 main kernel in the longest-first order
 * (and so fills region bwd_order) for this problem: backward.cu, use_order. */
#ifdef __cplusplus
extern "C" /* C linkage: tests/gpu/test_gpu_backward.c asks it which cases to check */
#endif
    int
    flamia_sm90_bwd_uses_order(const struct flamia_sm90_problem *p);

/* The most chunks the default mode's split dQ may take (FLAMIA_SM90_DQ_SPLIT_CHUNKS, else
 * FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS; cuda_api.cu), the fewest CTAs an SM its chunks' grids may
 * have, and setters for tests (chunks 0: the default mode never, -1: neither mode) */
#ifdef __cplusplus
extern "C" {
#endif
int flamia_sm90_dq_split_max_chunks(void);
void flamia_sm90_set_dq_split_max_chunks(int n);
int flamia_sm90_dq_split_min_ctas(int path); /* per SM (FLAMIA_SM90_DQ_SPLIT_MIN_CTAS, else the floor of the
                                             path: ..._MIN_CTAS_PER_SM, ..._MIN_CTAS_ORDERED or ..._MIN_CTAS_LONG) */
void flamia_sm90_set_dq_split_min_ctas(int n); /* every floor; -1: back to the defaults */
/* The chunks the workspace layout grows dq_accum's room for (problem.dq_room_chunks;
 * FLAMIA_SM90_DQ_ROOM_CHUNKS in the environment, else the macro) */
int flamia_sm90_dq_room_chunks(void);
int flamia_sm90_dq_room_growth(void); /* problem.dq_room_growth: FLAMIA_SM90_DQ_ROOM_GROWTH, environment or macro */
int flamia_sm90_dq_room_one_growth(void); /* problem.dq_room_one_growth: FLAMIA_SM90_DQ_ROOM_ONE_GROWTH, the same way */
/* The split dQ plan a backward call takes with this workspace on the current device (cuda_api.cu):
 * flamia_sm90_dq_plan_of with the limits above, its path (the grid's order; longest first for GQA
 * groups of FLAMIA_SM90_DQ_SPLIT_ORDER_GROUP or more whose chunks' grids miss the grid order's floor;
 * longest first for smaller groups' long documents, FLAMIA_SM90_DQ_SPLIT_LONG_*; FLAMIA_SM90_SPLIT_ORDER
 * forces one), and in the default mode that path's floor and chunk limit */
struct flamia_sm90_dq_plan flamia_sm90_dq_plan_for_call(const struct flamia_sm90_problem *p, size_t workspace_bytes);
/* The workspace layout the calls use for this recipe and shape (cuda_api.cu: the calls' own checks and
 * problem, so the host copy of cu_seqlens, max_seqlen and the dq_room settings count as they do there):
 * for tests and tools that read regions of a workspace a call filled. Needs no GPU. A refused shape
 * returns the workspace query's status and message and leaves *layout as it was. */
flamia_status flamia_sm90_layout_for_call(const flamia_recipe *recipe, const flamia_shape *shape,
                                          struct flamia_sm90_layout *layout);
#ifdef __cplusplus
}
#endif

/* Debug (flamia_cuda_debug_p_codes): separate instantiations of the forward and the FP8
 * backward main kernel that store, for every evaluated pair (query i, key j) of query head
 * h, the E4M3 P code each kernel feeds its tensor cores, at codes[(h T + i) T + j] (global
 * token indices; the arrays are first set to 0xFF). The forward also stores its row frame
 * m_i(n) after key tile n at frames[(h T + i) ntile + n], ntile = ceil(max_seqlen / 128)
 * (frames may be NULL), and writes neither O, lse nor row_frame. The backward needs the
 * workspace quantize and forward filled, writes do_codes, delta, dq_accum like
 * flamia_sm90_backward, and no gradient. FP8 kinds only (cudaErrorNotSupported otherwise). */
cudaError_t flamia_sm90_forward_debug(const struct flamia_sm90_problem *p, void *workspace, uint8_t *codes,
                                      float *frames, cudaStream_t stream);
cudaError_t flamia_sm90_backward_debug(const struct flamia_sm90_problem *p, void *workspace, const uint16_t *o,
                                       const float *lse, const uint16_t *dout, uint8_t *codes, cudaStream_t stream);

#endif
