/*
 * acc_bench.cu - how precisely Hopper's FP8 wgmma adds into a live accumulator, measured on
 * the chains an in-place dK would run (docs/hopper-port.md, next steps 1 (c)).
 *
 * Today's backward gives every 32-query block of dK = dS^T Q its own zeroed k=32 wgmma and
 * adds that partial to the FP32 sum with an exact FMA by the block's power of two
 * (numerics.md 4.6, exact option): 64 registers per thread for the partial. Accumulating in
 * place would free them (the registers an overlap of sub-steps needs), but then every block
 * of a document is added inside the tensor core, whose FP8 path keeps fewer bits than FP32
 * when it adds to the accumulator (~14, DeepSeek-V3 report). Whether that is acceptable
 * depends on the chain length: up to ~2 x 470 blocks for logu-64k's longest key tiles.
 *
 * One warpgroup runs m64n64k32 E4M3 wgmmas over N k=32 blocks of random codes, block i
 * scaled by 2^M_i (M_i random in [-S, S], S = 0 and 6), three ways:
 *   partial   t = wgmma(A_i, B_i) into zeros; acc = fma(t, 2^M_i, acc)      (today)
 *   inplace   acc *= 2^(U - M_i); U = M_i; acc = wgmma(A_i, B_i) + acc     (the candidate)
 *   fp32      the same partials summed on the host in FP32 (no tensor core)  (reference)
 * against the FP64 sum of the decoded codes. Printed per (N, S, mode): relative L2 error,
 * max |error| / max |truth|, and the mean signed error relative to the RMS of the truth
 * (a truncating adder shows as a bias that grows with N).
 * Inputs: codes of N(0, 1) x 64 values (E4M3 round to nearest, flamia_formats.h), random signs:
 * sums that partly cancel, as gradients do. Fresh seed per run unless given.
 *
 * Build (repo root): nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a
 *   -Ikernels/include -Ikernels/formats -Ikernels/sm90 dev/backward/acc_bench.cu
 *   -o dev/backward/bin/acc_bench
 * Run (device): dev/backward/bin/acc_bench [seed]   (~1 s)
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backward_wgmma.cuh"
#include "flamia_formats.h"
#include "sm90_ptx.cuh"

using namespace flamia_sm90;

namespace {

constexpr int kM = 64, kN = 64, kRow = 128; /* tiles of 64 rows x 128 bytes: 4 k=32 blocks */
constexpr int kTile = kM * kRow;

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

/* one warpgroup; a[r] / b[r]: round r's A and B tiles ([64 rows][128 bytes], rows K-major,
 * 4 blocks of k=32), m[i]: block i's exponent; out: [64][64] FP32 (already times 2^U) */
__global__ void __launch_bounds__(128) chain_kernel(const uint8_t *a, const uint8_t *b, const int *m, int nblocks,
                                                    int inplace, float *out) {
    __shared__ __align__(1024) uint8_t sA[kTile], sB[kTile];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
    float acc[32], t[32];
#pragma unroll
    for (int x = 0; x < 32; x++) acc[x] = 0.f;
    int U = 0;
    for (int r = 0; r < nblocks / 4; r++) {
        __syncthreads(); /* the previous round's wgmmas have read the tiles */
        for (int ch = tid; ch < kTile / 16; ch += 128) {
            const int row = ch >> 3, q = ch & 7;
            *reinterpret_cast<uint4 *>(sA + sw128(row, q)) = reinterpret_cast<const uint4 *>(a + (size_t)r * kTile)[ch];
            *reinterpret_cast<uint4 *>(sB + sw128(row, q)) = reinterpret_cast<const uint4 *>(b + (size_t)r * kTile)[ch];
        }
        fence_proxy_async();
        __syncthreads();
        for (int kb = 0; kb < 4; kb++) {
            const int M = m[4 * r + kb];
            const uint64_t da = desc_sw128(smem_u32(sA) + kb * 32), db = desc_sw128(smem_u32(sB) + kb * 32);
            if (inplace) {
                const float f = flamia_ldexpf(1.f, U - M); /* exact: the bench keeps |U - M| small */
#pragma unroll
                for (int x = 0; x < 32; x++) acc[x] *= f;
                U = M;
                reg_fence(acc);
                wgmma_fence();
                bwd_wgmma_e4m3_ss_n64(acc, da, db, 1);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(acc);
            } else {
                reg_fence(t);
                wgmma_fence();
                bwd_wgmma_e4m3_ss_n64(t, da, db, 0);
                wgmma_commit();
                wgmma_wait<0>();
                reg_fence(t);
                const float f = flamia_ldexpf(1.f, M);
#pragma unroll
                for (int x = 0; x < 32; x++) acc[x] = fmaf(t[x], f, acc[x]);
            }
        }
    }
    /* accumulator element x: row 16 warp + g + 8 ((x >> 1) & 1), column 8 (x >> 2) + 2 tq + (x & 1) */
#pragma unroll
    for (int x = 0; x < 32; x++) {
        const int row = 16 * warp + g + 8 * ((x >> 1) & 1), col = 8 * (x >> 2) + 2 * tq + (x & 1);
        out[row * kN + col] = inplace ? flamia_ldexpf(acc[x], U) : acc[x];
    }
}

uint64_t rng_state;
double uniform() { /* splitmix64 -> [0, 1) */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
double normal() { return sqrt(-2.0 * log(1.0 - uniform())) * cos(6.283185307179586 * uniform()); }

/* byte k of row `row` of block i in the round-major tile stream */
size_t at(int i, int row, int k) { return (size_t)(i / 4) * kTile + (size_t)row * kRow + (i % 4) * 32 + k; }

} // namespace

int main(int argc, char **argv) {
    rng_state = argc > 1 ? strtoull(argv[1], nullptr, 0) : (uint64_t)time(nullptr);
    printf("acc_bench seed %llu\n", (unsigned long long)rng_state);
    const int lengths[] = {4, 32, 128, 512, 1024};
    const int spreads[] = {0, 6};
    const int nmax = 1024;
    const size_t bytes = (size_t)(nmax / 4) * kTile;
    uint8_t *ha = (uint8_t *)malloc(bytes), *hb = (uint8_t *)malloc(bytes);
    for (size_t x = 0; x < bytes; x++) {
        ha[x] = flamia_fmt_e4m3_encode((float)(normal() * 64.0));
        hb[x] = flamia_fmt_e4m3_encode((float)(normal() * 64.0));
    }
    uint8_t *da, *db;
    int *dm;
    float *dout;
    CK(cudaMalloc(&da, bytes));
    CK(cudaMalloc(&db, bytes));
    CK(cudaMalloc(&dm, nmax * sizeof(int)));
    CK(cudaMalloc(&dout, kM * kN * sizeof(float)));
    CK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
    /* per block, the exact products' k=32 sums (exact in FP64: 32 products of 8-bit codes) */
    double dec[256];
    for (int c = 0; c < 256; c++) dec[c] = flamia_fmt_e4m3_decode((uint8_t)c);
    double *blk = (double *)malloc((size_t)nmax * kM * kN * sizeof(double));
    for (int i = 0; i < nmax; i++)
        for (int r = 0; r < kM; r++)
            for (int c = 0; c < kN; c++) {
                double s = 0;
                for (int k = 0; k < 32; k++) s += dec[ha[at(i, r, k)]] * dec[hb[at(i, c, k)]];
                blk[((size_t)i * kM + r) * kN + c] = s;
            }
    printf("| blocks | 2^M spread | mode | rel L2 | max err / max | mean err / RMS |\n|---|---|---|---|---|---|\n");
    int m[nmax];
    float out[kM * kN];
    int worst = 0;
    for (int S : spreads) {
        for (int i = 0; i < nmax; i++) m[i] = S ? (int)(uniform() * (2 * S + 1)) - S : 0;
        CK(cudaMemcpy(dm, m, sizeof m, cudaMemcpyHostToDevice));
        for (int N : lengths) {
            static double truth[kM * kN];
            static float f32[kM * kN];
            for (int e = 0; e < kM * kN; e++) {
                double s = 0;
                float sf = 0.f;
                for (int i = 0; i < N; i++) {
                    s += ldexp(blk[(size_t)i * kM * kN + e], m[i]);
                    sf = fmaf((float)blk[(size_t)i * kM * kN + e], ldexpf(1.f, m[i]), sf);
                }
                truth[e] = s;
                f32[e] = sf;
            }
            for (int mode = 0; mode < 3; mode++) {
                if (mode < 2) {
                    chain_kernel<<<1, 128>>>(da, db, dm, N, mode, dout);
                    CK(cudaGetLastError());
                    CK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
                } else {
                    memcpy(out, f32, sizeof out);
                }
                double e2 = 0, t2 = 0, emax = 0, tmax = 0, esum = 0;
                for (int e = 0; e < kM * kN; e++) {
                    const double d = (double)out[e] - truth[e];
                    e2 += d * d;
                    t2 += truth[e] * truth[e];
                    emax = fmax(emax, fabs(d));
                    tmax = fmax(tmax, fabs(truth[e]));
                    esum += d * (truth[e] >= 0 ? 1 : -1); /* toward zero counts negative */
                }
                const double rms = sqrt(t2 / (kM * kN));
                const char *name = mode == 0 ? "partial" : mode == 1 ? "inplace" : "fp32 host";
                printf("| %d | %d | %s | %.2e | %.2e | %+.2e |\n", N, S, name, sqrt(e2 / t2), emax / tmax,
                       esum / (kM * kN) / rms);
                if (!(sqrt(e2 / t2) < 1.0)) worst = 1; /* a broken run (NaN, garbage) fails */
            }
        }
    }
    free(blk);
    free(ha);
    free(hb);
    return worst;
}
