/*
 * backward_launch.h - the interface between the backward's host orchestration (backward.cu)
 * and its kernel translation units: the kernels' parameter blocks and one host launch
 * function per step. The kernel templates are instantiated only in their own TU, behind
 * these non-template functions, so each kernel's device code is compiled there alone.
 */
#ifndef FLAMIA_SM90_BACKWARD_LAUNCH_H
#define FLAMIA_SM90_BACKWARD_LAUNCH_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "sm90_launch.h"

namespace flamia_bwd {

constexpr int kD = FLAMIA_SM90_BWD_HEAD_DIM;

/* 1. dO (bwd_pre_do) */
struct PreParams {
    const uint16_t *dout, *o;
    uint8_t *do_codes;
    int8_t *do_exp;
    uint16_t *do_bf16;
    float *delta;
    float *dq_acc; /* zeroed here for the main kernel; null: already zero (the forward did it) */
    int *dq_turn;  /* deterministic mode only (else null): zeroed here */
    int *err;
    const int32_t *cu;
    int T, Hq, num_docs;
    /* FP8 kinds: the main kernel's row constants (layout bwd_rows) from the forward's final
     * frame, lse, eQ and this kernel's D and eDO */
    float *rows;
    const float *row_frame, *lse;
    const int8_t *qe;
    float c;
};

/* 2. transposes (bwd_transpose) */
struct TrParams {         /* [0] Q, [1] K */
    const uint8_t *src[2]; /* [T][H][D] */
    uint8_t *dst[2];       /* [H][D][t_vpad], documents on 32-token boundaries (flamia_sm90_vt_shift) */
    int heads[2];
    const int32_t *cu;
    int num_docs, t_vpad;
};

/* 3. main kernel (bwd_simt, bwd_main_fp8) */
struct MainParams {
    const uint8_t *q8, *k8, *v8, *do8;
    const int8_t *qe, *ke, *ve, *doe;
    const uint16_t *qb, *kb, *vb, *dob;
    const float *row_frame, *lse, *delta;
    const float *rows; /* FP8 main kernel: the row constants (layout bwd_rows) */
    const uint16_t *dof16; /* FP8 main kernel: the dO codes as F16 values (region do_bf16) */
    float *dq_acc;
    int *dq_turn; /* deterministic dQ (DET kernels): the turn counters, zeroed per call */
    uint16_t *dk, *dv;
    const int32_t *cu;
    int T, Hq, Hkv, group, causal, hadamard;
    int num_docs; /* FP8 main kernel: its grid.x is the batch's tile slots (sm90_tiles.cuh) x nhk */
    int hk0, nhk; /* FP8 main kernel: the kv heads it takes, hk0 .. hk0 + nhk - 1 (all but in the split
                     dQ's chunks) */
    float c, scale, had_norm;
    const int *order; /* FP8 main kernel: CTA p takes item order[p] (-1: none), else item p (bwd_order) */
    /* the split deterministic dQ (main kernel mode kDqSplit): where the dS tiles (by TMA, launch_fp8's
     * map over ds_codes) and row factors go */
    uint8_t *ds_codes;
    int16_t *ds_fac; /* G per (key block, query), int16 [tiles][2][2][2][64] (backward_dq.cu) */
    const long long *ds_off; /* a document's first tile; query head h's at + (h - hk0 group) c(n) */
    long long ds_tiles;      /* the chunk's tiles (stores past them are dropped) */
};

/* The FP8 main kernel's dQ modes: reduce-adds in any order, the same in turns (deterministic),
 * or the dS codes stored for backward_dq.cu (deterministic, the split) */
enum { kDqAdds = 0, kDqTurns = 1, kDqSplit = 2 };

/* 5. the split deterministic dQ (backward_dq.cu): dQ = sum over key tiles of the stored dS codes
 * times K, per 32-key block scaled by its row factor 2^G scale, in a fixed order, BF16 out */
struct DqParams {
    const uint8_t *ds;      /* region ds_codes */
    const int16_t *fac;     /* region ds_fac */
    const long long *off;   /* region ds_off */
    int *next;              /* region ds_next: this chunk's counter (dq_split_offsets zeroes them all) */
    uint16_t *dq;
    const int32_t *cu;
    int T, Hq, group, num_docs, causal, hadamard, t_vpad;
    int h0, nh;             /* the chunk's query heads h0 .. h0 + nh - 1 */
    int stride_h;           /* query heads a chunk's offsets make room for (ds_off) */
    int chunks;             /* counters dq_split_offsets zeroes */
    long long tiles;
    float had_norm, scale; /* scale: softmax_scale (v149: the factors are stored as G, int16) */
    int *err;               /* region err_flag (dq_split_offsets: FLAMIA_SM90_BAD_SPLIT_TILES) */
};

/* backward_prep.cu */
cudaError_t launch_pre_do(enum flamia_sm90_kind kind, const PreParams &pp, cudaStream_t stream);
cudaError_t launch_transpose(const TrParams &tp, cudaStream_t stream);
cudaError_t launch_dq_out(const float *dq_acc, uint16_t *dq, size_t rows, int hadamard, cudaStream_t stream);
/* the main kernel's longest-first launch order into order[slots Hkv] (region bwd_order) */
cudaError_t launch_order(const int32_t *cu, int num_docs, int T, int Hkv, int causal, int *order,
                         cudaStream_t stream);
/* backward_simt.cu; det: deterministic dQ (mp.dq_turn) */
cudaError_t launch_main_simt(enum flamia_sm90_kind kind, bool det, const MainParams &mp, int num_docs, int max_seqlen,
                             cudaStream_t stream);
/* backward_fp8.cu, FP8 kinds: Q^T, K^T (t_vpad positions a row) read by TMA; dbg_codes != NULL:
 * the debug instantiation (flamia_sm90_backward_debug) */
cudaError_t launch_main_fp8(enum flamia_sm90_kind kind, int dq_mode, const MainParams &mp, uint8_t *qt_codes,
                            uint8_t *kt_codes, int t_vpad, uint8_t *dbg_codes, cudaStream_t stream);
/* backward_dq.cu: the documents' first tiles (ds_off) and the item counter, before the main kernel;
 * then dQ itself, after it */
cudaError_t launch_dq_split_offsets(const DqParams &dp, cudaStream_t stream);
cudaError_t launch_dq_split(const DqParams &dp, uint8_t *kt_codes, cudaStream_t stream);

} // namespace flamia_bwd

#endif
