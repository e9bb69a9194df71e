/*
 * backward_fp8.cu - the backward's FP8 wgmma main kernel bwd_main_fp8 (mxfp8, mxfp8-exact;
 * the default) and its debug instantiation bwd_main_fp8_dbg, with their launches and
 * tensor maps. backward.cu has the overview (the steps around it, how P is rebuilt).
 *
 * FP8 main kernel: 2 consumer warpgroups, warpgroup w owns keys 64w..64w+63 of the
 * tile. Per query tile (128 queries, 4 operand tiles staged in shared memory:
 * Q and dO with rows permuted as in forward.cu, Q^T and dO^T; all four by TMA, the
 * permuted rows through sm90_tma_host.cuh's permuted-stride map, or Q / dO and the F16 dO
 * panel by cp.async on a tile that crosses T, the one dimension TMA bound-checks there),
 * two sub-steps of 64 queries:
 *   S^T  = K Q^T     m64n64k32 SS  (row factor 2^eK_j, column factor c 2^eQ_i: exact)
 *   dP^T = V dO^T    m64n64k32 SS  (row factor 2^eV_j, column factor 2^eDO_i: exact)
 *   dV  += P^T dO    m64n128k16 F16 RS (HGMMA; A = P^T 2^(eDO - G) as F16 from the S
 *                                   accumulator, B = the dO codes as exact F16 values,
 *                                   rows in the staged (permuted) order, MN-major)
 *   dK  += dS^T Q    m64n128k32 RS
 *   dQ   = dS K      m64n64k32 SS  (dS codes written to shared memory [query][key]);
 *                                  warpgroup w computes head dims 64w..64w+63.
 * Scales along the contraction (numerics.md 4.6 GPU latitude), per product:
 *   dQ: FOLDED over the two key blocks of a warpgroup (v40, seventeenth session): one
 *       chain of two k=32 wgmmas per pair into a partial accumulator, added with the row
 *       factor scale 2^F, F = max over the pair of G = eDS(i, block) + EKmax(i, block)
 *       (EKmax the max eK over the row's VALID keys of the block: a prefix max, never
 *       depends on later keys, so the exact recipe stays causal). A operand: the dS code
 *       (mxfp8) or dS^ 2^(eK_j - EKmax) (mxfp8-exact), times 2^-(F - G): the code itself
 *       in the pair's larger block, a subnormal-only difference in the other (numerics.md
 *       4.6). Was the exact option (one k=32 wgmma per block): -1.0..-2.1 % at 16x4096.
 *   dK: EXACT option - one k=32 wgmma per 32-query block into a partial, factor 2^M,
 *       M = max over the block of eDS + eQ; A = e4m3(dS^ 2^(eQ_i - M)): the dS code
 *       itself for mxfp8, a fold within 32 rows for mxfp8-exact (per-row eDS, per-token
 *       eQ; subnormal-only difference).
 *   (v2, dev/backward/v2_branchfree.patch, folded across the 4 key blocks / 2 query blocks
 *   instead: measured dQ/dK relL2 1.0e-2..1.4e-2 vs the reference, because a block whose
 *   scale is 2^s below the step's largest loses its small entries to E4M3 subnormals.)
 *   dV: P_ij contains the normalizer exp2(m_i - lse_i/ln2), not a power of two: an
 *       E4M3 operand would re-round P (v2 did: relative <= 2^-4 an element, measured
 *       dV relL2 2.7e-2). v3 multiplies P 2^(eDO_i - G + 14) in F16 (relative 2^-11;
 *       G = max eDO over the queries the key tile sees, all heads of the group; the
 *       +14 keeps P >= 2^-28 2^(G - eDO) normal in F16, the rest is the subnormal
 *       latitude) by the dO codes, exact in F16. Costs the F16 rate (half of FP8) on
 *       this one product.
 * TMA: the transposed tiles (tokens innermost) go by TMA, whose boxes must start 16-byte
 * aligned: Q^T and K^T hold every document from a 32-token boundary (v16, eleventh
 * session; before, a document starting off a 16-token boundary had its transposed tiles
 * built by a shared-memory transpose of the row tiles, 22 % of logu-64k's backward).
 * Per sub-step the two warpgroups meet at one CTA barrier, before dQ (its operand holds
 * both warpgroups' dS); the dS block maxima, exponents and dQ factors are warpgroup-local
 * (named barriers), and a query tile costs two more CTA barriers (its loads landed; the
 * previous tile's buffer is free, so the next tile's loads go out right after).
 * dQ modes (template DQM): kDqAdds (the default, above), kDqTurns (deterministic: the same adds in
 * turns, backward_common.cuh) and kDqSplit (deterministic with the workspace's split regions,
 * sixty-fourth session): each warpgroup stores its dS tile and row factors by TMA after a
 * warpgroup barrier instead of the CTA barrier and dQ's products, and backward_dq.cu sums dQ.
 * The split takes dQ's EXACT option (v149, eighty-first session): its tile holds the dS codes
 * unshifted (mxfp8: the dK operand's codes; mxfp8-exact: dS^ 2^(eK_j - EKmax)) and G = eDS +
 * EKmax per (key block, query) as int16; dq_split runs one k=32 product a key block, scaled by
 * 2^G scale (the pair fold saved FP32 adds in this kernel, which the split does not make).
 * Epilogue: dK scaled (and rotated back), dV times 2^(G - 14), both through shared memory
 * (stmatrix) and out as whole 256-byte rows.
 * STATUS: v87 (thirty-second session, 2026-12-03; the wgmma descriptors advanced by one add,
 * after v86's key-pair staging and v77's TMA tile loads): 8.30 ms at 16x4096 mxfp8 in the dev
 * harness for the whole backward (v3 18.1, v9 11.34, v28 10.18, v40 9.88, v53 9.28, v59 8.79,
 * v64 8.71, v77 8.51 in earlier commands), 8.247 ms in Table A at f2ee70a. dQ differs from
 * the exact option only as numerics.md 4.6 allows. The main kernel costs ~7.4 us per tile
 * pair and SM (ncu 7,410 us at 16x4096, f2ee70a) against ~2 us of tensor work.
 * docs/perf-notes.md "Backward kernel".
 */
#include <cuda.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include <type_traits>

#include "backward_common.cuh"
#include "backward_wgmma.cuh"
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"
#include "sm90_exp2.cuh"
#include "sm90_ptx.cuh"
#include "sm90_tiles.cuh"
#include "sm90_tma_host.cuh"

namespace flamia_bwd {

/* ================================================================ 3b. FP8 wgmma kernel */
using namespace flamia_sm90; /* sm90_ptx.cuh */
__device__ __forceinline__ uint32_t f16x2(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}

/* query (0..63 in a sub-step) of accumulator column pair j of lane quad tq (tq4 = 4 tq):
 * flamia_fp8_perm_row(8 j + 2 tq), written out so that it folds to adds for an unrolled j */
__device__ __forceinline__ int acc_query(int j, int tq4) {
    return ((j >> 2) << 5) + (((j & 3) >> 1) << 4) + tq4 + ((j & 1) << 1);
}

/* four 8x8 b16 matrices stored transposed (stored row c of matrix k = column c of the
 * accumulator layout, from lane 8k + c's address) */
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* four E4M3 codes in one register: (a, b) in the low half, (c, d) in the high half, a and c in the
 * lower byte of theirs (flamia_cvt_e4m3x2's order); ptxas merges the halves in the second F2FP */
__device__ __forceinline__ uint32_t cvt_e4m3x4_rows(float a, float b, float c, float d) {
    uint32_t r;
    asm("{\n.reg .b16 l, h;\ncvt.rn.satfinite.e4m3x2.f32 l, %2, %1;\ncvt.rn.satfinite.e4m3x2.f32 h, %4, %3;\n"
        "mov.b32 %0, {l, h};\n}"
        : "=r"(r)
        : "f"(a), "f"(b), "f"(c), "f"(d));
    return r;
}

/* 2^e built from the bits, branch-free: 0 for e <= -127 (FP32 subnormal factors only
 * ever scale values whose E4M3 code is 0 anyway), e <= 127 by construction. */
__device__ __forceinline__ float pow2b(int e) { return __int_as_float(min(max(e + 127, 0), 254) << 23); }

/* One step of a butterfly max-reduction of v[0 .. 2 HALF) over lane bit m: the upper lane
 * keeps columns HALF.., the lower 0..HALF-1 (both in v[0 .. HALF)); the exchanged value is
 * picked with bit selects (a ?: on the array elements made the compiler index local memory). */
template <int HALF> __device__ __forceinline__ void butterfly_max_step(float (&v)[16], int lane, int m) {
    const uint32_t sel = (lane & m) ? 0xffffffffu : 0u;
#pragma unroll
    for (int c = 0; c < HALF; c++) {
        const uint32_t lo = __float_as_uint(v[c]), hi = __float_as_uint(v[c + HALF]);
        const uint32_t send = hi ^ ((lo ^ hi) & sel), keep = lo ^ hi ^ send;
        v[c] = fmaxf(__uint_as_float(keep), __shfl_xor_sync(0xffffffffu, __uint_as_float(send), m));
    }
}

struct SmemF {
    static constexpr int kTile = 128 * 128;
    static constexpr int kK = 0, kV = kK + kTile, kKt = kV + kTile;
    static constexpr int kBuf = kKt + kTile;                 /* 2 x {Q, dO, Q^T} */
    static constexpr int kQ = 0, kDO = kTile, kQt = 2 * kTile, kBufBytes = 3 * kTile;
    static constexpr int kDOh = kBuf + 2 * kBufBytes;        /* dO codes as F16, [128 rows c][128 D], 2 panels */
    static constexpr int kDS = kDOh + 2 * kTile;             /* 2 x [64][128] dS codes (dQ operand) */
    static constexpr int kRow = kDS + kTile;                 /* 2 x per query of the tile (natural order): */
    /* float crow, 2^23+520-m, norm*2^-8, delta, 2^eDO, 2^(eDO-G); int qlim, eq : 8 x 128 x 4 */
    static constexpr int kRowBytes = 8 * 128 * 4;
    static constexpr int kAmax = kRow + 2 * kRowBytes;       /* float [8 warps][64]: |dS| max of a warp's 16 keys */
    static constexpr int kEds = kAmax + 8 * 64 * 4;          /* int [4][64] */
    static constexpr int kInv = kEds + 4 * 64 * 4;           /* float [4][64]: 2^-eDS */
    static constexpr int kDqf = kInv + 4 * 64 * 4;           /* float [2][2][64]: scale 2^F, dQ chain factor per sub-step parity
                                                                (the split: int16 G [2][2][2][64]) */
    static constexpr int kDqOp = kDqf + 2 * 2 * 64 * 4;      /* float [4][64]: mxfp8-exact's dQ operand factor 2^(G - F - EKmax) */
    static constexpr int kGq = kDqOp + 4 * 64 * 4;           /* int [4][64]: G = eDS + EKmax per (key block, query) */
    static constexpr int kDqS = kGq + 4 * 64 * 4;            /* unused since v59 (mxfp8's 2^-s in registers); kept: the layout measured */
    static constexpr int kMk = kDqS + 8 * 4;                 /* int [4][2] (+pad): mxfp8-exact's dK partial exponent per (key, query) block */
    static constexpr int kEKp = kMk + 16 * 4;                /* int [128] */
    static constexpr int kMisc = kEKp + 128 * 4;             /* int [8]: G; deterministic turn row, head per warpgroup */
    static constexpr int kPvf = kMisc + 8 * 4;               /* float [2 warpgroups][128]: dV operand factor */
    static constexpr int kKb = kPvf + 2 * 128 * 4;           /* float [4]: mxfp8's 2^eK per 32-key block */
    static constexpr int kCkq = kKb + 4 * 4;                 /* float [2 warpgroups][2 blocks][128]: mxfp8's 2^eK c */
    static constexpr int kBar = kCkq + 2 * 2 * 128 * 4;      /* uint64 [4] */
    static constexpr int kBytes = kBar + 32 + 1024;
};

/* The FP8 main kernel's body. DBG (flamia_cuda_debug_p_codes, kernel bwd_main_fp8_dbg):
 * also stores every evaluated pair's recomputed P code at dbg_codes[(h T + i) T + j]
 * (global token indices) and writes no dK, dV. */
/* dQ's reduce-adds: issued per warp as 16-row boxes in mxfp8's default kernel (v62), by one
 * thread per warpgroup as 64-row boxes in the others. The kernel and its dQ tensor map
 * (launch_fp8) both take it from here, so the box always matches the adds. */
__host__ __device__ constexpr bool dq_adds_per_warp(int kind, bool det) { return kind == 1 && !det; }

/* The tile-local key of K / V staging row r (and so of S^T's, dP^T's, dK's and dV's accumulator
 * row r): inside each 16-row group, rows g and g + 8 hold keys 2g and 2g + 1, so that a thread's
 * two accumulator rows are adjacent keys and its dS codes go to [query][key] as 16-bit pairs.
 * The key sets of every warp and 32-key block are unchanged. */
__device__ __forceinline__ int key_of_row(int r) { return (r & ~15) | ((r & 7) << 1) | ((r >> 3) & 1); }

/* The main kernel's tensor maps (launch_main_fp8): Q^T and K^T codes, the dQ accumulator
 * (launch_fp8; the debug kernel adds dQ by REDs and leaves it unset), the Q and dO code rows
 * and the F16 dO panel through the permuted-stride maps */
struct BwdMaps {
    CUtensorMap qt, kt, dq, q, dO, dof;
    CUtensorMap ds; /* kDqSplit: ds_codes as rows of 128 B, [64 rows][64 B] boxes, 64-byte swizzle */
};

/* KIND 1 mxfp8, 2 mxfp8-exact; DQM: dQ's mode (kDqAdds, kDqTurns: deterministic by turns, kDqSplit:
 * deterministic, the dS codes stored for backward_dq.cu); ORDER: launch order from p.order
 * (never with turns: they wait on key tiles in the grid's own order) */
template <int KIND, bool DBG, int DQM, bool ORDER>
__device__ __forceinline__ void bwd_main_body(const BwdMaps &maps, const MainParams &p, uint8_t *dbg_codes) {
    const CUtensorMap &tm_qt = maps.qt, &tm_kt = maps.kt, &tm_dq = maps.dq, &tm_q = maps.q, &tm_do = maps.dO,
                      &tm_dof = maps.dof;
    using SM = SmemF;
    constexpr int NOEXP = -1000;
    constexpr bool DET = DQM == kDqTurns, SPLIT = DQM == kDqSplit && !DBG;
    constexpr bool kWarpAdds = dq_adds_per_warp(KIND, DQM != kDqAdds);
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    /* 1024-byte alignment by pointer arithmetic on the shared array itself (keeps the
     * shared state space visible to the compiler: LDS/STS/ATOMS, not generic accesses) */
    uint8_t *smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    float *sAmax = (float *)(smem + SM::kAmax);
    int *sEds = (int *)(smem + SM::kEds), *sMk = (int *)(smem + SM::kMk);
    float *sInv = (float *)(smem + SM::kInv), *sDqf = (float *)(smem + SM::kDqf), *sDqOp = (float *)(smem + SM::kDqOp);
    int *sGq = (int *)(smem + SM::kGq);
    int16_t *sGs = (int16_t *)(smem + SM::kDqf); /* the split's G: int16 [2 parity][2 wg][2 key blocks][64] */
    int *sEKp = (int *)(smem + SM::kEKp), *sMisc = (int *)(smem + SM::kMisc);
    uint64_t *sBar = (uint64_t *)(smem + SM::kBar);

    /* a 1-D grid over (key tile slot, kv head): kv head fastest, then key tile, then
     * document (sm90_tiles.cuh slots). A document's first key tiles, the CTAs that see the
     * most query tiles, start together for all heads early in that document's share of
     * the grid, so the run does not end waiting on a long CTA launched late (kv head
     * slowest, the order before, left the last head's first key tiles to the end: a
     * list-scheduling model of the Table A fit put that tail at 1.4-11 % of the backward,
     * dev/backward/v23_head_fastest.patch). The CTAs resident together still share one or
     * two documents' Q / dO tiles and dq_acc rows in L2. */
    /* ORDER (bwd_order's table, the longest CTAs first; backward.cu use_order): CTA blockIdx.x
     * takes item p.order[blockIdx.x], -1: none. A template argument, so that the kernels in
     * the grid's own order are compiled exactly as without it (the run-time test cost MHA's
     * backward 0.5 %, forty-eighth session). */
    unsigned item = blockIdx.x;
    if constexpr (ORDER) {
        item = (unsigned)__ldg(p.order + blockIdx.x);
        if ((int)item < 0) return;
    }
    /* the kv heads p.hk0 .. p.hk0 + p.nhk - 1: in the split dQ's chunks; the other modes take all of
     * them (compiled as before: the chunk's two words cost the turns kernel 56 bytes of spills) */
    const int nhk = SPLIT ? p.nhk : p.Hkv;
    const DocTile dt = doc_tile_of(p.cu, p.num_docs, (int)(item / nhk));
    if (dt.doc < 0) return;
    /* deterministic dQ: a document's last key tile first (dq_turn_wait's order) */
    const int doc = dt.doc, n = DET ? dt.ntiles - 1 - dt.tile : dt.tile, hk = (SPLIT ? p.hk0 : 0) + (int)(item % nhk);
    const int ds = p.cu[doc], len = p.cu[doc + 1] - ds;
    const int k0 = n * 128; /* doc-local first key of the tile */
    const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, wq = wtid >> 5, lane = tid & 31;
    const int g = lane >> 2, tq = lane & 3, tq4 = 4 * tq;
    const int rloc[2] = {wg * 64 + wq * 16 + 2 * g, wg * 64 + wq * 16 + 2 * g + 1}; /* tile-local keys of my rows (key_of_row) */
    const int kbl = wg * 2 + (wq >> 1);                                      /* my rows' 32-key block */
    const int mt0 = p.causal ? n : 0, nqt = (len + 127) / 128, per_head = nqt - mt0;
    const int nit = per_head * p.group;
    /* the document's first position in Q^T / K^T (32-token aligned, bwd_transpose): the
     * transposed tiles' TMA boxes start there */
    const int tpos = vt_start(ds, doc);

    /* ---- prologue: K, V (rows in key_of_row's order) by cp.async; K^T by TMA; key constants */
    if (tid == 0) {
        for (int b = 0; b < 3; b++) mbar_init(smem_u32(&sBar[b]), 1);
        mbar_init(smem_u32(&sBar[3]), 256); /* the F16 dO tile: every thread arrives (cp.async or plain) */
        sMisc[0] = NOEXP;
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int ch = tid + i * 256, r = ch >> 3, q = ch & 7;
        const int tok = ds + k0 + key_of_row(r);
        const bool ok = tok < p.T;
        const size_t off = ((size_t)(ok ? tok : 0) * p.Hkv + hk) * kD + q * 16;
        cp_async16(smem_u32(smem + SM::kK + sw128(r, q)), p.k8 + off, ok);
        cp_async16(smem_u32(smem + SM::kV + sw128(r, q)), p.v8 + off, ok);
    }
    cp_async_commit();
    if (tid == 0) {
        const uint32_t bar = smem_u32(&sBar[2]);
        mbar_expect_tx(bar, 128 * 128);
        tma_load_3d(smem_u32(smem + SM::kKt), &tm_kt, tpos + k0, 0, hk, bar);
    }
    float kf[2], vf[2], ekf[2];
    int jkv[2];
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        const int j = k0 + rloc[hh];
        kf[hh] = vf[hh] = ekf[hh] = 0.f;
        jkv[hh] = 0x7fffffff; /* never <= a query limit */
        if (j < len) {
            const size_t r = (size_t)(ds + j) * p.Hkv + hk;
            const int ek = p.ke[r];
            kf[hh] = ekf[hh] = flamia_pow2f(ek);
            vf[hh] = flamia_pow2f(p.ve[r]);
            jkv[hh] = j;
        }
    }
    /* mxfp8: the block's 2^eK (0 past the document), from the thread holding its first key */
    if (KIND == 1 && lane == 0 && (wq & 1) == 0) ((float *)(smem + SM::kKb))[kbl] = kf[0];
    if (tid < 128) { /* prefix max of eK inside each 32-key block (valid keys only) */
        const int j = k0 + tid;
        int x = j < len ? (int)p.ke[(size_t)(ds + j) * p.Hkv + hk] : NOEXP;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(0xffffffffu, x, o);
            if (lane >= o) x = max(x, y);
        }
        sEKp[tid] = x;
    }
    { /* G = max eDO over the queries this key tile meets, all heads of the group. mxfp8:
         one read per 32-token document block (bwd_pre_do gives every row of a block the
         block's exponent, and qs is a block start), 1/32 of the rows' loads */
        constexpr int STEP = KIND == 1 ? 32 : 1;
        const int qs = mt0 * 128, nq = (len - qs + STEP - 1) / STEP;
        int mx = NOEXP;
        for (int x = tid; x < nq * p.group; x += 256) {
            const int qi = qs + (x / p.group) * STEP, h = hk * p.group + x % p.group;
            mx = max(mx, (int)p.doe[(size_t)(ds + qi) * p.Hq + h]);
        }
#pragma unroll
        for (int o = 16; o; o >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        if (lane == 0) atomicMax(&sMisc[0], mx);
    }
    __syncthreads();
    const int G = sMisc[0];
    /* kDqSplit: the document's tiles in ds_codes, query head h's at ds0 + h ds_cnt (backward_common.cuh;
     * ds0 takes the chunk's first query head, p.hk0 group, as head 0) */
    const long long ds_cnt = split_doc_tiles(nqt, p.causal);
    const long long ds0 = SPLIT ? __ldg(p.ds_off + doc) - (long long)(p.hk0 * p.group) * ds_cnt : 0;

    /* loads of query tile `it` (head, tile) into buffer it & 1: Q, dO rows permuted
     * (row c holds query flamia_fp8_perm_row(c)) and Q^T, dO^T by TMA (Q, dO by cp.async on a
     * tile that crosses T), row constants by cp.async */
    auto load_tile = [&](int it, int gi, int mi) { /* it = gi per_head + mi */
        const int b = it & 1, h = hk * p.group + gi, q0 = (mt0 + mi) * 128;
        uint8_t *buf = smem + SM::kBuf + b * SM::kBufBytes;
        /* Q and dO rows in flamia_fp8_perm_row's order: one TMA box each through the
         * permuted-stride maps (flamia_tma_perm_rows) when the tile lies inside the T rows (the
         * maps bound-check only the box's first-row dimension), else every thread's cp.async
         * with zero fill past T */
        const bool tma_rows = ds + q0 + 128 <= p.T;
        if (tma_rows) {
            if (tid == 0) {
                tma_load_5d(smem_u32(buf + SM::kQ), &tm_q, h * kD, ds + q0, smem_u32(&sBar[b]));
                tma_load_5d(smem_u32(buf + SM::kDO), &tm_do, h * kD, ds + q0, smem_u32(&sBar[b]));
            }
        } else { /* a thread's rows are c0 + 32 i and the permutation keeps 32-row blocks
             (perm(c0 + 32 i) = perm(c0) + 32 i; sw128 depends on c & 7 only): one address
             and constant strides instead of the permutation, clamp and swizzle per chunk */
            const int c0 = tid >> 3, q = tid & 7;
            const int tok0 = ds + q0 + flamia_fp8_perm_row(c0);
            const size_t off0 = ((size_t)tok0 * p.Hq + h) * kD + q * 16, step = (size_t)32 * p.Hq * kD;
            const uint32_t sq = smem_u32(buf + SM::kQ) + sw128(c0, q), sdo = smem_u32(buf + SM::kDO) + sw128(c0, q);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const bool ok = tok0 + 32 * i < p.T;
                const size_t off = ok ? off0 + i * step : 0;
                cp_async16(sq + i * 4096, p.q8 + off, ok);
                cp_async16(sdo + i * 4096, p.do8 + off, ok);
            }
        }
        if (tid == 0) {
            const uint32_t bar = smem_u32(&sBar[b]);
            mbar_expect_tx(bar, (tma_rows ? 3 : 1) * 128 * 128);
            tma_load_3d(smem_u32(buf + SM::kQt), &tm_qt, tpos + q0, 0, h, bar);
        }
        { /* row constants of query q0 + r, natural order (SoA: field w at w * 128 + r): the
             dO preprocessing's record by cp.async; the causal / document limit (field 6)
             here; rows past the document their neutral values (no P, no dS, eQ excluded from
             the dK block exponent) */
            float *row = (float *)(smem + SM::kRow + b * SM::kRowBytes);
            const int r = tid & 127, i = q0 + r;
            const bool ok = i < len;
            const float *src = p.rows + (size_t)h * 8 * p.T + ds + i;
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int w = (tid >> 7) + 2 * k; /* warpgroup 0: fields 0 2 4 6, 1: 1 3 5 7 */
                if (w == 6) ((int *)row)[768 + r] = ok ? (p.causal ? i : len - 1) : -1;
                else if (ok) cp_async4(smem_u32(row + w * 128 + r), src + (size_t)w * p.T, true);
                else row[w * 128 + r] = w == 1 ? 256.f : w == 7 ? __int_as_float(NOEXP) : 0.f;
            }
        }
    };

    float dkacc[64], dvacc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) dkacc[i] = dvacc[i] = 0.f;

    const uint32_t aK = smem_u32(smem + SM::kK), aV = smem_u32(smem + SM::kV), aKt = smem_u32(smem + SM::kKt);
    load_tile(0, 0, 0);
    cp_async_commit();
    /* deterministic dQ: the turn this warpgroup has yet to pass, as its query row and head
     * (row -1: none), kept by thread wtid 0 in shared memory: a register pair live across the
     * loop made ptxas spill */
    if (DET && wtid == 0) sMisc[2 + wg] = -1;

    /* tile it's head in the group (gi) and query tile (mi), it = gi per_head + mi, kept as counters:
     * it / per_head and it % per_head (per_head differs per CTA) cost two integer divisions a tile,
     * a dependent chain of ~25 instructions each at the tile start */
    int gi = 0, mi = 0;
    for (int it = 0; it < nit; it++) {
        /* the turns kernels divide as before (with the counters mxfp8-exact's spilled 32 B, not 16) */
        const int gc = DET ? it / per_head : gi, mc = DET ? it % per_head : mi;
        const int b = it & 1, h = hk * p.group + gc, q0 = (mt0 + mc) * 128;
        const bool next_head = mc + 1 == per_head;
        const int gi1 = next_head ? gc + 1 : gc, mi1 = next_head ? 0 : mc + 1; /* tile it + 1 */
        cp_async_wait<0>(); /* tile it (and K, V) landed: nothing newer in flight */
        /* dQ staging read before its regions are reloaded (mxfp8 default: by every thread, though
         * only the warps' lane 0 have groups: predicated on lane 0, ptxas spilled 144 B) */
        if (!DBG && (kWarpAdds || wtid == 0)) bulk_wait_read_all();
        fence_proxy_async();
        /* every thread's copies of tile it are visible, and every thread is done with tile
         * it-1, whose buffer ((it+1) & 1) now takes tile it+1 (a whole tile of lead). The
         * vote: every row of the tile has its direct exponential factor (field 1, staged by
         * warpgroup 1), so P takes the direct form (sm90_exp2.cuh) for the whole tile. */
        const bool p_direct = __syncthreads_and(
            wg == 0 || ((const float *)(smem + SM::kRow + b * SM::kRowBytes))[128 + wtid] != 0.f);
        { /* dV's B operand for this tile: the dO codes as exact F16 values (written by
             bwd_pre_do), rows in the staged (permuted) order, MN-major, two 64-dim panels of
             [128 rows][128 B], 128-byte swizzle; completion on sBar[3]. The buffer is free:
             the previous tile's dV MMAs and dQ staging reads finished before the barrier. */
            if (ds + q0 + 128 <= p.T) { /* inside T: one box a panel through the permuted-stride map */
                if (tid == 0) {
                    const uint32_t bar = smem_u32(&sBar[3]), dh = smem_u32(smem + SM::kDOh);
                    mbar_expect_tx(bar, 2 * 128 * 128);
                    tma_load_5d(dh, &tm_dof, h * kD, ds + q0, bar);
                    tma_load_5d(dh + 128 * 128, &tm_dof, h * kD + 64, ds + q0, bar);
                } else {
                    mbar_arrive(smem_u32(&sBar[3]));
                }
            } else {
                /* a thread's rows are r0 + 16 i (r0 < 16): perm(r0 + 16 i) = perm(r0) + 16 i */
                const int r0 = tid >> 4, cc = tid & 15; /* dims 8cc..8cc+7 */
                const uint32_t dh = smem_u32(smem + SM::kDOh) + (cc >> 3) * (128 * 128) + sw128(r0, cc & 7);
                const int tok0 = ds + q0 + flamia_fp8_perm_row(r0);
                const size_t off0 = ((size_t)tok0 * p.Hq + h) * kD + cc * 8, step = (size_t)16 * p.Hq * kD;
#pragma unroll
                for (int i = 0; i < 8; i++) {
                    const bool ok = tok0 + 16 * i < p.T;
                    cp_async16(dh + i * 2048, p.dof16 + (ok ? off0 + i * step : 0), ok);
                }
                cp_async_mbar_arrive_noinc(smem_u32(&sBar[3]));
            }
        }
        if (it + 1 < nit) {
            load_tile(it + 1, gi1, mi1);
            cp_async_commit();
        }
        mbar_wait(smem_u32(&sBar[b]), (uint32_t)((it >> 1) & 1));
        if (it == 0) mbar_wait(smem_u32(&sBar[2]), 0u);

        uint8_t *buf = smem + SM::kBuf + b * SM::kBufBytes;
        const uint32_t aQ = smem_u32(buf + SM::kQ), aDO = smem_u32(buf + SM::kDO);
        const uint32_t aQt = smem_u32(buf + SM::kQt), aDOh = smem_u32(smem + SM::kDOh);
        const float *row = (const float *)(smem + SM::kRow + b * SM::kRowBytes);
        const float *sRc = row, *sRsc = row + 128, *sRnr = row + 256, *sRdl = row + 384, *sRdof = row + 512;
        const int *sRqlim = (const int *)row + 768, *sReq = (const int *)row + 896;
        /* mxfp8: S's factor 2^eK c per (key block, query), once a tile instead of once a
         * sub-step in every thread: the same FP32 product (a thread past the document used 0
         * for its block's 2^eK; its P is masked either way). 2^eV 2^eDO the same way made
         * ptxas spill 144 B in the loop. */
        float *sCkqW = (float *)(smem + SM::kCkq) + wg * 256;
        if (KIND == 1) {
            const float *sKb = (const float *)(smem + SM::kKb);
            const float c = row[wtid];
#pragma unroll
            for (int kb = 0; kb < 2; kb++) sCkqW[kb * 128 + wtid] = sKb[wg * 2 + kb] * c;
        }
        /* dV's operand factor 2^(eDO - G + 14) per query (<= 2^14 1.07 in F16), one copy per
         * warpgroup, so that only a warpgroup barrier orders it (the record keeps eDO) */
        float *sPvfW = (float *)(smem + SM::kPvf) + wg * 128;
        sPvfW[wtid] = q0 + wtid < len ? pow2z(__float_as_int(row[640 + wtid]) - G + 14) : 0.f;
        bar_named(1 + wg, 128);
        const float *sRpvf = sPvfW;

        for (int h2 = 0; h2 < 2; h2++) {
            const int qsub = q0 + h2 * 64;
            if (qsub >= len) break;
            float sacc[32], dpacc[32];
            wgmma_fence();
            /* mxfp8: S and dP in two commit groups, S first, so that P's codes and dV's
             * operand are built while dP's products run (dS after, in a loop of its own;
             * -1.0 % at 16x4096). mxfp8-exact keeps one group and dS inside P's loop: the
             * split measured +1 % there (dev/backward/v58_s_first.patch). */
            constexpr bool kSFirst = KIND == 1;
            const uint64_t dK = desc_sw128(aK + wg * 8192), dQ = desc_sw128(aQ + h2 * 8192);
            const uint64_t dV = desc_sw128(aV + wg * 8192), dDO = desc_sw128(aDO + h2 * 8192);
#pragma unroll
            for (int k = 0; k < 4; k++) bwd_wgmma_e4m3_ss_n64(sacc, desc_advance(dK, k * 32), desc_advance(dQ, k * 32), k);
            if (kSFirst) wgmma_commit();
#pragma unroll
            for (int k = 0; k < 4; k++) bwd_wgmma_e4m3_ss_n64(dpacc, desc_advance(dV, k * 32), desc_advance(dDO, k * 32), k);
            wgmma_commit();
            if (h2 == 0) {
                mbar_wait(smem_u32(&sBar[3]), (uint32_t)(it & 1));
                fence_proxy_async();
            }
            if (kSFirst) {
                wgmma_wait<1>();
                reg_fence(sacc);
            } else {
                wgmma_wait<0>();
                reg_fence(sacc);
                reg_fence(dpacc);
            }

            /* ---- P (forward's codes, final frame), dS (kept in dpacc), dV operand.
             * Column pair (j, tq) holds queries qn, qn + 1 (qn = flamia_fp8_perm_row(8j + 2tq),
             * even). */
            uint32_t pa[16]; /* F16 A fragments of P^T 2^(eDO - G + 14), 4 k-steps of 16 queries */
            auto p_codes = [&](auto direct_tag, auto full_tag) {
            constexpr bool DIRECT = decltype(direct_tag)::value, FULL = decltype(full_tag)::value;
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int ql = h2 * 64 + acc_query(j, tq4);
                const float2 cr = *(const float2 *)(sRc + ql), sc = *(const float2 *)(sRsc + ql);
                const float2 nr = *(const float2 *)(sRnr + ql), dl = *(const float2 *)(sRdl + ql);
                const float2 dof = *(const float2 *)(sRdof + ql), pvf = *(const float2 *)(sRpvf + ql);
                /* mxfp8: a thread's two key rows lie in one 32-key block, so 2^eK and 2^eV are
                 * one scalar each (row 1 differs only when it is past the document, and then its
                 * P is masked): the key factor goes into the query factor, t = fl(s (2^eK c
                 * 2^eQ)), the forward's own association (forward.cu: t = fl(u cc)). The form
                 * fl(fl(s 2^eK) c 2^eQ) is the same number only while s 2^eK is exact in FP32:
                 * with a large K and a small softmax scale it overflowed, and P was not the
                 * forward's (test_gpu_consistency, "wide range"; dev/backward/v32_key_fold.patch).
                 * dP's 2^eV goes into 2^eDO the same way (the dS loop below). mxfp8-exact's
                 * per-token 2^eK stays per row, as its forward applies it (u = s 2^eK first). */
                const float2 ckq = KIND == 1 ? *(const float2 *)(sCkqW + (wq >> 1) * 128 + ql) : make_float2(0.f, 0.f);
                const int2 qlim = FULL ? make_int2(0, 0) : *(const int2 *)(sRqlim + ql);
                float2 mfr = make_float2(0.f, 0.f); /* the final frames (split path only) */
                if (!DIRECT) {
                    const size_t r0 = (size_t)(ds + q0 + ql) * p.Hq + h;
                    if (q0 + ql < len) mfr.x = p.row_frame[r0];
                    if (q0 + ql + 1 < len) mfr.y = p.row_frame[r0 + p.Hq];
                }
                float pv[4];
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    float e256[2];
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        /* E(t, m) 2^8 of numerics.md 3.3 as the forward evaluates it (sm90_exp2.cuh):
                         * ex2(t) 2^(8 - m), or the split where a row's frame needs it; code 0 for
                         * pairs the causal / document limit excludes (then P = 0 and dS = +-0). */
                        const float t = KIND == 1 ? sacc[4 * j + 2 * hh + e] * (e ? ckq.y : ckq.x)
                                                  : (sacc[4 * j + 2 * hh + e] * kf[hh]) * (e ? cr.y : cr.x);
                        const float E = DIRECT ? exp_frame_direct(t, e ? sc.y : sc.x)
                                               : exp_frame_split_k63(t, (e ? mfr.y : mfr.x) - 8.f);
                        e256[e] = FULL || jkv[hh] <= (e ? qlim.y : qlim.x) ? E : 0.f;
                    }
                    const uint32_t pbc = flamia_cvt_e4m3x2(e256[0], e256[1]);
                    const float2 pb = flamia_e4m3x2_values(pbc);
                    if (DBG) { /* row = key jkv[hh], column e = query q0 + ql + e */
#pragma unroll
                        for (int e = 0; e < 2; e++)
                            if (FULL || jkv[hh] <= (e ? qlim.y : qlim.x))
                                dbg_codes[((size_t)h * p.T + ds + q0 + ql + e) * p.T + ds + jkv[hh]] =
                                    (uint8_t)(pbc >> (8 * e));
                    }
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int idx = 4 * j + 2 * hh + e;
                        const float P = (e ? pb.y : pb.x) * (e ? nr.y : nr.x);
                        if (kSFirst) {
                            sacc[idx] = P; /* dS below, once dP has landed */
                        } else {
                            const float dP = (dpacc[idx] * vf[hh]) * (e ? dof.y : dof.x);
                            dpacc[idx] = P * (dP - (e ? dl.y : dl.x));
                        }
                        pv[2 * hh + e] = P * (e ? pvf.y : pvf.x);
                    }
                }
                /* k-step j >> 1: columns 16 (j >> 1).. = rows c of the F16 dO tile */
                flamia_p16_fragment_put(pa, j, f16x2(pv[0], pv[1]), f16x2(pv[2], pv[3]));
            }
            };
            /* the warpgroup's 64 keys and the sub-step's 64 queries all valid and, when causal,
             * every key at or before every query: no pair is masked (most sub-steps of a long
             * document), so that path drops the limit loads and the 64 compare-selects */
            const int klast = k0 + wg * 64 + 63;
            const bool full = qsub + 63 < len && klast < len && (!p.causal || klast <= qsub);
            if (p_direct) {
                if (full)
                    p_codes(std::true_type{}, std::true_type{});
                else
                    p_codes(std::true_type{}, std::false_type{});
            } else {
                p_codes(std::false_type{}, std::false_type{});
            }
            if (kSFirst) { /* dS = P (dP - D) in dpacc */
                wgmma_wait<0>();
                reg_fence(dpacc);
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const int ql = h2 * 64 + acc_query(j, tq4);
                    const float2 dl = *(const float2 *)(sRdl + ql), dof = *(const float2 *)(sRdof + ql);
                    const float2 vdo = make_float2(vf[0] * dof.x, vf[0] * dof.y);
#pragma unroll
                    for (int hh = 0; hh < 2; hh++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int idx = 4 * j + 2 * hh + e;
                            dpacc[idx] = sacc[idx] * (dpacc[idx] * (e ? vdo.y : vdo.x) - (e ? dl.y : dl.x));
                        }
                }
            }
            /* ---- dS group maxima, each warp's part of them in its slot; the two warps of a
             * 32-key block meet in the reader. mxfp8: per (32-key, 32-query) block.
             * mxfp8-exact: per (query, 32-key block): each warp reduces its 16 key rows for its
             * 16 query columns c = 2j + e by a butterfly over the 3 row bits of the lane (xor
             * 16, 8, 4: each step halves the columns a lane keeps), so lane (g, tq) ends with
             * columns 2g, 2g + 1 = queries qn(j = g) + {0, 1}. */
            if (KIND == 1) {
                /* mxfp8: one maximum per (warp, 32-query block): columns j < 4 are queries 0..31,
                 * j >= 4 queries 32..63; a tree in the thread, then one REDUX per block over the
                 * warp (max is exact in any order, NaN dropped by fmaxf) */
                float m[2];
#pragma unroll
                for (int b = 0; b < 2; b++) {
                    float v[8];
#pragma unroll
                    for (int c = 0; c < 8; c++)
                        v[c] = fmaxf(fabsf(dpacc[16 * b + 2 * c]), fabsf(dpacc[16 * b + 2 * c + 1]));
#pragma unroll
                    for (int w = 4; w; w >>= 1)
#pragma unroll
                        for (int c = 0; c < w; c++) v[c] = fmaxf(v[c], v[c + w]);
                    m[b] = v[0];
                }
                /* over the warp: one REDUX each instead of a 5-step shuffle chain. Every value is
                 * an |x| (sign bit clear), so the unsigned maximum of the bits is fmaxf's; NaN
                 * (a thread whose values are all NaN) goes in as 0, which fmaxf would have dropped */
                unsigned u[2];
#pragma unroll
                for (int b = 0; b < 2; b++) u[b] = __reduce_max_sync(0xffffffffu, m[b] == m[b] ? __float_as_uint(m[b]) : 0u);
                if (lane < 2) sAmax[(wg * 4 + wq) * 64 + 32 * lane] = __uint_as_float(lane ? u[1] : u[0]);
            } else {
                float v[16];
#pragma unroll
                for (int c = 0; c < 16; c++) {
                    const int j = c >> 1, e = c & 1;
                    v[c] = fmaxf(fabsf(dpacc[4 * j + e]), fabsf(dpacc[4 * j + 2 + e]));
                }
                butterfly_max_step<8>(v, lane, 16);
                butterfly_max_step<4>(v, lane, 8);
                butterfly_max_step<2>(v, lane, 4);
                const int qn = acc_query(g, tq4);
                *reinterpret_cast<float2 *>(sAmax + (wg * 4 + wq) * 64 + qn) = make_float2(v[0], v[1]);
            }
            bar_named(1 + wg, 128);
            /* mxfp8: the dS exponent, the dK partial exponent M and the dQ operand factor are
             * one number per 32x32 block, so each warp derives its warpgroup's four blocks (2
             * key blocks x 2 query blocks) from the slots itself: lane l takes block (x = l & 1,
             * qb = (l >> 1) & 1), the pair's G comes from lane l ^ 1, and every lane takes its
             * own key block's two by shuffles. No exchange through shared memory: one warpgroup
             * barrier instead of three. Each is the value the per-row path below computes at
             * the block's first query; dQ's row factor too, for every row of the block (a
             * query block and a key block start at 32-token multiples of the document, so
             * every query of a block sees the same valid keys of a key block, whose eK is one). */
            float invr[2] = {0.f, 0.f}, dkf[2] = {0.f, 0.f}; /* my key block, per query block */
            uint32_t dqsr[2] = {0u, 0u};
            if (KIND == 1) {
                const int x = lane & 1, qb = (lane >> 1) & 1, kb = wg * 2 + x;
                const int i = qsub + 32 * qb;
                const int last = (p.causal ? min(i, len - 1) : len - 1) - k0; /* tile-local, >= 0 */
                const float *slot = sAmax + (wg * 4 + 2 * x) * 64 + 32 * qb;
                const float a = fmaxf(slot[0], slot[64]);
                const int e = flamia_fmt_block_exponent(a, 0), ekm = sEKp[min(last, kb * 32 + 31)];
                const bool v = a > 0.f;
                const int gq = v && last >= kb * 32 ? e + ekm : NOEXP;
                const int F = max(gq, __shfl_xor_sync(0xffffffffu, gq, 1));
                const float inv = v ? flamia_pow2f(-e) : 0.f;
                const float dk = v ? pow2z(e + sReq[h2 * 64 + 32 * qb]) : 0.f;
                const uint32_t dqs = gq == NOEXP ? 0u : flamia_f16x2_pow2_neg(F - gq);
                const int x1 = wq >> 1;
#pragma unroll
                for (int b = 0; b < 2; b++) {
                    invr[b] = __shfl_sync(0xffffffffu, inv, x1 + 2 * b);
                    dkf[b] = __shfl_sync(0xffffffffu, dk, x1 + 2 * b);
                    dqsr[b] = __shfl_sync(0xffffffffu, dqs, x1 + 2 * b);
                }
                if constexpr (SPLIT) {
                    /* the split takes dQ's exact option (numerics.md 4.6; v149, eighty-first session: -2 %
                     * at 16x4096): the codes themselves, one k=32 product a key block in dq_split, scaled
                     * there by 2^G scale; G per (key block kbx, query) as int16, per sub-step parity */
                    const int gk = __shfl_sync(0xffffffffu, gq, (wq >> 1) + 2 * (wq & 1));
                    sGs[(h2 * 2 + wg) * 128 + wtid] = (int16_t)max(gk, -32768);
                } else {
                    /* per sub-step parity: the other warpgroup may still read the previous one's */
                    const float dqf = __shfl_sync(0xffffffffu, pow2z(F) * p.scale, 2 * (wq & 1));
                    if (wq < 2) sDqf[(h2 * 2 + wg) * 64 + wtid] = dqf; /* rows of query block wq */
                }
            } else { /* mxfp8-exact: exponent of group (block kb, query ql): thread wtid of
                 warpgroup wg; a warp is one 32-query block of one key block. Everything here is
                 the warpgroup's own key blocks: only named (warpgroup) barriers until dQ. */
                const int kb = wg * 2 + (wtid >> 6), ql = wtid & 63;
                const float *slot = sAmax + (wg * 4 + 2 * (wtid >> 6)) * 64 + ql; /* its two warps' slots */
                const float a = fmaxf(slot[0], slot[64]);
                const int e = flamia_fmt_block_exponent(a, 0);
                const bool valid = a > 0.f;
                sEds[kb * 64 + ql] = valid ? e : NOEXP;
                sInv[kb * 64 + ql] = valid ? flamia_pow2f(-e) : 0.f;
                /* dK partial exponent of (key block kb, query block = this warp): max eDS + eQ */
                /* over the warp by one REDUX (a signed maximum) instead of a 5-step shuffle chain */
                const int f = __reduce_max_sync(0xffffffffu, valid ? e + sReq[h2 * 64 + ql] : NOEXP);
                if (lane == 0) sMk[kb * 2 + (ql >> 5)] = f;
                /* dQ: the block (query ql, key block kb) weighs G = eDS + EKmax, EKmax the max eK
                 * over the row's valid keys of the block (a prefix max).
                 * The warpgroup's two key blocks go into one chain of two k=32 products with the
                 * factor scale 2^F, F = the larger G of the pair (numerics.md 4.6, the operand
                 * fold): the A operand of a block 2^s below it (s = F - G) is its dS scaled by
                 * 2^-s, the same code where that stays normal in E4M3. F of a row never depends on
                 * later keys (the prefix max), so the exact recipe stays causal. */
                const int i = qsub + ql;
                const int last = (p.causal ? min(i, len - 1) : len - 1) - k0; /* last valid key, tile-local */
                int gq = NOEXP, ekm = 0;
                if (valid && last >= kb * 32) {
                    ekm = sEKp[min(last, kb * 32 + 31)];
                    gq = e + ekm;
                }
                if constexpr (SPLIT) { /* the exact option, no pair fold (see the mxfp8 branch) */
                    sDqOp[kb * 64 + ql] = gq == NOEXP ? 0.f : pow2b(-ekm);
                    sGs[(h2 * 2 + wg) * 128 + wtid] = (int16_t)max(gq, -32768);
                } else {
                    sGq[kb * 64 + ql] = gq;
                    bar_named(1 + wg, 128); /* the pair's G */
                    const int F = max(gq, sGq[(kb ^ 1) * 64 + ql]);
                    /* the operand factor dS^ 2^(eK_j - EKmax - s) */
                    sDqOp[kb * 64 + ql] = gq == NOEXP ? 0.f : pow2b(-ekm) * pow2b(gq - F);
                    /* per sub-step parity: the other warpgroup may still read the previous one's */
                    if ((wtid >> 6) == 0) sDqf[(h2 * 2 + wg) * 64 + ql] = pow2z(F) * p.scale;
                }
                bar_named(1 + wg, 128); /* sEds, sInv, sDqOp, sMk of this warpgroup's key blocks */
            }

            /* ---- dS codes: dK operand (registers), dQ operand (shared memory, [query][key]) */
            /* Byte (query qn, key r) of the [64][128] tile sits at qn 128 + ((r / 16) ^ (qn & 7)) 16
             * + r % 16 (128-byte swizzle). A thread's keys r = 16 C + 2g + hh (key_of_row) share
             * C = r / 16 and are adjacent: one 16-bit store per query. Its queries qn = cj + tq4
             * (cj = acc_query(j, 0), a constant of the unrolled j) have qn & 7 = (tq4 & 4) | (cj & 2),
             * qn + 1 one more: so every store is one of four thread constants (k = (cj & 2) | e,
             * e = 0 for qn, 1 for qn + 1) plus an immediate. */
            uint8_t *sDS = smem + SM::kDS + h2 * 8192 + tq4 * 128;
            int dsoff[4];
            {
                const int c = (wg * 4 + wq) ^ (tq4 & 4);
#pragma unroll
                for (int k = 0; k < 4; k++) dsoff[k] = ((c ^ k) << 4) | (2 * g);
            }
            uint32_t pk[8];
            /* mxfp8 split (v148, eighty-first session: -4.4 % at 16x4096, 16 two-byte stores a sub-step
             * before): the dQ operand codes as b16 key pairs, query qn low and qn + 1 high,
             * the accumulator layout of an 8x8 b16 matrix a j (rows: the warp's key pairs g,
             * columns 2tq + e: queries acc_query(j, tq4) + e); stmatrix.trans writes each column
             * as one 16-byte row of the [query][key] tile, 4 j a store. Lane l gives the row of
             * matrix l >> 3, column l & 7: query acc_query(j, 0) + 4 ((l & 7) >> 1) + (l & 1), where
             * acc_query(4 b + m, 0) = 32 b + 16 (m >> 1) + 2 (m & 1); b = 1 is 2048 bytes on (its
             * swizzle chunk the same: 32 queries keep (q >> 1) & 3). */
            uint32_t dsw[8];
            uint32_t dsrow = 0;
            if constexpr (SPLIT && KIND == 1) {
                const int m = lane >> 3, c = lane & 7;
                const int q = 16 * (m >> 1) + 2 * (m & 1) + 4 * (c >> 1) + (c & 1);
                dsrow = smem_u32(smem + SM::kDS + h2 * 8192 + wg * 4096) + q * 64 + ((wq ^ ((q >> 1) & 3)) << 4);
            }
#pragma unroll
            for (int j = 0; j < 8; j++) {
                if constexpr (SPLIT && KIND == 1) {
                    /* the j's four codes in one register (row g's pair low, row g + 8's high, F2FP
                     * merging the halves), then only byte permutes: the dS tile's b16 key pairs
                     * (bytes 0, 2, 1, 3 = byte_perm(row g, row g + 8, 0x5140) of the two-pair form) and
                     * dK's operand (two j per register: put_dk_operand's halves). v150, eighty-first
                     * session: -1.1 % at 16x4096; two-byte codes widened in C++ had cost a LOP3 0xffff
                     * each before the permutes (16 a sub-step) */
                    const float iv = invr[j >> 2];
                    const uint32_t c = cvt_e4m3x4_rows(dpacc[4 * j] * iv, dpacc[4 * j + 1] * iv, dpacc[4 * j + 2] * iv,
                                                       dpacc[4 * j + 3] * iv);
                    dsw[j] = __byte_perm(c, 0u, 0x3120);
                    if ((j & 3) == 3)
                        stmatrix_x4_trans(dsrow + (j >> 2) * 2048, dsw[j - 3], dsw[j - 2], dsw[j - 1], dsw[j]);
                    const int base = 4 * (j >> 2) + (((j & 3) >> 1) << 1);
                    if ((j & 1) == 0) {
                        pk[base] = c;
                    } else {
                        const uint32_t prev = pk[base];
                        pk[base] = __byte_perm(prev, c, 0x5410);
                        pk[base + 1] = __byte_perm(prev, c, 0x7632);
                    }
                    continue;
                }
                uint32_t qcs[2]; /* dQ operand codes of keys 2g + hh, queries qn (byte 0), qn + 1 (byte 1) */
                const int qn = acc_query(j, tq4); /* even */
                const int cj = acc_query(j, 0);
                const float2 inv = KIND == 1 ? make_float2(invr[j >> 2], invr[j >> 2]) : *(const float2 *)(sInv + kbl * 64 + qn);
                const float2 dqop = KIND == 2 ? *(const float2 *)(sDqOp + kbl * 64 + qn) : make_float2(0.f, 0.f);
                const uint32_t dqs = dqsr[j >> 2];
                const int2 eds = KIND == 2 ? *(const int2 *)(sEds + kbl * 64 + qn) : make_int2(0, 0);
                const int2 eq = KIND == 2 ? *(const int2 *)(sReq + h2 * 64 + qn) : make_int2(0, 0);
                const int M = KIND == 2 ? sMk[kbl * 2 + (j >> 2)] : 0; /* this k-step's query block */
                uint32_t kc[2]; /* dK operand codes, rows hh */
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const int idx = 4 * j + 2 * hh;
                    const uint32_t code = flamia_cvt_e4m3x2(dpacc[idx] * inv.x, dpacc[idx + 1] * inv.y);
                    uint32_t qc; /* dQ operand */
                    kc[hh] = code;
                    if (KIND == 1) {
                        /* mxfp8: dK's operand is the dS code itself (one exponent per 32x32 dS block
                         * and per 32-token Q block: its fold factor is exactly 1); dQ's is the code
                         * times 2^-s, the code itself in the pair's larger block (s = 0) */
                        qc = flamia_e4m3x2_scale_f16(code, dqs);
                    } else {
                        /* mxfp8-exact: dK operand dS^ 2^eQ relative to the block's 2^M, dQ operand
                         * dS^ 2^(eK_j - EKmax - s) (folds within the block and the pair) */
                        const float2 dsq = flamia_e4m3x2_values(code);
                        const float sck0 = pow2b(eds.x + eq.x - M), sck1 = pow2b(eds.y + eq.y - M);
                        kc[hh] = flamia_cvt_e4m3x2(dsq.x * sck0, dsq.y * sck1);
                        qc = flamia_cvt_e4m3x2((dsq.x * ekf[hh]) * dqop.x, (dsq.y * ekf[hh]) * dqop.y);
                    }
                    qcs[hh] = qc;
                }
                if constexpr (SPLIT) { /* mxfp8-exact (mxfp8's split took the path above): my warpgroup's
                     [64 queries][64 keys] tile, 64-byte swizzle, for its store, by two-byte stores (the
                     stmatrix spilled 4-16 B there) */
                    uint8_t *t = smem + SM::kDS + h2 * 8192 + wg * 4096 + 2 * g;
                    *reinterpret_cast<uint16_t *>(t + qn * 64 + ((wq ^ ((qn >> 1) & 3)) << 4)) =
                        (uint16_t)__byte_perm(qcs[0], qcs[1], 0x40);
                    *reinterpret_cast<uint16_t *>(t + (qn + 1) * 64 + ((wq ^ (((qn + 1) >> 1) & 3)) << 4)) =
                        (uint16_t)__byte_perm(qcs[0], qcs[1], 0x51);
                } else {
                    *reinterpret_cast<uint16_t *>(sDS + dsoff[cj & 2] + cj * 128) = (uint16_t)__byte_perm(qcs[0], qcs[1], 0x40);
                    *reinterpret_cast<uint16_t *>(sDS + dsoff[(cj & 2) | 1] + (cj + 1) * 128) =
                        (uint16_t)__byte_perm(qcs[0], qcs[1], 0x51);
                }
                put_dk_operand(pk, j, kc);
            }
            fence_proxy_async(); /* sDS -> the async proxy (dQ's wgmma), before the barrier below */

            /* ---- dV += P^T dO; dK += sum over query blocks of 2^M (dS^T Q)_block, one k=32
             * wgmma per block into a partial (numerics.md 4.6, exact option); dQ = sum over the
             * two key-block pairs of 2^F scale (dS' K)_pair, one chain of two k=32 wgmmas per
             * pair (the operand fold above) */
            reg_fence(pa);
            reg_fence(pk);
            reg_fence(dkacc);
            reg_fence(dvacc);
            wgmma_fence();
            /* dK's first query-block partial is issued before dV's four F16 MMAs so that its
             * scaling runs under them (dV's was the longest wgmma wait); the second one after.
             * The deterministic kernels too since v41 (-2.6 % there at 16x4096, same spills;
             * with the atomics they had spilled 164 bytes for it). A constant rather than a
             * rewritten block: folding it out changes the mxfp8 kernels' SASS (nvcc 13.0). */
            constexpr bool kDkFirst = true;
            float tk0[64];
            if (kDkFirst) {
                const uint32_t a[4] = {pk[0], pk[1], pk[2], pk[3]};
                bwd_wgmma_e4m3_rs_n128(tk0, a, desc_sw128(aQt + h2 * 64), 0);
                wgmma_commit();
            }
            const uint64_t dDOh = desc_sw128(aDOh + h2 * 4 * 2048, 128 * 128, 1024);
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                const uint32_t a[4] = {pa[4 * kk], pa[4 * kk + 1], pa[4 * kk + 2], pa[4 * kk + 3]};
                bwd_wgmma_f16_rs_n128_tb(dvacc, a, desc_advance(dDOh, kk * 2048), 1);
            }
            wgmma_commit();
            if (kDkFirst) {
                wgmma_wait<1>(); /* dK's first partial landed; dV may still run */
                reg_fence(tk0);
                const float f = KIND == 1 ? dkf[0] : pow2z(sMk[kbl * 2]);
#pragma unroll
                for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk0[x], f, dkacc[x]);
            }
#pragma unroll
            for (int k = kDkFirst ? 1 : 0; k < 2; k++) {
                float tk[64];
                const uint32_t a[4] = {pk[4 * k], pk[4 * k + 1], pk[4 * k + 2], pk[4 * k + 3]};
                wgmma_fence();
                bwd_wgmma_e4m3_rs_n128(tk, a, desc_advance(desc_sw128(aQt + h2 * 64), k * 32), 0);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(tk);
                const float f = KIND == 1 ? dkf[k] : pow2z(sMk[kbl * 2 + k]);
#pragma unroll
                for (int x = 0; x < 64; x++) dkacc[x] = fmaf(tk[x], f, dkacc[x]);
            }
            reg_fence(dvacc);
            if constexpr (SPLIT) { /* the warpgroup's dS tile and dQ row factors out (its half of the
                 tile's 128-byte rows 64 h2..), no dQ here: backward_dq.cu sums it */
                bar_named(1 + wg, 128);
                const long long tile = ds0 + (long long)h * ds_cnt + split_tile(q0 / 128, n, nqt, p.causal);
                /* inside the regions sized from the shape (one that understates the documents gets a
                 * wrong dQ, flagged by dq_split_offsets, never a write past the workspace) */
                if (wtid == 0 && tile < p.ds_tiles) {
                    tma_store_2d(&maps.ds, smem_u32(smem + SM::kDS + h2 * 8192 + wg * 4096), 64 * wg, (int)(tile * 128 + h2 * 64));
                    bulk_store(p.ds_fac + tile * 512 + wg * 256 + h2 * 128, smem_u32(sGs + (h2 * 2 + wg) * 128), 256);
                    bulk_commit_group();
                }
                continue;
            }
            /* dQ's operand holds both warpgroups' dS: the one CTA barrier of the sub-step, after
             * dV and dK (their operands are this warpgroup's own), so that the other warpgroup
             * has usually finished its stores by the time this one arrives */
            __syncthreads();
            const uint32_t aDS = smem_u32(sDS);
            float dqacc[32];
            float fq[2] = {0.f, 0.f};
#pragma unroll
            for (int c = 0; c < 2; c++) { /* chain c: key blocks 2c, 2c + 1 (warpgroup c's dS) */
                float tq32[32];
                wgmma_fence();
                const uint64_t dDS = desc_sw128(aDS), dKt = desc_sw128(aKt + wg * 8192);
                bwd_wgmma_e4m3_ss_n64(tq32, desc_advance(dDS, 2 * c * 32), desc_advance(dKt, 2 * c * 32), 0);
                bwd_wgmma_e4m3_ss_n64(tq32, desc_advance(dDS, (2 * c + 1) * 32), desc_advance(dKt, (2 * c + 1) * 32), 1);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(tq32);
#pragma unroll
                for (int hh = 0; hh < 2; hh++) fq[hh] = sDqf[(h2 * 2 + c) * 64 + wq * 16 + g + 8 * hh];
#pragma unroll
                for (int x = 0; x < 32; x++) {
                    const float f = fq[(x >> 1) & 1];
                    dqacc[x] = c == 0 ? tq32[x] * f : fmaf(tq32[x], f, dqacc[x]);
                }
            }

            /* ---- dQ partial: rows = queries (natural order), cols = dims 64 wg + 8j + 2tq */
            if (!DBG) {
                /* v7: staged in shared memory as two [64 queries][32 dims] FP32 tiles (128-byte
                 * swizzle) and added by TMA reduce-adds, instead of 16 FP32x2 REDs per thread:
                 * in mxfp8's default kernel each warp's lane 0 adds the warp's own 16 rows as
                 * [16][32] boxes (no warpgroup barrier; v62), in the others thread 0 adds all
                 * 64 rows as [64][32] boxes after the warpgroup's barrier (the deterministic
                 * ones in its turn; the box is the tensor map's, made per kernel by
                 * make_dq_map). The staging reuses what sub-step h2 has finished with in both
                 * warpgroups (barrier C above): rows 64 h2.. of the F16 dO panel wg (dims 0-31)
                 * and of the Q (wg 0) / dO (wg 1) row tile (dims 32-63). Rows past the
                 * document add exact zeros (their dS codes are 0) to the next document's rows. */
                uint8_t *stA = smem + SM::kDOh + wg * (128 * 128) + h2 * 8192;
                uint8_t *stB = buf + (wg ? SM::kDO : SM::kQ) + h2 * 8192;
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const int row = wq * 16 + g + 8 * hh;
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const int c = 8 * (j & 3) + 2 * tq; /* column inside the 32-dim box */
                        uint8_t *dst = (j < 4 ? stA : stB) + row * 128 + ((((c >> 2) ^ (row & 7))) << 4) + (c & 3) * 4;
                        *reinterpret_cast<float2 *>(dst) = make_float2(dqacc[4 * j + 2 * hh], dqacc[4 * j + 2 * hh + 1]);
                    }
                }
                fence_proxy_async();
                if (kWarpAdds) {
                    __syncwarp();
                    if (lane == 0) { /* g = 0: row wq * 16 + g is the warp's first */
                        const int row = wq * 16 + g;
                        tma_reduce_add_3d(&tm_dq, smem_u32(stA + row * 128), 64 * wg, h, ds + qsub + row);
                        tma_reduce_add_3d(&tm_dq, smem_u32(stB + row * 128), 64 * wg + 32, h, ds + qsub + row);
                        bulk_commit_group();
                    }
                } else {
                    bar_named(1 + wg, 128);
                    if (wtid == 0) {
                        if (DET) { /* v41: my turn among query tile m's contributors, key tiles last .. 0 */
                            if (sMisc[2 + wg] >= 0) dq_turn_pass_half(p.dq_turn + (size_t)sMisc[2 + wg] * p.Hq + sMisc[4 + wg]);
                            sMisc[2 + wg] = ds + qsub;
                            sMisc[4 + wg] = h;
                            dq_turn_wait_half(p.dq_turn + (size_t)(ds + qsub) * p.Hq + h, (p.causal ? q0 / 128 : nqt - 1) - n);
                        }
                        tma_reduce_add_3d(&tm_dq, smem_u32(stA), 64 * wg, h, ds + qsub);
                        tma_reduce_add_3d(&tm_dq, smem_u32(stB), 64 * wg + 32, h, ds + qsub);
                        bulk_commit_group();
                    }
                }
            } else { /* the debug run: FP32 atomics */
#pragma unroll
                for (int hh = 0; hh < 2; hh++) {
                    const int ql = wq * 16 + g + 8 * hh;
                    const int i = qsub + ql;
                    if (i >= len) continue;
                    float *dst = p.dq_acc + ((size_t)(ds + i) * p.Hq + h) * kD + wg * 64 + 2 * tq;
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        atomicAdd(reinterpret_cast<float2 *>(dst + 8 * j),
                                  make_float2(dqacc[4 * j + 2 * hh], dqacc[4 * j + 2 * hh + 1]));
                }
            }
        }
        gi = gi1;
        mi = mi1;
    }

    /* ---- epilogue: dK = scale acc (rotated back when hadamard: backward_common.cuh), dV = 2^(G-14)
     * acc (BF16) */
#pragma unroll
    for (int x = 0; x < 64; x++) dkacc[x] *= p.scale;
    if (p.hadamard) {
        hadamard_acc_n128(dkacc, tq);
#pragma unroll
        for (int x = 0; x < 64; x++) dkacc[x] *= p.had_norm;
    }
    /* dV's factor 2^(G - 14) is the same for the whole CTA: flamia_ldexpf's multiplications
     * done once for every element (the same products, so the same bytes) rather than its
     * range checks and branches per element (SASS: ~4,300 instructions of unrolled ldexp,
     * the epilogue 31 % of the stall samples at 512x128, much of it instruction-cache misses) */
    {
        int e = G - 14;
        while (e > 127) {
#pragma unroll
            for (int x = 0; x < 64; x++) dvacc[x] *= flamia_pow2f(127);
            e -= 127;
        }
        while (e < -126) {
#pragma unroll
            for (int x = 0; x < 64; x++) dvacc[x] *= flamia_pow2f(-126);
            e += 126;
        }
        const float f = flamia_pow2f(e);
#pragma unroll
        for (int x = 0; x < 64; x++) dvacc[x] *= f;
    }
    /* dK and dV through shared memory (v15 in v28; dev/sessions/thirteenth_v28.sh: 512x128 -8 %,
     * 64x1024 -7 %, 16x4096 -3 %, rand65536:5 -10 % with the dV factor above): 8
     * stmatrix.x4 into a 16-byte-chunk swizzled 64 x 128 BF16 tile per warpgroup, then
     * 16-byte row stores (whole 256-byte rows per 16 threads) instead of 32 scattered 4-byte
     * stores per thread and matrix. The K and V tiles take the staging once both
     * warpgroups' last wgmmas have read them (the CTA barrier); the dQ staging (F16 dO
     * panel, Q / dO row tiles) is elsewhere. */
    if (!DBG) {
        __syncthreads();
        uint8_t *st = smem + SM::kK + wg * (64 * kD * 2);
        const int mk = lane >> 3, mrow = wq * 16 + (mk & 1) * 8 + (lane & 7);
#pragma unroll
        for (int mat = 0; mat < 2; mat++) {
            if (mat) bar_named(1 + wg, 128); /* this warpgroup's dK rows are out: the tile takes dV */
#pragma unroll
            for (int jn = 0; jn < 16; jn += 2) {
                uint32_t w[4];
#pragma unroll
                for (int q = 0; q < 4; q++) { /* matrices (jn, g), (jn, g + 8), (jn + 1, g), (jn + 1, g + 8) */
                    const int idx = 4 * (jn + (q >> 1)) + 2 * (q & 1);
                    w[q] = mat ? bf16x2(dvacc[idx], dvacc[idx + 1]) : bf16x2(dkacc[idx], dkacc[idx + 1]);
                }
                const int chunk = jn + (mk >> 1);
                stmatrix_x4(smem_u32(st + mrow * 256 + ((chunk ^ (mrow & 7)) << 4)), w[0], w[1], w[2], w[3]);
            }
            bar_named(1 + wg, 128);
            uint16_t *dst = mat ? p.dv : p.dk;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                const int id = wtid + 128 * i, r = id >> 4, c = id & 15, j = k0 + wg * 64 + key_of_row(r);
                if (j < len)
                    *(uint4 *)(dst + ((size_t)(ds + j) * p.Hkv + hk) * kD + c * 8) =
                        *(const uint4 *)(st + r * 256 + ((c ^ (r & 7)) << 4));
            }
        }
    }
    /* the dQ reduce-adds complete before the CTA exits (their shared-memory staging stays
     * valid); waited last, so the dK / dV stores go out meanwhile */
    if (!DBG && (kWarpAdds ? lane == 0 : wtid == 0)) {
        bulk_wait_all();
        if (DET && sMisc[2 + wg] >= 0) dq_turn_pass_half(p.dq_turn + (size_t)sMisc[2 + wg] * p.Hq + sMisc[4 + wg]);
    }
}

template <int KIND, int DQM, bool ORDER>
__global__ void __launch_bounds__(256, 1)
    bwd_main_fp8(const __grid_constant__ BwdMaps maps, const MainParams p) {
    static_assert(!(DQM == kDqTurns && ORDER), "the turns run in the grid's own order (a CTA waits only on earlier ones)");
    bwd_main_body<KIND, false, DQM, ORDER>(maps, p, nullptr);
}
template <int KIND>
__global__ void __launch_bounds__(256, 1)
    bwd_main_fp8_dbg(const __grid_constant__ BwdMaps maps, const MainParams p, uint8_t *dbg_codes) {
    bwd_main_body<KIND, true, kDqAdds, false>(maps, p, dbg_codes);
}

/* ================================================================ host */

/* rows: the box's query rows (dq_adds_per_warp: 16, else 64) */
static bool make_dq_map(CUtensorMap *map, float *dq_acc, int T, int Hq, int rows) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return false;
    const cuuint64_t dims[3] = {(cuuint64_t)kD, (cuuint64_t)Hq, (cuuint64_t)T};
    const cuuint64_t strides[2] = {(cuuint64_t)kD * 4, (cuuint64_t)Hq * kD * 4};
    const cuuint32_t box[3] = {32, 1, (cuuint32_t)rows};
    const cuuint32_t estr[3] = {1, 1, 1};
    return enc(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, dq_acc, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* One CTA per (128-key tile, document, kv head) with the FP8 main kernel's shared memory;
 * `attr` remembers, per kernel instantiation, that the size limit was raised. */
template <typename... KernelArgs, typename... Args>
static cudaError_t launch_fp8_grid(void (*kernel)(KernelArgs...), bool &attr, const MainParams &mp,
                                   cudaStream_t stream, Args... args) {
    const int bytes = SmemF::kBytes;
    if (!attr) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e != cudaSuccess) return e;
        attr = true;
    }
    const unsigned grid = (unsigned)tile_slots(mp.T, mp.num_docs) * (unsigned)mp.nhk;
    kernel<<<grid, 256, bytes, stream>>>(args...);
    return cudaGetLastError();
}
/* kDqSplit's stores: ds_codes as [ds_tiles 128][128 B], each warpgroup a [64][64 B] box from its
 * 64-byte-swizzled tile */
static bool make_ds_map(CUtensorMap *map, uint8_t *ds_codes, long long tiles) {
    flamia_encode_tiled_fn enc = flamia_encode_tiled();
    if (!enc) return false;
    const cuuint64_t dims[2] = {128, (cuuint64_t)tiles * 128};
    const cuuint64_t strides[1] = {128};
    const cuuint32_t box[2] = {64, 64}, estr[2] = {1, 1};
    return enc(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, ds_codes, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int KIND, int DQM, bool ORDER>
static cudaError_t launch_fp8(const MainParams &mp, BwdMaps &maps, cudaStream_t stream) {
    static bool attr = false;
    if (!make_dq_map(&maps.dq, mp.dq_acc, mp.T, mp.Hq, dq_adds_per_warp(KIND, DQM != kDqAdds) ? 16 : 64))
        return cudaErrorNotSupported;
    if (DQM == kDqSplit && !make_ds_map(&maps.ds, mp.ds_codes, mp.ds_tiles)) return cudaErrorNotSupported;
    return launch_fp8_grid(bwd_main_fp8<KIND, DQM, ORDER>, attr, mp, stream, maps, mp);
}
template <int KIND>
static cudaError_t launch_fp8_dbg(const MainParams &mp, const BwdMaps &maps, uint8_t *codes, cudaStream_t stream) {
    static bool attr = false;
    return launch_fp8_grid(bwd_main_fp8_dbg<KIND>, attr, mp, stream, maps, mp, codes);
}

/* the kernel of the dQ mode (kDqAdds, kDqTurns, kDqSplit); kDqAdds and kDqSplit by mp.order's
 * launch order where backward.cu made one, else in the grid's own order */
template <int KIND>
static cudaError_t launch_fp8_mode(int dq_mode, const MainParams &mp, BwdMaps &maps, cudaStream_t stream) {
    return dq_mode == kDqSplit   ? (mp.order ? launch_fp8<KIND, kDqSplit, true>(mp, maps, stream)
                                             : launch_fp8<KIND, kDqSplit, false>(mp, maps, stream))
           : dq_mode == kDqTurns ? launch_fp8<KIND, kDqTurns, false>(mp, maps, stream)
           : mp.order            ? launch_fp8<KIND, kDqAdds, true>(mp, maps, stream)
                                 : launch_fp8<KIND, kDqAdds, false>(mp, maps, stream);
}

cudaError_t launch_main_fp8(enum flamia_sm90_kind kind, int dq_mode, const MainParams &mp, uint8_t *qt_codes,
                            uint8_t *kt_codes, int t_vpad, uint8_t *dbg_codes, cudaStream_t stream) {
    /* the kernel (and its debug twin) read Q^T, K^T and the permuted Q, dO rows through these
     * maps (dQ's: launch_fp8) */
    BwdMaps maps{}; /* zeroed: the debug kernel leaves dq unset */
    if (!flamia_tma_transposed_codes(&maps.qt, qt_codes, t_vpad, kD, mp.Hq, 128) ||
        !flamia_tma_transposed_codes(&maps.kt, kt_codes, t_vpad, kD, mp.Hkv, 128) ||
        !flamia_tma_perm_rows(&maps.q, mp.q8, mp.T, mp.Hq * kD, 1) ||
        !flamia_tma_perm_rows(&maps.dO, mp.do8, mp.T, mp.Hq * kD, 1) ||
        !flamia_tma_perm_rows(&maps.dof, mp.dof16, mp.T, mp.Hq * kD, 2))
        return cudaErrorNotSupported;
    if (dbg_codes)
        return kind == FLAMIA_SM90_MXFP8 ? launch_fp8_dbg<1>(mp, maps, dbg_codes, stream)
                                         : launch_fp8_dbg<2>(mp, maps, dbg_codes, stream);
    return kind == FLAMIA_SM90_MXFP8 ? launch_fp8_mode<1>(dq_mode, mp, maps, stream)
                                     : launch_fp8_mode<2>(dq_mode, mp, maps, stream);
}

} // namespace flamia_bwd
