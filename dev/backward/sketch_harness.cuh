/*
 * sketch_harness.cuh - what the timing skeletons share (i_sketch, j_sketch, k_sketch): device
 * helpers (F16 pairs in, E4M3 pairs out as floats; the element-wise bodies of P, dS and dS's codes;
 * the skeleton's end; the dQ reduce-adds are sm90_ptx.cuh's), and on the host bounded random E4M3
 * codes for every operand tile (no NaN), row constants that keep exp2 in range, the row-tile map,
 * dQ's FP32 accumulator with its reduce-add map ([16 rows][32 dims] boxes; sketch_dq_map for other
 * row counts), and a timing loop (2 warm-up launches, median of 10, dQ zeroed before each). The
 * skeletons' results are meaningless; only their times are read.
 */
#pragma once
#include <cstdio>
#include <vector>

#include <algorithm>

#include <cuda_fp16.h>

#include "sm90_ptx.cuh"
#include "sm90_tma_host.cuh"

__device__ __forceinline__ uint32_t f16x2(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&v);
}
/* two E4M3 codes (low byte first) -> two floats, exact */
__device__ __forceinline__ float2 dec2(uint32_t codes16) {
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)codes16));
    return __half22float2(*reinterpret_cast<__half2 *>(&h2));
}

/* The sketches' element-wise bodies (sm90_exp2.cuh and sm90_e4m3.cuh included first), per
 * accumulator column pair j of a thread: its four values s[0..3] (rows g, g + 8; queries q, q + 1).
 * P: the direct exponential's codes, P = dec(code) nr back into s, and P^T pvf as two F16 words. */
__device__ __forceinline__ void sketch_p_quad(float *s, float2 ckq, float2 sc, float2 nr, float2 pvf, uint32_t &w0,
                                              uint32_t &w1) {
    float pv[4];
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        const float e0 = flamia_sm90::exp_frame_direct(s[2 * hh] * ckq.x, sc.x);
        const float e1 = flamia_sm90::exp_frame_direct(s[2 * hh + 1] * ckq.y, sc.y);
        const float2 pb = dec2(flamia_cvt_e4m3x2(e0, e1));
        s[2 * hh] = pb.x * nr.x;
        s[2 * hh + 1] = pb.y * nr.y;
        pv[2 * hh] = s[2 * hh] * pvf.x;
        pv[2 * hh + 1] = s[2 * hh + 1] * pvf.y;
    }
    w0 = f16x2(pv[0], pv[1]);
    w1 = f16x2(pv[2], pv[3]);
}
/* dS = P (dP vdo - D) into d, P in p */
__device__ __forceinline__ void sketch_ds_quad(const float *p, float *d, float2 dl, float2 vdo) {
#pragma unroll
    for (int hh = 0; hh < 2; hh++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int idx = 2 * hh + e;
            d[idx] = p[idx] * (d[idx] * (e ? vdo.y : vdo.x) - (e ? dl.y : dl.x));
        }
}
/* dS codes: dK's operand kc (dS / 2^e) and dQ's qc (the code scaled by the F16 factor dqs), rows hh */
__device__ __forceinline__ void sketch_ds_codes(const float *d, float inv, uint32_t dqs, uint32_t (&kc)[2], uint32_t (&qc)[2]) {
#pragma unroll
    for (int hh = 0; hh < 2; hh++) {
        kc[hh] = flamia_cvt_e4m3x2(d[2 * hh] * inv, d[2 * hh + 1] * inv);
        qc[hh] = flamia_e4m3x2_scale_f16(kc[hh], dqs);
    }
}

/* A skeleton's end: its dQ reduce-adds completed (their shared-memory staging stays valid
 * until then), and the dK / dV accumulators' sum stored at out (the thread's own word), so that
 * no product is optimized away */
template <int N>
__device__ __forceinline__ void sketch_sink(const float (&dk)[N], const float (&dv)[N], float *out) {
    flamia_sm90::bulk_wait_all();
    float s = 0.f;
#pragma unroll
    for (int x = 0; x < N; x++) s += dk[x] + dv[x];
    *out = s;
}

struct SketchInputs {
    int B, H, L, tpd, T; /* documents of L tokens, H heads, 128-token tiles a document, tokens */
    uint8_t *codes;      /* [T][H][128] */
    float *rows, *dq;    /* [H][6][T] row constants; [T][H][128] dQ accumulator */
    CUtensorMap tm_rows, tm_dq; /* 128 B x 128 rows boxes of the codes; [16][32] FP32 boxes of dq */
};

/* dQ's FP32 accumulator [T][H][128] as boxes of [rows][32 dims], 128-byte swizzle: the reduce-adds' map */
static inline bool sketch_dq_map(CUtensorMap *map, const SketchInputs &in, int rows) {
    const cuuint64_t dims[3] = {128, (cuuint64_t)in.H, (cuuint64_t)in.T};
    const cuuint64_t strides[2] = {128 * 4, (cuuint64_t)in.H * 128 * 4};
    const cuuint32_t box[3] = {32, 1, (cuuint32_t)rows}, estr[3] = {1, 1, 1};
    return flamia_encode_tiled() &&
           flamia_encode_tiled()(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, in.dq, dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* false (and a message) when an allocation or a tensor map fails, e.g. without a GPU */
static inline bool sketch_inputs(SketchInputs &in, int B, int H = 16, int L = 4096) {
    in.B = B, in.H = H, in.L = L, in.tpd = L / 128, in.T = B * L;
    const size_t n = (size_t)in.T * H * 128;
    if (cudaMalloc(&in.codes, n) != cudaSuccess || cudaMalloc(&in.rows, (size_t)H * 6 * in.T * 4) != cudaSuccess ||
        cudaMalloc(&in.dq, n * 4) != cudaSuccess) {
        printf("sketch: allocation failed\n");
        return false;
    }
    std::vector<uint8_t> hc(n);
    for (size_t i = 0; i < n; i++) hc[i] = (uint8_t)(((i * 2654435761u) >> 13) & 0x37);
    cudaMemcpy(in.codes, hc.data(), n, cudaMemcpyHostToDevice);
    std::vector<float> hr((size_t)H * 6 * in.T);
    const float val[6] = {0.125f, 0.5f, 0.9f, 1.1f, 0.01f, 0.7f};
    for (size_t i = 0; i < hr.size(); i++) hr[i] = val[(i / in.T) % 6];
    cudaMemcpy(in.rows, hr.data(), hr.size() * 4, cudaMemcpyHostToDevice);
    if (!flamia_tma_rows(&in.tm_rows, in.codes, in.T, H * 128)) {
        printf("sketch: row map failed\n");
        return false;
    }
    if (!sketch_dq_map(&in.tm_dq, in, 16)) {
        printf("sketch: dq map failed\n");
        return false;
    }
    return true;
}

/* median and fastest of 10 timed launches after 2 warm-up ones; err: the first error seen */
template <class Launch> static inline void sketch_time(const SketchInputs &in, Launch launch, float &median, float &fastest,
                                                       cudaError_t &err) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> t;
    for (int r = 0; r < 12; r++) {
        cudaMemsetAsync(in.dq, 0, (size_t)in.T * in.H * 128 * 4);
        cudaEventRecord(e0);
        launch();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0.f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= 2) t.push_back(ms);
    }
    err = cudaGetLastError();
    std::sort(t.begin(), t.end());
    median = t[t.size() / 2], fastest = t[0];
}

/* causal 128 x 128 tile pairs of the grid (the us-a-tile-pair figure's denominator) */
static inline double sketch_pairs(const SketchInputs &in) { return (double)in.B * in.H * in.tpd * (in.tpd + 1) / 2; }
