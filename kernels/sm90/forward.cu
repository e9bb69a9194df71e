/*
 * forward.cu - the Hopper (sm_90a) attention forward of FLAMIA-H.
 *
 * Computes docs/numerics.md section 3 on the quantized operands that
 * quantize.cu left in the workspace (layout: sm90_launch.h):
 *   S = Q K^T     FP8 wgmma (QGMMA) on the E4M3 codes, m64n128k32, FP32 accumulate;
 *                 row factor 2^eQ folded into c = softmax_scale*log2(e), column
 *                 factor 2^eK applied to the accumulator (exact powers of two);
 *   frames        per key tile of 128 (document aligned), diagonal tile first, down
 *                 to tile 0: m <- max(m, ceil(max t)), an integer, so every rescale
 *                 of O and l is an exact power of two;
 *   P             E4M3 codes of exp2(t - m + 8) with V's per-token exponent folded in
 *                 (GPU latitude of numerics.md 3.5, see below); the exponential is the
 *                 hardware's ex2(t) times 2^-(m - 8 + ...) (sm90_exp2.cuh), and a work item
 *                 with a row outside that form's range is recomputed by a second launch
 *                 of the kernel with the split (SPLIT; usually it finds nothing to do);
 *   O += P V      FP8 wgmma with P from registers, V^T (vt_codes) from shared memory; every
 *                 flamia_cuda_set_o_sum_interval (default 4) key tiles the accumulator
 *                 is added into an FP32 sum in shared memory and restarted (the tensor
 *                 core's FP8 accumulation drops the low bits of small new terms against a
 *                 large O: numerics.md 8).
 * The BF16 kind (control path) runs the same loop with BF16 wgmma (m64n128k16) on
 * q_bf16/k_bf16/v_bf16 and P = bf16(exp2(t - m)).
 *
 * V's exponent (GPU latitude): for row i let E_i = max eV_j over the keys the row
 * may see (a prefix max over the document: causal, so O_i never depends on later
 * tokens). P is encoded as e4m3(exp2(t - m + 8) * 2^(eV_j - E_i)) (<= 256, never
 * clamps), i.e. exp2 is evaluated at t - (m - 8 + E_i) and multiplied by 2^eV_j;
 * l accumulates the same unquantized exponentials in the same frame, so
 * O = O_acc (1 / l_acc) and lse = ln2 (m - 8 + E_i + log2 l_acc). This differs from
 * the definition only where the folded P value is an E4M3 subnormal.
 *
 * P layout. FP8 wgmma takes A (P) from registers in the layout of its k = 32
 * fragment (thread t of a quad holds keys 4t..4t+3 and 16+4t..16+4t+3), while the
 * S accumulator gives thread t the columns 8j+2t, 8j+2t+1. Instead of a byte
 * shuffle, the K tile is staged with its rows permuted: shared-memory row c holds
 * key pi(c), pi(32b + 8j + 2t + e) = 32b + 16(j>>1) + 4t + 2(j&1) + e, so the
 * accumulator's columns are already the A fragment's keys. (BF16: identity.)
 *
 * Work: a persistent grid (one CTA per SM) over the (query head, 128-query tile) items,
 * each document's heaviest tiles first; the producer prepares the next item (Q tile, row
 * constants, first K / V tiles) while the consumers finish this one.
 * Warp specialization: warpgroup 0 is the producer (setmaxnreg 40), warpgroups 1 and 2
 * consume 64 query rows each (setmaxnreg 232). Stages (3 FP8, 2 BF16) hand over through
 * full/empty mbarriers. Producer: Q (FP8: one TMA box, flamia_tma_rows; BF16: cp.async);
 * K (FP8: rows permuted as above, by one TMA box through sm90_tma_host.cuh's permuted-stride
 * map, cp.async for a tile crossing T; BF16: cp.async); V^T by TMA
 * from vt_codes, where every document starts on a 32-token boundary (flamia_sm90_vt_shift:
 * a TMA box at an unaligned token coordinate faults); BF16 (and FP8 without TMA): V rows
 * (v_codes / v_bf16) by cp.async into a staging buffer and a byte/half transpose in shared
 * memory. Consumers: S(n+1) = Q K(n+1)^T is issued together with O += P(n) V(n), and the
 * softmax of S(n+1) runs while P V is on the tensor cores; optional ping-pong (named
 * barriers) orders the two consumers' wgmma issue. Epilogue (FP8 kinds): O via stmatrix into
 * a swizzled shared-memory tile per warpgroup, then 16-byte row stores. In the training
 * call (Params::dq_zero) the producer also zeroes the backward's dq_accum rows of each item,
 * in kernel instantiations of their own (DQZ). The recipe's row_sum = P values (numerics.md
 * 3.4) has instantiations of its own too (LPV: l adds P's rounded values instead of the
 * exponentials). Measured numbers: docs/perf-notes.md.
 */
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "flamia_formats.h"
#include "forward_wgmma.cuh"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_launch.h"
#include "sm90_ptx.cuh"
#include "sm90_tiles.cuh"
#include "sm90_tma_host.cuh"

namespace flamia_fwd {

constexpr int kThreads = 384; /* warpgroup 0: producer; warpgroups 1, 2: consumers (64 rows each) */
constexpr int kBM = 128;      /* queries per CTA */
constexpr int kBN = 128;      /* keys per tile (recipe tile_k) */
constexpr int kD = FLAMIA_SM90_FWD_HEAD_DIM;
enum { KIND_BF16 = 0, KIND_BLOCK = 1, KIND_TOKEN = 2 }; /* bf16 | mxfp8 (32-token blocks) | mxfp8-exact */
/* FP8 kinds: O's P V products accumulate in the wgmma accumulator for this many key tiles
 * (the default of flamia_fwd_o_flush, set by flamia_cuda_set_o_sum_interval), then are added
 * into an FP32 sum in shared memory (docs/numerics.md 8: the FP8 tensor core's accumulation
 * truncates small new terms against a large running O, a bias that grows with the row's
 * length; measured there per interval). */
#ifndef FLAMIA_SM90_FWD_O_FLUSH
#define FLAMIA_SM90_FWD_O_FLUSH 4
#endif
/* the loop adds after even key tiles only (in the odd steps that follow them) */
static_assert(FLAMIA_SM90_O_SUM_INTERVAL_OK(FLAMIA_SM90_FWD_O_FLUSH), "FLAMIA_SM90_FWD_O_FLUSH: 0 or a power of two from 2 to 64");

struct Params {
    const uint8_t *q8, *k8, *v8;
    const int8_t *qe, *ke, *ve;
    const uint16_t *qb, *kb, *vb;
    float *row_frame;
    uint16_t *o;
    float *lse;
    const int32_t *cu;
    int T, Hq, Hkv, group, causal;
    float c; /* softmax_scale * log2(e), FP32 */
    int use_tma; /* FP8: V^T, K and Q tiles by TMA (else cp.async and the shared-memory transpose) */
    int o_tma;   /* FP8 with use_tma: a warpgroup's 64 O rows inside the document leave by TMA stores */
    int o_flush; /* FP8 with TMA: O's accumulator added into its FP32 sum every o_flush key tiles (2..64, a power of two; 0: never) */
    int num_docs; /* work items: Hq x the batch's tile slots (sm90_tiles.cuh) */
    /* workspace fwd_work (header and bits zeroed before the launch; its words: sm90_launch.h):
     * the counters, a bit per item (set: in the list) and the list of items the split kernel
     * recomputes */
    int *work;
    float *dq_zero; /* non-null (train_step, P->dq_zero_in_forward): dq_accum, zeroed per item by the DQZ kernels */
};
/* Work items whose rows leave the direct exponential's range (sm90_exp2.cuh) are recomputed
 * with the split by a second launch of the same kernel (SPLIT): a per-tile branch between
 * the two in one kernel cost 12-14 % of the forward's time without ever being taken
 * (measured, docs/perf-notes.md), a flag and a list cost nothing. */
__host__ __device__ inline int fwd_items(int Hq, int T, int num_docs) { return Hq * flamia_sm90::tile_slots(T, num_docs); }
__host__ __device__ inline int *fwd_split_bits(int *work) { return work + FLAMIA_SM90_FWD_HEADER; }
__host__ __device__ inline int *fwd_split_list(int *work, int items) { return fwd_split_bits(work) + (items + 31) / 32; }

using namespace flamia_sm90; /* PTX helpers: sm90_ptx.cuh */

/* LPV's decode of two P codes into floats (a dev switch, 0 by default): 0 the conversions
 * (flamia_e4m3x2_values: one F2FP and two HADD2 a pair), 1 integer bit moves and an FMUL a
 * value (flamia_e4m3x2_values_bits, no F2FP). The same values (test_gpu_e4m3_cvt); 1 is
 * 9-14 % slower on the forward (H200, docs/perf-notes.md, "Row sum over P's values"): the
 * body's cost follows its instruction count, not the conversion pipe. */
#ifndef FLAMIA_SM90_LSUM_BITS
#define FLAMIA_SM90_LSUM_BITS 0
#endif
__device__ __forceinline__ float2 lpv_values(uint32_t codes16) {
    return FLAMIA_SM90_LSUM_BITS ? flamia_e4m3x2_values_bits(codes16) : flamia_e4m3x2_values(codes16);
}

__device__ __forceinline__ uint32_t bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

__device__ __forceinline__ void mbar_arrive_cnt(uint32_t bar, int n) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(n) : "memory");
}
/* The kernels' tensor maps: V^T's, the K codes' permuted-stride map and the Q codes' row map (fwd_setup) */
struct FwdMaps {
    CUtensorMap vt, k, q, o; /* o: BF16 O [T][Hq * 128], boxes of 64 columns x 64 rows (o_tma) */
};

/* ------------------------------------------------------------ shared memory */
template <int KIND, int S> struct Smem {
    static constexpr bool FP8 = KIND != KIND_BF16;
    static constexpr int kTileBytes = FP8 ? kBN * kD : kBN * kD * 2; /* K or V tile */
    static constexpr int kQBytes = FP8 ? kBM * kD : kBM * kD * 2;
    static constexpr int kQBufs = FP8 ? 2 : 1;        /* Q tiles: the next item's loads under this one (BF16: no room) */
    static constexpr int kQ = 0;
    static constexpr int kK = kQ + kQBufs * kQBytes;
    static constexpr int kV = kK + S * kTileBytes;
    static constexpr int kNStg = FP8 ? 2 : 1;         /* V staging buffers (token-major rows) */
    static constexpr int kStg = kV + S * kTileBytes;
    static constexpr int kCol = kStg + kNStg * kTileBytes; /* float2 [S][128]: per column (TOKEN) or per block (BLOCK) */
    static constexpr int kFull = kCol + S * kBN * 8;  /* uint64 [S] */
    static constexpr int kEmpty = kFull + 8 * S;      /* uint64 [S] */
    static constexpr int kQFull = kEmpty + 8 * S;     /* uint64 [kQBufs] item ready, then [kQBufs] item read */
    static constexpr int kE = kQFull + 16 * kQBufs;   /* int [kQBufs][128] row E */
    static constexpr int kQe = kE + kQBufs * 128 * 4; /* int [kQBufs][128] row Q exponent */
    static constexpr int kRec = kQe + kQBufs * 128 * 4; /* int4 [kQBufs] item record, then int4 [kQBufs] (item index, 0, 0, 0) */
    static constexpr int kScr = kRec + 32 * kQBufs;   /* int [128] prefix, [4] warp maxima, [2] next item (producer) */
    /* FP8: bf16 [2][64][128] O staging (epilogue); 1024-byte aligned: a TMA store reads it with
     * the 128-byte swizzle, whose pattern is taken from the address bits */
    static constexpr int kO = (kScr + 136 * 4 + 1023) / 1024 * 1024;
    static constexpr int kOBytes = FP8 ? 2 * 64 * kD * 2 : 0;     /* BF16: no room; direct stores */
    static constexpr int kBytes = kO + kOBytes + 1024; /* + alignment slack */
};

/* ------------------------------------------------------------ softmax of one tile
 * sacc: the warpgroup's S accumulator (rows g, g+8 of this thread; columns 8j+2t+e).
 * Updates the row frames m and sums l, returns the O rescale factors in fo and the
 * P fragment (A operand of the P V wgmma) in pa. */
template <int KIND> struct PRegs { static constexpr int N = KIND == KIND_BF16 ? 32 : 16; };

/* Debug capture (flamia_cuda_debug_p_codes; only the fwd_kernel_dbg instantiation reads
 * it): the P code of every evaluated pair at the point it enters the P V operand, and the
 * row frame m_i(n) after each key tile. codes [Hq][T][T], frames [Hq][T][ntile]. */
struct DbgOut {
    uint8_t *codes;
    float *frames; /* may be NULL */
    int ntile;
};
/* per thread: the rows (g, g+8) of the capture arrays, doc-local key 0; NULL for pad rows */
struct DbgRow {
    uint8_t *code[2];
    float *frame[2];
};

/* The exponential's range test for an item's unmasked tiles, made once at its end (m: the
 * row's last frame, E: its V exponent). Frames only grow along an item and the masked first
 * tile passed the full test (m >= -60), so the tiles' frames lie in [-60, m]. On an unmasked
 * tile every block has eV_b <= E (E is the max over the keys the row sees), so mxfp8's folded
 * frames M'_b = m - 8 + E - max(eV_b, E - 30) lie in [m - 8, m + 22]: direct for m <= 98;
 * E in [-58, 36] keeps 2^-(m - 8 + E) and 2^(E -+ 30) normal for the FAST form. The other
 * kinds' frame M = m - 8 + E (BF16: m) grows with m. */
template <int KIND>
__device__ __forceinline__ bool item_direct_ok(float m, int E) {
    if (KIND == KIND_BLOCK) return (m <= 98.f) & (E >= -58) & (E <= 36);
    return exp_frame_direct_ok(m, KIND == KIND_BF16 ? m : m - 8.f + (float)E);
}

template <int KIND, bool MASK, bool DBG, bool SPLIT, bool LPV>
__device__ __forceinline__ bool softmax_tile(float (&sacc)[64], uint32_t (&pa)[PRegs<KIND>::N], float (&m_run)[2],
                                             float (&l_run)[2], float (&fo)[2], const float (&crow)[2],
                                             const int (&Erow)[2], const float2 *col, int n, int len,
                                             int causal, const int (&qi)[2], int tq, const DbgRow &dr) {
    constexpr bool FP8 = KIND != KIND_BF16;
    /* IMAX (mxfp8's unmasked tiles): the block and row maxima on the scores' bit patterns as
     * signed integers, three at a time (VIMNMX3, Hopper's DPX; Hopper has no 3-input FMNMX).
     * That order is the float order wherever a positive value takes part, so the row
     * maximum is exact whenever it is positive; a row whose maximum is not positive (or is
     * NaN) sends the warp through the FMNMX form below, which gives the same bits. */
    constexpr bool IMAX = KIND == KIND_BLOCK && !MASK;
    /* the i-th (0..7) of this thread's scores of row hh in 32-key block b */
    auto block_score = [&](int hh, int b, int i) { return sacc[4 * (4 * b + (i >> 1)) + 2 * hh + (i & 1)]; };
    /* ---- pass 1: masked maxima */
    float mxb[2][4];
#pragma unroll
    for (int hh = 0; hh < 2; hh++)
#pragma unroll
        for (int b = 0; b < 4; b++) mxb[hh][b] = -INFINITY;
    /* the mask as one compare per element against a per-row limit: key = n kBN + kc +
     * 4 tq (FP8: flamia_fp8_perm_row's t field; BF16: 2 tq) with kc a constant of (j, e)
     * once unrolled,
     * and key < len && (!causal || key <= qi) <=> key < (causal ? min(len, qi + 1) : len) */
    int rlim[2];
#pragma unroll
    for (int hh = 0; hh < 2; hh++)
        rlim[hh] = (causal ? min(len, qi[hh] + 1) : len) - n * kBN - (FP8 ? 4 : 2) * tq;
    /* the warp's key limit in this tile: the 32-key blocks at or past it are masked for all of
     * its 16 rows (on the diagonal tile 3, 3, 2, 2, 1, 1, 0, 0 of the 4 for warps 0-7) and skip
     * both passes; their P codes are 0, as ex2(-inf) gives, and l gains nothing from them */
    const int wlim = MASK ? __reduce_max_sync(0xffffffffu, max(rlim[0], rlim[1]) + (FP8 ? 4 : 2) * tq) : kBN;
#pragma unroll
    for (int b = 0; b < 4; b++) {
        if (MASK && 32 * b >= wlim) continue; /* one warp-uniform branch a block */
#pragma unroll
        for (int j = 4 * b; j < 4 * b + 4; j++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int c = 8 * j + 2 * tq + e;
                float kf = 1.f;
                if (KIND == KIND_TOKEN) kf = col[c].x;
                const int kc = FP8 ? flamia_fp8_perm_row(8 * j + e) : 8 * j + e;
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    float u = sacc[4 * j + 2 * hh + e];
                    if (KIND == KIND_TOKEN) u *= kf;
                    if (MASK) u = kc < rlim[hh] ? u : -INFINITY;
                    sacc[4 * j + 2 * hh + e] = u;
                    if (!IMAX) mxb[hh][j >> 2] = fmaxf(mxb[hh][j >> 2], u);
                }
            }
        }
    }
    if (IMAX) {
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
#pragma unroll
            for (int b = 0; b < 4; b++) {
                int x[8];
#pragma unroll
                for (int i = 0; i < 8; i++) x[i] = __float_as_int(block_score(hh, b, i));
                mxb[hh][b] = __int_as_float(
                    __vimax3_s32(__vimax3_s32(x[0], x[1], x[2]), __vimax3_s32(x[3], x[4], x[5]), max(x[6], x[7])));
            }
    }
    /* ---- frames. BLOCK: column factor kf_b per 32-key block, folded into cc = kf_b * c_i
     * (exact); max_j fl(u_j * cc) = fl(max_j u_j * cc) as cc > 0 and rounding is monotone. */
    float cc[2][4], Mf[2][4], sc[2][4], rvg[2][4]; /* Mf: the exponent frame M'_b, sc = 2^-M'_b */
    /* FAST (mxfp8's unmasked tiles in the main kernel): sc and rvg from the producer's 2^eV_b
     * and 2^-eV_b with one FMNMX (and FMUL) each, and no range test here: the frames only grow
     * along an item, so the masked first tile's test and item_direct_ok at its end cover every
     * tile (see there). The same values as the general form wherever that holds. */
    constexpr bool FAST = KIND == KIND_BLOCK && !MASK && !SPLIT;
    bool direct = true; /* exp_frame_direct_ok for both rows and every block (masked tile, SPLIT) */
    float blk_kf[4], blk_ev[4], blk_vg[4], blk_rv[4];
    if (KIND == KIND_BLOCK) {
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const float2 v = col[b];
            blk_kf[b] = v.x;
            blk_ev[b] = v.y;
            if (FAST) {
                const float2 w = col[4 + b];
                blk_vg[b] = w.x;
                blk_rv[b] = w.y;
            }
        }
    }
    float tmx[2];
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
#pragma unroll
        for (int b = 0; b < 4; b++) cc[hh][b] = KIND == KIND_BLOCK ? blk_kf[b] * crow[hh] : crow[hh];
        if (IMAX) { /* integer maxima propagate a NaN, which the test below catches */
            int t[4];
#pragma unroll
            for (int b = 0; b < 4; b++) t[b] = __float_as_int(mxb[hh][b] * cc[hh][b]);
            int ti = __vimax3_s32(t[0], t[1], max(t[2], t[3]));
            ti = max(ti, __shfl_xor_sync(0xffffffffu, ti, 1));
            ti = max(ti, __shfl_xor_sync(0xffffffffu, ti, 2));
            tmx[hh] = __int_as_float(ti);
        }
    }
    if (!IMAX || __any_sync(0xffffffffu, !(tmx[0] > 0.f) || !(tmx[1] > 0.f))) {
        if (IMAX) { /* the FMNMX form's block maxima */
#pragma unroll
            for (int hh = 0; hh < 2; hh++)
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    float m = -INFINITY;
#pragma unroll
                    for (int i = 0; i < 8; i++) m = fmaxf(m, block_score(hh, b, i));
                    mxb[hh][b] = m;
                }
        }
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            float tmax = -INFINITY;
#pragma unroll
            for (int b = 0; b < 4; b++) tmax = fmaxf(tmax, mxb[hh][b] * cc[hh][b]);
            tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 1));
            tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, 2));
            tmx[hh] = tmax;
        }
    }
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        const float tmax = tmx[hh];
        float mnew = fmaxf(m_run[hh], ceilf(tmax));
        if (mnew == -INFINITY) mnew = 0.f; /* a padding row with no key yet */
        const float f = (m_run[hh] == -INFINITY) ? 0.f : flamia_pow2f(int_of_integral(m_run[hh] - mnew));
        fo[hh] = f;
        l_run[hh] *= f;
        m_run[hh] = mnew;
        if (DBG && tq == 0 && dr.frame[hh]) dr.frame[hh][n] = mnew;
        /* exp2 argument: t - (m - 8 + E_i) [+ eV_b for BLOCK, folded V exponent] */
        const float M = FP8 ? mnew - 8.f + (float)Erow[hh] : mnew;
        if (FAST) {
            /* 2^-M normal, 2^(E-30) and 2^(30-E) normal: item_direct_ok's row range. Then
             * max(2^eV_b, 2^(E-30)) = 2^max(eV_b, E-30) and sc = 2^-M'_b exactly. */
            const float sM = __uint_as_float((uint32_t)(127 - int_of_integral(M)) << 23);
            const float vE = flamia_pow2f(Erow[hh] - 30), rE = flamia_pow2f(30 - Erow[hh]);
#pragma unroll
            for (int b = 0; b < 4; b++) {
                sc[hh][b] = sM * fmaxf(blk_vg[b], vE);
                rvg[hh][b] = fminf(blk_rv[b], rE);
            }
        }
#pragma unroll
        for (int b = 0; b < 4 * !FAST; b++) {
            if (KIND == KIND_BLOCK) {
                /* clamp eV_b >= E_i - 30: such a block's P codes are 0 either way (< 2^-22),
                 * and l gets the exact value back through rvg */
                const float ev = fmaxf(blk_ev[b], (float)(Erow[hh] - 30));
                Mf[hh][b] = M - ev;
                rvg[hh][b] = flamia_pow2f(-int_of_integral(ev));
            } else {
                Mf[hh][b] = M;
                rvg[hh][b] = 1.f;
            }
            /* rows past the document end (their outputs are never stored) do not count: their
             * scores come from the next document's Q codes without its exponents */
            if (MASK || SPLIT) /* no short circuit below: no branch */
                direct &= (qi[hh] >= len) | exp_frame_direct_ok(mnew, Mf[hh][b]);
            sc[hh][b] = __uint_as_float((uint32_t)(127 - int_of_integral(fminf(fmaxf(Mf[hh][b], -100.f), 120.f))) << 23);
        }
    }
    /* ---- pass 2: exponentials, row sums, P codes. E(t, M'_b) of sm90_exp2.cuh: ex2(t) 2^-M'_b,
     * the split in the SPLIT kernel (the same value where the direct form is valid; the
     * returned flag says whether it was for this thread's rows). */
#pragma unroll
    for (int b = 0; b < 4; b++) {
        if (MASK && 32 * b >= wlim) { /* a block masked for every row of the warp (above) */
#pragma unroll
            for (int j = 4 * b; j < 4 * b + 4; j++) {
                if (FP8) flamia_p_fragment_put(pa, j, 0u, 0u);
                else flamia_p16_fragment_put(pa, j, 0u, 0u);
            }
            continue;
        }
#pragma unroll
        for (int j = 4 * b; j < 4 * b + 4; j++) {
            float pv[4];
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int c = 8 * j + 2 * tq + e;
                float vg = 1.f;
                if (KIND == KIND_TOKEN) vg = col[c].y;
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const float u = sacc[4 * j + 2 * hh + e];
                    /* numerics.md 3.3: t = fl(u cc), E(t, M'_b) with M'_b the folded frame (an
                     * integer); the rounded part sees t alone, as in the backward. A masked
                     * u = -inf gives ex2(-inf) = 0 (the split: 0 by the select). */
                    float t = __fmul_rn(u, cc[hh][b]);
                    /* A masked u = -inf times a factor that underflowed to 0 gave t = NaN: mxfp8's
                     * cc = 2^eK_b c_i for an all-zero Q block against an all-zero K block (a padded
                     * document's tail; found by experiments/packed_memory), mxfp8-exact's c_i =
                     * c 2^eQ_i for an all-zero Q block under a softmax scale below ~2^-23 (bf16's c
                     * never vanishes; one form serves every kind). Back to -inf by one FMNMX (the
                     * same number where t is one). */
                    if (MASK) t = fmaxf(t, -INFINITY);
                    float ev;
                    if (SPLIT) {
                        ev = exp_frame_split(t, Mf[hh][b]);
                        if (MASK) ev = (u == -INFINITY) ? 0.f : ev;
                    } else {
                        ev = exp_frame_direct(t, sc[hh][b]);
                    }
                    /* LPV (recipe row_sum = P values, numerics.md 3.4): l adds the rounded values
                     * P V uses, after the conversion below */
                    if (KIND == KIND_BLOCK) {
                        if (!LPV) l_run[hh] = fmaf(ev, rvg[hh][b], l_run[hh]);
                        pv[2 * hh + e] = ev;
                    } else {
                        if (!LPV) l_run[hh] += ev;
                        pv[2 * hh + e] = KIND == KIND_TOKEN ? ev * vg : ev;
                    }
                }
            }
            if (FP8) {
                /* r0: row g's two codes, r1: row g + 8's; their place in P's A fragment:
                 * flamia_p_fragment_put (sm90_e4m3.cuh) */
                const uint32_t r0 = flamia_cvt_e4m3x2(pv[0], pv[1]);
                const uint32_t r1 = flamia_cvt_e4m3x2(pv[2], pv[3]);
                if (LPV) {
                    /* the codes' values back in FP32 (E4M3 -> F16 -> F32, each exact), times the
                     * block's 2^-eV_b (mxfp8) or the key's 2^-eV_j (mxfp8-exact: P carries 2^eV_j;
                     * the reciprocal of a power of two by its bits, 2^127 for vg = 0, whose codes are 0) */
                    float w[2];
#pragma unroll
                    for (int e = 0; e < 2; e++)
                        w[e] = KIND == KIND_TOKEN ? __uint_as_float(0x7F000000u - __float_as_uint(col[8 * j + 2 * tq + e].y)) : 0.f;
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        const float2 q = lpv_values(hh ? r1 : r0);
                        if (KIND == KIND_BLOCK) {
                            l_run[hh] = fmaf(q.x, rvg[hh][b], l_run[hh]);
                            l_run[hh] = fmaf(q.y, rvg[hh][b], l_run[hh]);
                        } else {
                            l_run[hh] = fmaf(q.x, w[0], l_run[hh]);
                            l_run[hh] = fmaf(q.y, w[1], l_run[hh]);
                        }
                    }
                }
                flamia_p_fragment_put(pa, j, r0, r1);
                if (DBG) { /* r0: row g, columns c = 8j + 2tq + e (bytes e); r1: row g + 8 */
#pragma unroll
                    for (int hh = 0; hh < 2; hh++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int key = n * kBN + flamia_fp8_perm_row(8 * j + 2 * tq + e);
                            if (dr.code[hh] && key < len && (!causal || key <= qi[hh]))
                                dr.code[hh][key] = (uint8_t)((hh ? r1 : r0) >> (8 * e));
                        }
                }
            } else {
                const uint32_t r[2] = {bf16x2(pv[0], pv[1]), bf16x2(pv[2], pv[3])};
                flamia_p16_fragment_put(pa, j, r[0], r[1]);
                if (LPV) /* BF16 to FP32 is the bits shifted */
#pragma unroll
                    for (int hh = 0; hh < 2; hh++) {
                        const uint32_t w = r[hh];
                        l_run[hh] += __uint_as_float(w << 16) + __uint_as_float(w & 0xFFFF0000u);
                    }
            }
        }
    }
    return direct;
}

/* S = Q K^T for this warpgroup's 64 rows (issue only) */
template <int KIND>
__device__ __forceinline__ void issue_qk(float (&sacc)[64], uint32_t sQa, uint32_t sKa, int cw) {
    const uint64_t dq = desc_sw128(sQa + cw * 8192, 16, 1024), dk = desc_sw128(sKa, 16, 1024);
    if (KIND != KIND_BF16) {
#pragma unroll
        for (int k = 0; k < 4; k++) wgmma_e4m3_ss(sacc, desc_advance(dq, k * 32), desc_advance(dk, k * 32), k);
    } else {
#pragma unroll
        for (int k = 0; k < 8; k++)
            wgmma_bf16_ss(sacc, desc_advance(dq, (k >> 2) * (kBM * 128) + (k & 3) * 32),
                          desc_advance(dk, (k >> 2) * (kBN * 128) + (k & 3) * 32), k);
    }
}
/* O += P V (issue only) */
template <int KIND>
__device__ __forceinline__ void issue_pv(float (&oacc)[64], const uint32_t (&pa)[PRegs<KIND>::N], uint32_t sVa, const Params &p) {
    const uint64_t dv = desc_sw128(sVa, 16, 1024);
    if (KIND != KIND_BF16) {
#pragma unroll
        for (int b = 0; b < 4; b++) {
            const uint32_t a[4] = {pa[4 * b], pa[4 * b + 1], pa[4 * b + 2], pa[4 * b + 3]};
            wgmma_e4m3_rs(oacc, a, desc_advance(dv, b * 32), 1);
        }
    } else {
#pragma unroll
        for (int kk = 0; kk < 8; kk++) {
            const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
            wgmma_bf16_rs(oacc, a, desc_advance(dv, (kk >> 2) * (kBN * 128) + (kk & 3) * 32), 1);
        }
    }
}

/* O's FP32 sum s (a float4 of this thread's oacc[4i .. 4i + 3] slots, rows g, g + 8) brought to
 * the current frame by the rows' rescale fs since it was formed, plus the accumulator's part */
__device__ __forceinline__ float4 osum_fold(float4 s, const float (&fs)[2], const float (&oacc)[64], int i) {
    return make_float4(fmaf(s.x, fs[0], oacc[4 * i]), fmaf(s.y, fs[0], oacc[4 * i + 1]),
                       fmaf(s.z, fs[1], oacc[4 * i + 2]), fmaf(s.w, fs[1], oacc[4 * i + 3]));
}

/* ------------------------------------------------------------------ kernel */
/* Persistent CTAs (one per SM): CTA b takes the work items (query head, tile slot) b,
 * b + gridDim.x, ... in the order of sm90_tiles.cuh (query head fastest, each document's
 * heaviest tile first). The producer warpgroup walks that list ahead of the consumers: per
 * item it loads the Q tile into one of kQBufs buffers, computes the rows' V exponent E_i
 * and reads their Q exponents, writes the item's record (document start, length, first
 * query, head) and arrives on qfull; then it streams the item's K / V tiles through the
 * S-stage ring, whose stage and phase run on across items (tile counter g). The consumers
 * take items from the records until the end record (length < 0), so the next item's Q,
 * row constants and first tiles load under this item's last tiles and epilogue instead of
 * in a new CTA's prologue. */
template <int KIND, int S, bool PP, bool DBG, bool SPLIT, bool DQZ = false, bool LPV = false>
__device__ __forceinline__ void fwd_body(const FwdMaps &maps, const Params &p, const DbgOut &dbg) {
    using SM = Smem<KIND, S>;
    constexpr bool FP8 = KIND != KIND_BF16;
    constexpr int QB = SM::kQBufs;
    extern __shared__ __align__(16) uint8_t smem_raw[];
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);

    const int tid = threadIdx.x, wg = tid >> 7, warp = tid >> 5, lane = tid & 31;
    float2 *sCol = (float2 *)(smem + SM::kCol);
    uint64_t *sFull = (uint64_t *)(smem + SM::kFull);
    uint64_t *sEmpty = (uint64_t *)(smem + SM::kEmpty);
    uint64_t *sQFull = (uint64_t *)(smem + SM::kQFull);
    uint64_t *sQEmpty = sQFull + QB;
    int *sE = (int *)(smem + SM::kE);
    int *sQe = (int *)(smem + SM::kQe);
    int4 *sRec = (int4 *)(smem + SM::kRec);

    if (tid == 0) {
        for (int s = 0; s < S; s++) {
            /* FP8: per producer thread its K copies (cp.async arrival; with K by TMA an
             * arrival with nothing in flight) and its column factors, plus one for the TMA
             * bytes (K, V^T) or the transpose path's extra arrival; BF16: the transpose's one
             * arrival per thread */
            mbar_init(smem_u32(&sFull[s]), FP8 ? 128 + 128 + 1 : 128);
            mbar_init(smem_u32(&sEmpty[s]), 256); /* every consumer thread arrives (see release) */
        }
        for (int b = 0; b < QB; b++) {
            mbar_init(smem_u32(&sQFull[b]), 2 * 128); /* per producer thread: its Q copies landed; its rows' constants written */
            mbar_init(smem_u32(&sQEmpty[b]), 256);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        /* ================= producer warpgroup: per item the Q tile and row constants, then K
         * (FP8: rows permuted, by TMA inside T, else cp.async); V^T by TMA from vt_codes (documents on 32-token
         * boundaries there), else (BF16, use_tma off) V rows by cp.async into a staging
         * buffer and a byte/half transpose in shared memory into the K-major V^T tile P V
         * needs. */
        setmaxnreg_dec<40>(); /* 128 x (168-40) registers freed = 256 x (232-168) needed: the pool must cover the consumers exactly */
        constexpr int NSTG = SM::kNStg;
        const int pt = tid;
        int *sScr = (int *)(smem + SM::kScr);
        const int nslots = fwd_items(p.Hq, p.T, p.num_docs);
        /* the next item index: the main kernel walks the list of all items, the SPLIT kernel
         * the items the main kernel listed (nslots: none left) */
        auto fetch = [&]() {
            if (!SPLIT) return atomicAdd(p.work + FLAMIA_SM90_FWD_NEXT, 1);
            const int i = atomicAdd(p.work + FLAMIA_SM90_FWD_SPLIT_NEXT, 1);
            return i < p.work[FLAMIA_SM90_FWD_SPLIT_COUNT] ? fwd_split_list(p.work, nslots)[i] : nslots;
        };
        /* items are taken from a global counter in list order (as the hardware launched the
         * CTAs of a one-CTA-per-item grid): the items in flight stay neighbours, so they share
         * their documents' K / V in L2, and no CTA is left with a heavier share (a static
         * b, b + gridDim.x, ... split measured +14 % at 16x4096). The next index is fetched
         * one item ahead; sNext is double-buffered by the fetch count's parity. */
        int *sNext = sScr + 132;
        if (pt == 0) sNext[0] = fetch();
        bar_named(3, 128);
        int w = sNext[0];
        int g = 0; /* K / V tiles issued before this item (ring position) */
        int k = 0; /* items handed to the consumers */
        for (int nf = 1;; nf++) {
            /* the atomic's result is stored only at the round's end: its latency (~1 us) then
             * overlaps this item's loads instead of stalling warp 0 at the item's start */
            const int nxt = pt == 0 && w < nslots ? fetch() : 0;
            const int wcur = w;
            const bool end = wcur >= nslots;
            auto advance = [&]() { /* every producer thread: the index fetched for the next round */
                if (pt == 0 && wcur < nslots) sNext[nf & 1] = nxt;
                bar_named(3, 128);
                w = sNext[nf & 1];
            };
            int h = 0;
            flamia_sm90::DocTile dt = {-1, 0, 0};
            if (!end) {
                h = wcur % p.Hq;
                dt = flamia_sm90::doc_tile_of(p.cu, p.num_docs, wcur / p.Hq);
                if (dt.doc < 0) { /* an idle slot */
                    advance();
                    continue;
                }
            }
            const int qb = k % QB;
            if (k >= QB) mbar_wait(smem_u32(&sQEmpty[qb]), (uint32_t)(((k / QB) - 1) & 1));
            k++;
            if (end) { /* the end record: every thread's two arrivals */
                if (pt == 0) sRec[qb] = make_int4(0, -1, 0, 0);
                mbar_arrive(smem_u32(&sQFull[qb]));
                mbar_arrive(smem_u32(&sQFull[qb]));
                break;
            }
            const int mt = dt.ntiles - 1 - dt.tile;
            const int ds = __ldg(p.cu + dt.doc), len = __ldg(p.cu + dt.doc + 1) - ds;
            const int hk = h / p.group, q0 = mt * kBM;
            const int ndiag = p.causal ? mt : (len - 1) / kBN;
            const int nvis = ndiag + 1; /* tiles visited: ndiag, ndiag-1, ..., 0 */
            const bool vt_tma = FP8 && p.use_tma;
            const int vt_shift = flamia_sm90_vt_shift(ds, dt.doc); /* token -> V^T position */

            /* ---- the Q tile (FP8: one TMA box; else cp.async, this thread's arrival when its
             * copies landed) */
            uint8_t *sQ = smem + SM::kQ + qb * SM::kQBytes;
            if (FP8 && vt_tma) { /* one TMA box (natural row order; rows past T zero-filled) */
                const uint32_t qfull = smem_u32(&sQFull[qb]);
                if (pt == 0) { /* expect_tx is this thread's arrival */
                    mbar_expect_tx(qfull, kBM * kD);
                    tma_load_2d(smem_u32(sQ), &maps.q, h * kD, ds + q0, qfull);
                } else {
                    mbar_arrive(qfull);
                }
            } else if (FP8) {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int ch = pt + i * 128, r = ch >> 3, q = ch & 7, tok = ds + q0 + r;
                    const bool ok = tok < p.T;
                    cp_async16(smem_u32(sQ + sw128(r, q)), p.q8 + ((size_t)(ok ? tok : 0) * p.Hq + h) * kD + q * 16, ok);
                }
            } else {
#pragma unroll 4
                for (int i = 0; i < 16; i++) {
                    const int ch = pt + i * 128, r = ch >> 4, q = ch & 15, tok = ds + q0 + r;
                    const bool ok = tok < p.T;
                    cp_async16(smem_u32(sQ + (q >> 3) * (kBM * 128) + sw128(r, q & 7)),
                               p.qb + ((size_t)(ok ? tok : 0) * p.Hq + h) * kD + q * 8, ok);
                }
            }
            if (!(FP8 && vt_tma)) cp_async_mbar_arrive_noinc(smem_u32(&sQFull[qb]));

            /* ---- the K / V tiles of this item: ring position g + it */
            auto issue = [&](int it) {
                const int gt = g + it, s = gt % S, n = ndiag - it;
                if (gt >= S) mbar_wait(smem_u32(&sEmpty[s]), (uint32_t)(((gt / S) - 1) & 1));
                const int kbase = ds + n * kBN;
                uint8_t *sK = smem + SM::kK + s * SM::kTileBytes;
                uint8_t *stg = smem + SM::kStg + (it % NSTG) * SM::kTileBytes;
                /* K's tile by one TMA box through the permuted-stride map when it lies
                 * inside T (the map bound-checks only the first-row dimension) */
                const bool k_tma = vt_tma && kbase + kBN <= p.T;
                if (FP8) {
    #pragma unroll
                    for (int i = 0; i < 8 && !k_tma; i++) { /* K by cp.async (and V rows without V^T's TMA) */
                        const int ch = pt + i * 128, c = ch >> 3, q = ch & 7;
                        int tok = kbase + flamia_fp8_perm_row(c);
                        bool ok = tok < p.T;
                        cp_async16(smem_u32(sK + sw128(c, q)), p.k8 + ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 16, ok);
                        if (!vt_tma) {
                            tok = kbase + c; /* V row c = key c (natural order), chunk swizzled by c >> 3 */
                            ok = tok < p.T;
                            cp_async16(smem_u32(stg + c * 128 + ((q ^ ((c >> 3) & 7)) << 4)),
                                       p.v8 + ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 16, ok);
                        }
                    }
                    if (vt_tma) cp_async_mbar_arrive_noinc(smem_u32(&sFull[s])); /* K landed: arrival 1 of 257 */
                    if (KIND == KIND_TOKEN) {
                        float2 f = make_float2(0.f, 0.f);
                        const int tok = kbase + flamia_fp8_perm_row(pt);
                        if (tok < p.T) {
                            f.x = flamia_pow2f(p.ke[(size_t)tok * p.Hkv + hk]);
                            f.y = flamia_pow2f(p.ve[(size_t)tok * p.Hkv + hk]);
                        }
                        sCol[s * kBN + pt] = f;
                    } else if (pt < 4) {
                        /* block pt: (2^eK, eV) for the masked tile, (2^eV, 2^-eV) for the others */
                        int ev = -127;
                        float2 f = make_float2(1.f, -127.f);
                        const int key = n * kBN + 32 * pt;
                        if (key < len) {
                            const size_t i = (size_t)(ds + key) * p.Hkv + hk;
                            ev = p.ve[i];
                            f.x = flamia_pow2f(p.ke[i]);
                            f.y = (float)ev;
                        }
                        sCol[s * kBN + pt] = f;
                        sCol[s * kBN + 4 + pt] = make_float2(flamia_pow2f(ev), flamia_pow2f(-ev));
                    }
                    if (vt_tma) {
                        const uint32_t full = smem_u32(&sFull[s]);
                        mbar_arrive(full); /* column factors written */
                        if (pt == 0) {
                            mbar_expect_tx(full, (k_tma ? 2 : 1) * kBN * kD);
                            if (k_tma) tma_load_5d(smem_u32(sK), &maps.k, hk * kD, kbase, full);
                            tma_load_3d(smem_u32(smem + SM::kV + s * SM::kTileBytes), &maps.vt, kbase + vt_shift, 0, hk, full);
                        }
                    }
                } else {
    #pragma unroll 4
                    for (int i = 0; i < 16; i++) {
                        const int ch = pt + i * 128, r = ch >> 4, q = ch & 15;
                        const int tok = kbase + r;
                        const bool ok = tok < p.T;
                        const size_t off = ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 8;
                        cp_async16(smem_u32(sK + (q >> 3) * (kBN * 128) + sw128(r, q & 7)), p.kb + off, ok);
                        cp_async16(smem_u32(stg + (q >> 3) * (kBN * 128) + r * 128 + (((q & 7) ^ ((r >> 3) & 7)) << 4)),
                                   p.vb + off, ok);
                    }
                }
            };
            /* transpose the staged V rows of tile it into stage (g + it) % S (K-major V^T) */
            auto finish = [&](int it) {
                const int s = (g + it) % S;
                const uint8_t *stg = smem + SM::kStg + (it % NSTG) * SM::kTileBytes;
                uint8_t *sV = smem + SM::kV + s * SM::kTileBytes;
    #pragma unroll 1
                for (int bi = 0; bi < 2; bi++) {
                    const int b = pt + bi * 128, kg = b & 15, dg = b >> 4; /* keys 8kg.., dims 8dg.. */
                    if (FP8) {
                        uint32_t lo[8], hi[8];
    #pragma unroll
                        for (int i = 0; i < 8; i++) {
                            const uint2 v = *(const uint2 *)(stg + (8 * kg + i) * 128 + ((((dg >> 1) ^ (kg & 7))) << 4) + (dg & 1) * 8);
                            lo[i] = v.x;
                            hi[i] = v.y;
                        }
                        uint32_t c[4][4]; /* c[blk][j]: blk 0: d 0-3 keys 0-3, 1: d 0-3 keys 4-7, 2: d 4-7 keys 0-3, 3: d 4-7 keys 4-7 */
    #pragma unroll
                        for (int blk = 0; blk < 4; blk++) {
                            const uint32_t *a = (blk < 2 ? lo : hi) + (blk & 1) * 4;
                            flamia_transpose_bytes4x4(a[0], a[1], a[2], a[3], c[blk]);
                        }
    #pragma unroll
                        for (int j = 0; j < 8; j++) {
                            const int d = 8 * dg + j;
                            const uint2 v = make_uint2(c[(j >> 2) * 2][j & 3], c[(j >> 2) * 2 + 1][j & 3]);
                            *(uint2 *)(sV + d * 128 + ((((kg >> 1) ^ (d & 7))) << 4) + (kg & 1) * 8) = v;
                        }
                    } else {
                        uint4 r[8];
    #pragma unroll
                        for (int i = 0; i < 8; i++)
                            r[i] = *(const uint4 *)(stg + (dg >> 3) * (kBN * 128) + (8 * kg + i) * 128 + (((dg & 7) ^ (kg & 7)) << 4));
    #pragma unroll
                        for (int j = 0; j < 8; j++) {
                            const int d = 8 * dg + j;
                            const uint32_t sel = (j & 1) ? 0x7632 : 0x5410;
                            uint32_t w[4];
    #pragma unroll
                            for (int k2 = 0; k2 < 4; k2++) {
                                const uint4 &ra = r[2 * k2], &rb = r[2 * k2 + 1];
                                const uint32_t xa = (j >> 1) == 0 ? ra.x : (j >> 1) == 1 ? ra.y : (j >> 1) == 2 ? ra.z : ra.w;
                                const uint32_t xb = (j >> 1) == 0 ? rb.x : (j >> 1) == 1 ? rb.y : (j >> 1) == 2 ? rb.z : rb.w;
                                w[k2] = __byte_perm(xa, xb, sel);
                            }
                            *(uint4 *)(sV + (kg >> 3) * (kBN * 128) + d * 128 + (((kg & 7) ^ (d & 7)) << 4)) =
                                make_uint4(w[0], w[1], w[2], w[3]);
                        }
                    }
                }
                fence_proxy_async(); /* generic-proxy writes (and landed cp.async) -> wgmma reads */
                if (FP8)
                    mbar_arrive_cnt(smem_u32(&sFull[s]), pt == 0 ? 3 : 2); /* the count of the TMA path: 257 */
                else
                    mbar_arrive(smem_u32(&sFull[s]));
            };
            /* ---- row constants: E_i = max eV over the keys row i sees (prefix max over the
             * document) and the row's Q exponent; both loads in flight before the first wait */
            if (FP8) {
                const int kb_end = p.causal ? q0 : len;
                const int pkey = q0 + pt;
                const int xpre = p.causal && pkey < len ? (int)p.ve[(size_t)(ds + pkey) * p.Hkv + hk] : -1000;
                const int eq = pkey < len ? (int)p.qe[(size_t)(ds + pkey) * p.Hq + h] : 0;
                const int step = KIND == KIND_BLOCK ? 32 : 1; /* BLOCK: one exponent per 32-token block */
                int mx = pt * step < kb_end ? (int)p.ve[(size_t)(ds + pt * step) * p.Hkv + hk] : -1000;
                /* the first K / V tile goes out while these loads are in flight (the consumers
                 * wait for both; in sequence they were most of the producer's per-item latency) */
                if (vt_tma) issue(0);
                for (int kk = (pt + 128) * step; kk < kb_end; kk += 128 * step)
                    mx = max(mx, (int)p.ve[(size_t)(ds + kk) * p.Hkv + hk]);
#pragma unroll
                for (int o = 16; o; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
                int x = xpre;
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    const int y = __shfl_up_sync(0xffffffffu, x, o);
                    if (lane >= o) x = max(x, y);
                }
                sScr[pt] = x;
                if (lane == 0) sScr[128 + warp] = mx;
                bar_named(3, 128);
                int E = max(max(sScr[128], sScr[129]), max(sScr[130], sScr[131]));
                if (p.causal) {
                    const int kl = min(pt, len - 1 - q0);
                    int pre = sScr[kl];
                    for (int ww = 0; ww < (kl >> 5); ww++) pre = max(pre, sScr[ww * 32 + 31]);
                    E = max(E, pre);
                }
                sE[qb * 128 + pt] = max(E, FLAMIA_SM90_FWD_E_MIN); /* sm90_launch.h: l stays in FP32 */
                sQe[qb * 128 + pt] = eq;
                bar_named(3, 128); /* the scratch is free for the next item */
            }
            if (pt == 0) {
                sRec[qb] = make_int4(ds, len, q0, h);
                sRec[QB + qb] = make_int4(wcur, 0, 0, 0);
            }
            mbar_arrive(smem_u32(&sQFull[qb]));
            if (vt_tma) {
                for (int it = 1; it < nvis; it++) issue(it); /* arrivals: cp.async (K, or none in flight), plain (cols), TMA (K, V); tile 0: above */
            } else if (NSTG == 2) {
                for (int it = 0; it <= nvis; it++) {
                    if (it < nvis) issue(it);
                    cp_async_commit();
                    if (it >= 1) {
                        cp_async_wait<1>();
                        bar_named(3, 128); /* tile it-1 staged by every producer thread */
                        finish(it - 1);
                        bar_named(3, 128); /* staging buffer (it-1)%2 free again */
                    }
                }
            } else {
                for (int it = 0; it < nvis; it++) {
                    issue(it);
                    cp_async_commit();
                    cp_async_wait<0>();
                    bar_named(3, 128);
                    finish(it);
                    bar_named(3, 128);
                }
            }
            /* DQZ (the training call's instantiation): this item's dq_accum rows zeroed for the
             * backward's reduce-adds, stores that hide under the softmax-bound loop, instead of a
             * third of bwd_pre_do's bytes; one 512-byte row per warp store, streaming (evict
             * first); after the item's loads, where its other values are dead. Its own
             * instantiation: in the forward-only kernel the code alone cost ~1.5 % (measured) */
            if constexpr (DQZ) {
                const int rows = min(kBM, len - q0);
                float4 *row = reinterpret_cast<float4 *>(p.dq_zero) + ((size_t)(ds + q0 + (pt >> 5)) * p.Hq + h) * (kD / 4) + (pt & 31);
                for (int r = pt >> 5; r < rows; r += 4, row += (size_t)4 * p.Hq * (kD / 4))
                    __stcs(row, make_float4(0.f, 0.f, 0.f, 0.f));
            }
            g += nvis;
            advance();
        }
        cp_async_wait<0>();
        return;
    }

    /* ================= consumer warpgroups */
    setmaxnreg_inc<232>();
    /* the warpgroup index through a shuffle, so that ptxas knows it warp-uniform and builds
     * the Q tile's wgmma descriptors in uniform registers */
    const int cw = __shfl_sync(0xffffffffu, wg - 1, 0), gq = lane >> 2, tq = lane & 3;
    const int rr[2] = {cw * 64 + (warp & 3) * 16 + gq, cw * 64 + (warp & 3) * 16 + gq + 8};
    constexpr int NP = PRegs<KIND>::N;
    auto stageK = [&](int s) { return smem_u32(smem + SM::kK + s * SM::kTileBytes); };
    auto stageV = [&](int s) { return smem_u32(smem + SM::kV + s * SM::kTileBytes); };
    /* ping-pong (PP): the two consumer warpgroups take turns issuing their wgmmas
     * (named barriers 1 + cw), so one's softmax overlaps the other's tensor-core work. The
     * turns run on across items; warpgroup 0 takes warpgroup 1's last arrival at the end. */
    auto sched_wait = [&]() {
        if (PP) bar_named(1 + cw, 256);
    };
    auto sched_done = [&]() {
        if (PP) bar_named_arrive(1 + (1 - cw), 256);
    };
    if (PP && cw == 1) bar_named_arrive(1, 256); /* warpgroup 0 issues first */
    /* Every consumer thread arrives for itself: an arrive releases only the arriving
     * thread's own prior reads (of sCol, by plain loads), so one lane per warp after
     * __syncwarp left the other lanes' reads unordered for compute-sanitizer racecheck
     * (8 hazards, stage reuse after 3 tiles). One instruction per warp either way. */
    auto release = [&](int s) { mbar_arrive(smem_u32(&sEmpty[s])); };
    /* O's FP32 sum (FP8 kinds with V^T by TMA; without TMA the staging buffers are in use and
     * O stays in the accumulator): warpgroup 0's in the V staging buffers, warpgroup 1's in
     * the O epilogue tile, 32 KB each; this thread's oacc[4i .. 4i + 3] at osum[128 i]. Each
     * warpgroup stages its epilogue in its own sum's first half. */
    static_assert(!FP8 || (SM::kNStg * SM::kTileBytes >= 64 * kD * 4 && SM::kOBytes >= 64 * kD * 4), "osum: 32 KB a warpgroup");
    const bool osum_on = FP8 && p.use_tma && p.o_flush > 0;
    float4 *const osum = (float4 *)(smem + (cw == 0 ? SM::kStg : SM::kO)) + (threadIdx.x & 127);
    uint8_t *const sO = osum_on ? (uint8_t *)(osum - (threadIdx.x & 127)) : smem + SM::kO + cw * (64 * kD * 2);

    /* the TMA stores of O (o_tma) are the bulk groups of the warpgroup's thread 0: it waits for
     * their reads of the tile before the warpgroup's barrier that frees the tile for reuse, and
     * for their completion before the CTA exits */
    const bool o_store_owner = FP8 && p.o_tma && (threadIdx.x & 127) == 0;
    auto o_store_drain = [&]() {
        if (o_store_owner) bulk_wait_read_all();
    };
    int g = 0; /* K / V tiles consumed before this item (ring position) */
    for (int k = 0;; k++) {
        const int qb = k % QB;
        mbar_wait(smem_u32(&sQFull[qb]), (uint32_t)((k / QB) & 1));
        const int4 rec = sRec[qb];
        if (rec.y < 0) break; /* the end record */
        const int item = sRec[QB + qb].x;
        bool direct = true; /* this thread's rows stayed in the direct exponential's range */
        const int ds = rec.x, len = rec.y, q0 = rec.z, h = rec.w;
        const int ndiag = p.causal ? q0 / kBM : (len - 1) / kBN;
        const int nvis = ndiag + 1;
        const int qi[2] = {q0 + rr[0], q0 + rr[1]};
        DbgRow dr = {};
        if (DBG) {
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                const size_t row = (size_t)h * p.T + ds + qi[hh];
                const bool in = qi[hh] < len;
                dr.code[hh] = in ? dbg.codes + row * p.T + ds : nullptr;
                dr.frame[hh] = in && dbg.frames ? dbg.frames + row * dbg.ntile : nullptr;
            }
        }
        float crow[2];
        int Erow[2] = {8, 8};
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            if (FP8) {
                Erow[hh] = sE[qb * 128 + rr[hh]];
                crow[hh] = p.c * flamia_pow2f(sQe[qb * 128 + rr[hh]]); /* exact: c times a power of two */
            } else {
                crow[hh] = p.c;
            }
        }
        float oacc[64];
#pragma unroll
        for (int i = 0; i < 64; i++) oacc[i] = 0.f;
        float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f}, fo[2];
        int nflush = 0;              /* flushes of oacc into osum in this item */
        float fs[2] = {1.f, 1.f};    /* the rows' rescale since the last flush (osum's frame -> the current one) */
        uint32_t pa[NP], pb[NP];
        float sacc[64];
        const uint32_t sQa = smem_u32(smem + SM::kQ + qb * SM::kQBytes);

        /* first (masked) tile */
        const int s0 = g % S;
        mbar_wait(smem_u32(&sFull[s0]), (uint32_t)((g / S) & 1));
        fence_proxy_async(); /* the Q tile's and K's cp.async writes -> wgmma reads */
        sched_wait();
        wgmma_fence();
        issue_qk<KIND>(sacc, sQa, stageK(s0), cw);
        wgmma_commit();
        sched_done();
        wgmma_wait<0>();
        reg_fence(sacc);
        direct &= softmax_tile<KIND, true, DBG, SPLIT, LPV>(sacc, pa, m_run, l_run, fo, crow, Erow, sCol + s0 * kBN, ndiag,
                                                       len, p.causal, qi, tq, dr);

        /* oacc -> osum (after the P V wait, in the current frame); a plain store on the item's
         * first flush, after this warpgroup's reads of the previous item's epilogue tile */
        auto flush = [&]() {
            if (nflush == 0) {
                o_store_drain(); /* the previous item's TMA stores have read the tile */
                bar_named(4 + cw, 128);
#pragma unroll
                for (int i = 0; i < 16; i++)
                    osum[128 * i] = make_float4(oacc[4 * i], oacc[4 * i + 1], oacc[4 * i + 2], oacc[4 * i + 3]);
            } else {
#pragma unroll
                for (int i = 0; i < 16; i++) osum[128 * i] = osum_fold(osum[128 * i], fs, oacc, i);
            }
            nflush++;
            fs[0] = fs[1] = 1.f;
            /* the accumulator restarts by register writes, not by the next P V's scale-d: a
             * run-time scale-d (a uniform predicate on the QGMMA) measured 1-3 % slower even
             * when never false (docs/perf-notes.md, thirty-sixth session) */
#pragma unroll
            for (int i = 0; i < 64; i++) oacc[i] = 0.f;
        };

        /* tile it: S(it) = Q K(it) and O += P(it-1) V(it-1) in flight together; the softmax
         * of S(it) runs while P V is on the tensor cores. P alternates between two register
         * sets (a register copy would serialize the wgmma pipeline: ptxas C7513). */
        auto step = [&](int it, uint32_t(&pc)[NP], uint32_t(&pn)[NP], bool may_flush) {
            const int gt = g + it, s = gt % S, sp = (gt - 1) % S;
            mbar_wait(smem_u32(&sFull[s]), (uint32_t)((gt / S) & 1));
            fence_proxy_async();
            reg_fence(pc);
            reg_fence(oacc);
            sched_wait();
            wgmma_fence();
            issue_qk<KIND>(sacc, sQa, stageK(s), cw);
            wgmma_commit();
            /* the addition due once it - 1 key tiles (an even count) have gone into O runs here,
             * under this step's Q K product and before the P V that writes oacc again: its bytes
             * overlap the tensor cores instead of stalling the warpgroup's own path (v46:
             * -4 % at 16x4096; perf-notes). Only odd steps have the code (the pair's first and
             * the tail step), so one due right before the last P V is left to the epilogue:
             * an item's last segment spans up to interval + 1 tiles (numerics.md 8). */
            if (may_flush && osum_on && it > 1 && ((it - 1) & (p.o_flush - 1)) == 0) {
                flush();
                reg_fence(oacc);
                wgmma_fence();
            }
            issue_pv<KIND>(oacc, pc, stageV(sp), p);
            wgmma_commit();
            sched_done();
            wgmma_wait<1>();
            reg_fence(sacc);
            direct &= softmax_tile<KIND, false, DBG, SPLIT, LPV>(sacc, pn, m_run, l_run, fo, crow, Erow, sCol + s * kBN,
                                                            ndiag - it, len, p.causal, qi, tq, dr);
            wgmma_wait<0>();
            reg_fence(oacc);
            reg_fence(pc);
            release(sp);
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                if (fo[hh] != 1.f) {
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        oacc[4 * j + 2 * hh] *= fo[hh];
                        oacc[4 * j + 2 * hh + 1] *= fo[hh];
                    }
                    fs[hh] *= fo[hh];
                }
            }
        };
        auto last_pv = [&](uint32_t(&pc)[NP]) {
            const int sp = (g + nvis - 1) % S;
            reg_fence(pc);
            reg_fence(oacc);
            sched_wait();
            wgmma_fence();
            issue_pv<KIND>(oacc, pc, stageV(sp), p);
            wgmma_commit();
            sched_done();
            wgmma_wait<0>();
            reg_fence(oacc);
            reg_fence(pc);
            release(sp);
        };
        int it = 1;
        for (; it + 1 < nvis; it += 2) {
            step(it, pa, pb, true);
            step(it + 1, pb, pa, false);
        }
        if (it < nvis) {
            step(it, pa, pb, true);
            last_pv(pb);
        } else {
            last_pv(pa);
        }
        g += nvis;
        mbar_arrive(smem_u32(&sQEmpty[qb])); /* Q tile, row constants and record of this item read */
#pragma unroll
        for (int hh = 0; hh < 2; hh++) direct &= (qi[hh] >= len) | item_direct_ok<KIND>(m_run[hh], Erow[hh]);
        if (!SPLIT && !__all_sync(0xffffffffu, direct) && lane == 0) {
            /* a frame left the direct form's range: the SPLIT launch recomputes the item (its
             * outputs here are overwritten); the bit keeps it listed once */
            const int items = fwd_items(p.Hq, p.T, p.num_docs), bit = 1 << (item & 31);
            if (!(atomicOr(fwd_split_bits(p.work) + (item >> 5), bit) & bit))
                fwd_split_list(p.work, items)[atomicAdd(p.work + FLAMIA_SM90_FWD_SPLIT_COUNT, 1)] = item;
        }

        /* ---- epilogue: O = O_acc (1 / l), lse, row frame (the debug run writes none of them) */
        float il[2];
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            float l = l_run[hh];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            /* one IEEE reciprocal per row, not 32 divisions per thread (each a MUFU.RCP, a
             * Newton step and a slow-path call in SASS); O differs from O_acc / l by at most
             * an FP32 ulp before the BF16 rounding. Rows past the document end: never stored. */
            il[hh] = 1.0f / l;
            if (DBG || qi[hh] >= len) continue;
            const size_t row = (size_t)(ds + qi[hh]) * p.Hq + h;
            if (!FP8) {
                uint32_t *orow = (uint32_t *)(p.o + row * kD);
#pragma unroll
                for (int j = 0; j < 16; j++)
                    orow[4 * j + tq] = bf16x2(oacc[4 * j + 2 * hh] * il[hh], oacc[4 * j + 2 * hh + 1] * il[hh]);
            }
            if (tq == 0) {
                /* in FP32 (the frame is an integer, exact): an FP64 log2 here held 2.4 % of the
                 * kernel's stall samples; the result differs from the FP64 one by ~2 FP32 ulp */
                const float base = m_run[hh] + (FP8 ? (float)(Erow[hh] - 8) : 0.f);
                p.lse[row] = 0.69314718055994530942f * (base + log2f(l));
                p.row_frame[row] = m_run[hh];
            }
        }
        if (FP8 && !DBG) {
            /* O through shared memory: the accumulator layout's 4-byte pieces (16 B of a row per
             * quad) made 32 scattered stores per thread whose register reuse waited on the
             * store queue (17 % of the consumers' stall samples at 16x1024, measured); stmatrix
             * into a 16-byte-chunk swizzled tile, then two TMA stores where the warpgroup's 64
             * rows lie inside the document (v130: -2.4..-3.1 % at 1,024-token documents), else
             * whole 256-byte rows, 16 B per thread, behind a row test */
            if (nflush) /* O = osum (rescaled to the last frame) + oacc, before the tile is reused */
#pragma unroll
                for (int i = 0; i < 16; i++) {
                    const float4 v = osum_fold(osum[128 * i], fs, oacc, i);
                    oacc[4 * i] = v.x, oacc[4 * i + 1] = v.y, oacc[4 * i + 2] = v.z, oacc[4 * i + 3] = v.w;
                }
            o_store_drain(); /* the previous item's TMA stores have read the tile */
            bar_named(4 + cw, 128); /* this warpgroup's reads of the previous item's tile (and of osum) are done */
            const int mk = lane >> 3, mrow = (warp & 3) * 16 + (mk & 1) * 8 + (lane & 7);
            /* the tile as two 64-column panels of 64 rows x 128 bytes, 16-byte chunks swizzled by
             * the row (TMA's 128-byte swizzle) */
#pragma unroll
            for (int j = 0; j < 16; j += 2) { /* matrices (chunk j, rows g), (j, g + 8), (j + 1, g), (j + 1, g + 8) */
                const int chunk = j + (mk >> 1);
                stmatrix_x4(smem_u32(sO + (chunk >> 3) * 8192 + mrow * 128 + (((chunk & 7) ^ (mrow & 7)) << 4)),
                            bf16x2(oacc[4 * j] * il[0], oacc[4 * j + 1] * il[0]),
                            bf16x2(oacc[4 * j + 2] * il[1], oacc[4 * j + 3] * il[1]),
                            bf16x2(oacc[4 * j + 4] * il[0], oacc[4 * j + 5] * il[0]),
                            bf16x2(oacc[4 * j + 6] * il[1], oacc[4 * j + 7] * il[1]));
            }
            const bool o_full = p.o_tma && q0 + cw * 64 + 64 <= len; /* all 64 rows in the document */
            if (o_full) fence_proxy_async(); /* stmatrix's writes -> the TMA store's reads */
            bar_named(4 + cw, 128);
            const int t = threadIdx.x & 127;
            if (o_full) {
                if (t == 0) {
                    tma_store_2d(&maps.o, smem_u32(sO), h * kD, ds + q0 + cw * 64);
                    tma_store_2d(&maps.o, smem_u32(sO + 8192), h * kD + 64, ds + q0 + cw * 64);
                    bulk_commit_group();
                }
            } else {
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const int id = t + 128 * i, r = id >> 4, c = id & 15, q = q0 + cw * 64 + r;
                    if (q < len)
                        *(uint4 *)(p.o + ((size_t)(ds + q) * p.Hq + h) * kD + c * 8) =
                            *(const uint4 *)(sO + (c >> 3) * 8192 + r * 128 + (((c & 7) ^ (r & 7)) << 4));
                }
            }
        }
    }
    if (o_store_owner) bulk_wait_all();
    if (PP && cw == 0) bar_named(1, 256); /* warpgroup 1's last turn arrival */
}

/* DQZ: also zeroes p.dq_zero (never with SPLIT); LPV: l adds P's rounded values (recipe
 * row_sum = FLAMIA_ROWSUM_P_VALUES) */
template <int KIND, int S, bool PP, bool SPLIT, bool DQZ = false, bool LPV = false>
__global__ void __launch_bounds__(kThreads, 1)
    fwd_kernel(const __grid_constant__ FwdMaps maps, const Params p) {
    fwd_body<KIND, S, PP, false, SPLIT, DQZ, LPV>(maps, p, DbgOut{});
}
/* debug instantiation: the same loop, capturing P codes and frames (FP8 kinds, 3 stages, ping-pong) */
template <int KIND, bool SPLIT>
__global__ void __launch_bounds__(kThreads, 1)
    fwd_kernel_dbg(const __grid_constant__ FwdMaps maps, const Params p, const DbgOut dbg) {
    fwd_body<KIND, 3, true, true, SPLIT>(maps, p, dbg);
}

/* ------------------------------------------------------------------ host */

/* Persistent: min(work items, SMs) CTAs, one per SM, taking the (query head, tile slot)
 * items from the counters in fwd_work; `attr` remembers, per kernel instantiation, that the
 * shared-memory limit was raised. */
template <typename... KernelArgs, typename... Args>
static cudaError_t launch_grid(void (*kernel)(KernelArgs...), bool &attr, int bytes, const Params &prm,
                               cudaStream_t stream, Args... args) {
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess) return e;
        attr = true;
    }
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
    const int items = fwd_items(prm.Hq, prm.T, prm.num_docs);
    dim3 grid((unsigned)(items < sms ? items : sms));
    kernel<<<grid, kThreads, bytes, stream>>>(args...);
    return cudaGetLastError();
}
/* the counters and the listed-item bits of fwd_work */
static cudaError_t reset_work(const Params &prm, cudaStream_t stream) {
    const int items = fwd_items(prm.Hq, prm.T, prm.num_docs);
    return cudaMemsetAsync(prm.work, 0, (size_t)(fwd_split_list(prm.work, items) - prm.work) * sizeof(int), stream);
}
/* the main kernel (direct exponential), then its SPLIT instantiation on the items the main
 * one listed (most often none: its CTAs find the list empty and exit) */
template <typename... KernelArgs, typename... Args>
static cudaError_t launch_main_split(void (*main_kernel)(KernelArgs...), bool &attr_main,
                                     void (*split_kernel)(KernelArgs...), bool &attr_split, int bytes,
                                     const Params &prm, cudaStream_t stream, Args... args) {
    cudaError_t e = reset_work(prm, stream);
    if (e == cudaSuccess) e = launch_grid(main_kernel, attr_main, bytes, prm, stream, args...);
    if (e == cudaSuccess) e = launch_grid(split_kernel, attr_split, bytes, prm, stream, args...);
    return e;
}
template <int KIND, int S, bool PP, bool LPV>
static cudaError_t launch(const Params &prm, const FwdMaps &map, cudaStream_t stream) {
    static bool attr = false, attr_dqz = false, attr_split = false;
    if (prm.dq_zero) /* the training call: the main launch also zeroes dq_accum (the SPLIT one recomputes items only) */
        return launch_main_split(fwd_kernel<KIND, S, PP, false, true, LPV>, attr_dqz,
                                 fwd_kernel<KIND, S, PP, true, false, LPV>, attr_split, Smem<KIND, S>::kBytes, prm,
                                 stream, map, prm);
    return launch_main_split(fwd_kernel<KIND, S, PP, false, false, LPV>, attr, fwd_kernel<KIND, S, PP, true, false, LPV>,
                             attr_split, Smem<KIND, S>::kBytes, prm, stream, map, prm);
}
/* the ping-pong choice (a dev knob) and the row-sum rule (the recipe's), as template arguments */
template <int KIND, int S>
static cudaError_t launch_kind(const Params &prm, const FwdMaps &map, bool pp, bool lpv, cudaStream_t stream) {
    if (lpv) return pp ? launch<KIND, S, true, true>(prm, map, stream) : launch<KIND, S, false, true>(prm, map, stream);
    return pp ? launch<KIND, S, true, false>(prm, map, stream) : launch<KIND, S, false, false>(prm, map, stream);
}
template <int KIND>
static cudaError_t launch_dbg(const Params &prm, const FwdMaps &map, const DbgOut &dbg, cudaStream_t stream) {
    static bool attr = false, attr_split = false;
    return launch_main_split(fwd_kernel_dbg<KIND, false>, attr, fwd_kernel_dbg<KIND, true>, attr_split,
                             Smem<KIND, 3>::kBytes, prm, stream, map, prm, dbg);
}

} // namespace flamia_fwd

/* 1: V^T by TMA (default); 0: the shared-memory transpose for every tile */
int flamia_fwd_use_tma = 1;
/* FP8 kinds: key tiles between the additions of O's wgmma accumulator into its FP32 sum in
 * shared memory (flamia_cuda_set_o_sum_interval; rounded down to a power of two >= 2; 0: O stays in
 * the accumulator, as it does without TMA, where the staging buffers hold V; numerics.md 8) */
int flamia_fwd_o_flush = FLAMIA_SM90_FWD_O_FLUSH;
/* 1: consumer ping-pong (default); 0: the two consumer warpgroups run freely */
int flamia_fwd_pingpong = 1;
#define FWD_HAS_PINGPONG 1

/* Kernel parameters and the tensor maps (V^T, K, Q, O) of a validated problem (FP8 kinds: TMA
 * when the driver entry point is there and flamia_fwd_use_tma is on). */
static void fwd_setup(const struct flamia_sm90_problem *P, void *workspace, uint16_t *o, float *lse,
                      flamia_fwd::Params &prm, flamia_fwd::FwdMaps &map) {
    using namespace flamia_fwd;
    const flamia_sm90_layout L = flamia_sm90_layout_of(P);
    uint8_t *ws = (uint8_t *)workspace;
    prm.q8 = ws + L.q_codes;
    prm.k8 = ws + L.k_codes;
    prm.v8 = ws + L.v_codes;
    prm.qe = (const int8_t *)(ws + L.q_exp);
    prm.ke = (const int8_t *)(ws + L.k_exp);
    prm.ve = (const int8_t *)(ws + L.v_exp);
    prm.qb = (const uint16_t *)(ws + L.q_bf16);
    prm.kb = (const uint16_t *)(ws + L.k_bf16);
    prm.vb = (const uint16_t *)(ws + L.v_bf16);
    prm.row_frame = (float *)(ws + L.row_frame);
    prm.work = (int *)(ws + L.fwd_work);
    prm.dq_zero = P->dq_zero_in_forward ? (float *)(ws + L.dq_accum) : nullptr;
    prm.o = o;
    prm.lse = lse;
    prm.cu = P->cu_seqlens;
    prm.T = P->total_tokens;
    prm.Hq = P->heads_q;
    prm.Hkv = P->heads_kv;
    prm.group = P->heads_q / P->heads_kv;
    prm.causal = P->causal;
    prm.num_docs = P->num_docs;
    prm.c = P->softmax_scale * 1.44269504088896341f;
    memset(&map, 0, sizeof map);
    prm.use_tma = 0;
    if (P->kind != FLAMIA_SM90_BF16 && flamia_fwd_use_tma)
        prm.use_tma = flamia_tma_transposed_codes(&map.vt, ws + L.vt_codes, L.t_vpad, kD, P->heads_kv, kBN) &&
                      flamia_tma_perm_rows(&map.k, ws + L.k_codes, P->total_tokens, P->heads_kv * kD, 1) &&
                      flamia_tma_rows(&map.q, ws + L.q_codes, P->total_tokens, P->heads_q * kD);
    /* O's BF16 rows for the epilogue's TMA stores (64-row boxes); off where O is not 16-byte aligned */
    prm.o_tma = prm.use_tma && o && flamia_tma_rows(&map.o, o, P->total_tokens, P->heads_q * kD, 2, 64);
    prm.o_flush = 0; /* flamia_cuda_set_o_sum_interval admits 0 and 2..64 powers of two; the dev harness sets it directly */
    const int o_flush = __atomic_load_n(&flamia_fwd_o_flush, __ATOMIC_RELAXED);
    for (int f = 2; f <= o_flush && f <= 64; f <<= 1) prm.o_flush = f;
}

cudaError_t flamia_sm90_forward(const struct flamia_sm90_problem *P, void *workspace, uint16_t *o, float *lse,
                                cudaStream_t stream) {
    using namespace flamia_fwd;
    if (P->head_dim != kD) return cudaErrorNotSupported;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    Params prm;
    FwdMaps map;
    fwd_setup(P, workspace, o, lse, prm, map);
    const bool pp = flamia_fwd_pingpong != 0, lpv = P->row_sum_p_values != 0;
    switch (P->kind) {
    case FLAMIA_SM90_BF16: return launch_kind<KIND_BF16, 2>(prm, map, pp, lpv, stream);
    case FLAMIA_SM90_MXFP8_EXACT: return launch_kind<KIND_TOKEN, 3>(prm, map, pp, lpv, stream);
    default: return launch_kind<KIND_BLOCK, 3>(prm, map, pp, lpv, stream);
    }
}


cudaError_t flamia_sm90_forward_debug(const struct flamia_sm90_problem *P, void *workspace, uint8_t *codes,
                                      float *frames, cudaStream_t stream) {
    using namespace flamia_fwd;
    if (P->head_dim != kD || P->kind == FLAMIA_SM90_BF16) return cudaErrorNotSupported;
    const size_t T = (size_t)P->total_tokens;
    const int ntile = (P->max_seqlen + kBN - 1) / kBN;
    cudaError_t e;
    if ((e = cudaMemsetAsync(codes, 0xFF, (size_t)P->heads_q * T * T, stream)) != cudaSuccess) return e;
    if (frames && (e = cudaMemsetAsync(frames, 0xFF, (size_t)P->heads_q * T * ntile * sizeof(float), stream)) != cudaSuccess)
        return e;
    if (P->total_tokens <= 0 || P->num_docs <= 0 || P->max_seqlen <= 0) return cudaSuccess;
    Params prm;
    FwdMaps map;
    fwd_setup(P, workspace, nullptr, nullptr, prm, map);
    const DbgOut dbg = {codes, frames, ntile};
    return P->kind == FLAMIA_SM90_MXFP8_EXACT ? launch_dbg<KIND_TOKEN>(prm, map, dbg, stream)
                                               : launch_dbg<KIND_BLOCK>(prm, map, dbg, stream);
}
