/*
 * sm90_tiles.cuh - the 128-token tiles of a packed batch as a compact 1-D grid.
 *
 * Document d owns the slots base(d) .. base(d) + ceil(len_d / 128) - 1 with
 * base(d) = floor(cu[d] / 128) + d. These ranges never overlap (base(d+1) - base(d) =
 * floor(cu[d+1] / 128) - floor(cu[d] / 128) + 1 >= ceil(len_d / 128)) and all lie below
 * floor(T / 128) + num_docs, so a grid of that many CTAs covers every tile with at most
 * one idle slot per document, computed from cu_seqlens alone (no scan, no workspace, no
 * host copy). A grid of max_seqlen / 128 tiles per document (the one this replaces) left
 * 222k of 230k CTAs idle on 8192+224x256 x 16 heads. dev/tile_slots_check.py checks the
 * mapping (a transcription of doc_tile_of) on 3000 random packs.
 */
#ifndef FLAMIA_SM90_TILES_CUH
#define FLAMIA_SM90_TILES_CUH

#include <stdint.h>

#include "sm90_launch.h"

namespace flamia_sm90 {

constexpr int kTileTokens = FLAMIA_SM90_TILE_TOKENS;

/* CTAs a tile grid needs along the document axis (the count the workspace layout sizes by) */
__host__ __device__ inline int tile_slots(int total_tokens, int num_docs) { return flamia_sm90_tile_slots(total_tokens, num_docs); }

struct DocTile {
    int doc;    /* -1: an idle slot */
    int tile;   /* tile index inside the document, 0 = its first 128 tokens */
    int ntiles; /* ceil(len / 128) */
};

/* The last document d whose start, as `starts_by(cu[d], d)` judges it against the caller's
 * key, is at or before that key; document 0's always is. Two searches of the same rule:
 * warp_last_doc - every lane of a warp calls it with the same key (no shared memory, no
 * barrier): a 32-way search, each round one load per lane and a ballot, ~log32(num_docs)
 * rounds of L2-resident loads; uniform across the warp. last_doc - one thread's binary
 * search. */
template <class StartsBy>
__device__ __forceinline__ int warp_last_doc(const int32_t *cu, int num_docs, StartsBy starts_by) {
    const int lane = threadIdx.x & 31;
    int lo = 0, hi = num_docs; /* the answer is in [lo, hi) */
    while (hi - lo > 1) {
        const int step = (hi - lo + 31) >> 5;
        const int d = lo + lane * step;
        const unsigned m = __ballot_sync(0xffffffffu, d < hi && starts_by(__ldg(cu + d), d));
        lo += (31 - __clz(m)) * step; /* lane 0 (document lo) is always set */
        hi = min(lo + step, hi);
    }
    return lo;
}
template <class StartsBy>
__device__ __forceinline__ int last_doc(const int32_t *cu, int num_docs, StartsBy starts_by) {
    int lo = 0, hi = num_docs; /* the answer is in [lo, hi) */
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (starts_by(__ldg(cu + mid), mid)) lo = mid; else hi = mid;
    }
    return lo;
}

/* Document d's first position in V^T, Q^T, K^T (sm90_launch.h): 32-token aligned. */
__host__ __device__ inline int vt_start(int cu_d, int d) { return cu_d + flamia_sm90_vt_shift(cu_d, d); }

/* The document and tile of `slot`: the last document d whose first slot base(d) =
 * floor(cu[d] / 128) + d is at or before it, and the slot's place in it. doc_tile_of - every
 * lane of the warp with the same slot (uniform across the warp); doc_tile_of_thread - one
 * thread's own slot. */
struct SlotAtOrAfterBase {
    int slot;
    __device__ __forceinline__ bool operator()(int c, int d) const { return c / kTileTokens + d <= slot; }
};
__device__ __forceinline__ DocTile doc_tile_in(const int32_t *cu, int lo, int slot) {
    DocTile r;
    const int c0 = __ldg(cu + lo), len = __ldg(cu + lo + 1) - c0;
    r.ntiles = (len + kTileTokens - 1) / kTileTokens;
    r.tile = slot - (c0 / kTileTokens + lo);
    r.doc = r.tile < r.ntiles ? lo : -1;
    return r;
}
__device__ __forceinline__ DocTile doc_tile_of(const int32_t *cu, int num_docs, int slot) {
    return doc_tile_in(cu, warp_last_doc(cu, num_docs, SlotAtOrAfterBase{slot}), slot);
}
__device__ __forceinline__ DocTile doc_tile_of_thread(const int32_t *cu, int num_docs, int slot) {
    return doc_tile_in(cu, last_doc(cu, num_docs, SlotAtOrAfterBase{slot}), slot);
}

/* The document of token t < T: the last d with cu[d] <= t (one thread, num_docs >= 1). */
__device__ __forceinline__ int doc_of_token(const int32_t *cu, int num_docs, int t) {
    return last_doc(cu, num_docs, [=](int c, int) { return c <= t; });
}

/* The document whose V^T range holds position pos: the last d with vt_start <= pos. Every
 * lane of the warp calls it with the same pos (one round up to 32 documents). */
__device__ __forceinline__ int doc_of_vt_position(const int32_t *cu, int num_docs, int pos) {
    return warp_last_doc(cu, num_docs, [=](int c, int d) { return vt_start(c, d) <= pos; });
}

/* 32-token scale blocks (token-block recipes), document aligned, as seen from the window
 * [w0, w0 + 32) of a CTA that owns the blocks STARTING in it. Threads 0..63 call it (the
 * others return at once); the caller syncs before reading. Writes the block start of token
 * w0 + tid into s_tokbs[tid] (one binary search of cu_seqlens per token) and the token
 * range [a, b) of the window's blocks into s_range[0], s_range[1]: a = the first block start
 * >= w0, b = the first >= w0 + 32 (T when none: a window without a start lies inside a
 * block that reaches T). With s_vshift, also the V^T shift (flamia_sm90_vt_shift) of token
 * w0 + tid's document (for w0 + tid >= T: the row end's).
 * Shared by quantize.cu and the backward's dO quantization. */
__device__ __forceinline__ void window_blocks(const int32_t *cu, int num_docs, int T, int w0, int *s_tokbs,
                                              int *s_range, int *s_vshift = nullptr) {
    const int tid = threadIdx.x;
    if (tid >= 64) return;
    const int t = w0 + tid;
    bool start = false;
    int bs = 0;
    if (t < T) {
        const int lo = doc_of_token(cu, num_docs, t), c0 = __ldg(cu + lo);
        bs = c0 + ((t - c0) & ~31);
        start = bs == t;
        if (s_vshift) s_vshift[tid] = flamia_sm90_vt_shift(c0, lo);
    } else if (s_vshift) {
        s_vshift[tid] = flamia_sm90_vt_shift(T, num_docs);
    }
    s_tokbs[tid] = bs;
    const unsigned m = __ballot_sync(0xffffffffu, start);
    if ((tid & 31) == 0) s_range[tid >> 5] = m ? w0 + (tid & 32) + __ffs(m) - 1 : T;
}

} // namespace flamia_sm90

#endif
