/*
 * ex2_identity_probe.cu - does the hardware exponential already do the split of
 * numerics.md 3.3? For every FP32 t in [-126, 128) it compares
 *   direct: ex2.approx.ftz(t)
 *   split:  ex2.approx.ftz(fl(t - floor t)) * 2^floor(t)     (the kernels' E(t, 0))
 * bit for bit. If they agree everywhere, E(t, m) = ex2(t) * 2^-m (one exact power-of-two
 * multiply) is the same function as the split wherever ex2(t) is a normal number, and
 * the forward could drop the clamp, FADD.RM, two FADDs and the exponent add per element.
 * Prints the mismatch count per binade of t and the first few mismatches. With the argument
 * "trunc" the split uses ti = trunc(t) (the definition before 2026-11-29) instead of floor.
 * Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a dev/forward/ex2_identity_probe.cu -o ex2_probe
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

__device__ __forceinline__ float ex2_hw(float x) {
    float y;
    asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* bins: 0..63 for t >= 0, 64..127 for t < 0, by binade of |t| from 2^-31 (bin 0 holds all
 * smaller magnitudes) */
__global__ void probe(uint32_t n, int neg, int trunc_split, unsigned long long *bins,
                      unsigned long long *count, uint32_t *first, float *first_vals) {
    for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x) {
        const uint32_t bits = (neg ? 0x80000000u : 0u) | k;
        const float t = __uint_as_float(bits);
        if (!(t >= -126.f && t < 128.f)) continue;
        const float direct = ex2_hw(t);
        const float ti = trunc_split ? truncf(t) : floorf(t);
        const float split = ldexpf(ex2_hw(__fsub_rn(t, ti)), (int)ti);
        if (__float_as_uint(direct) != __float_as_uint(split)) {
            const unsigned long long c = atomicAdd(count, 1ull);
            const int e = (int)((bits >> 23) & 0xFF);
            atomicAdd(&bins[(neg ? 64 : 0) + (e < 96 ? 0 : (e - 96 > 63 ? 63 : e - 96))], 1ull);
            if (c < 16) {
                first[c] = bits;
                first_vals[2 * c] = direct;
                first_vals[2 * c + 1] = split;
            }
        }
    }
}

int main(int argc, char **argv) {
    const int trunc_split = argc > 1 && argv[1][0] == 't';
    unsigned long long *bins, *count;
    uint32_t *first;
    float *fv;
    cudaMallocManaged(&bins, 128 * sizeof *bins);
    cudaMallocManaged(&count, sizeof *count);
    cudaMallocManaged(&first, 16 * sizeof *first);
    cudaMallocManaged(&fv, 32 * sizeof *fv);
    unsigned long long total_bad = 0;
    for (int neg = 0; neg < 2; neg++) {
        for (int i = 0; i < 128; i++) bins[i] = 0;
        *count = 0;
        /* every magnitude below 2^8 (the kernel keeps t in [-126, 128)) */
        const uint32_t n = 0x43800000u; /* bits of 256.0f */
        probe<<<132 * 16, 256>>>(n, neg, trunc_split, bins, count, first, fv);
        if (cudaDeviceSynchronize() != cudaSuccess) {
            fprintf(stderr, "probe failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            return 1;
        }
        total_bad += *count;
        printf("%s t: %llu mismatches\n", neg ? "negative" : "non-negative", *count);
        for (int b = 0; b < 128; b++)
            if (bins[b] && (b & 63) == 0)
                printf("  |t| below 2^-30: %llu\n", bins[b]);
            else if (bins[b])
                printf("  binade |t| in [2^%d, 2^%d): %llu\n", (b & 63) - 31, (b & 63) - 30, bins[b]);
        for (unsigned long long c = 0; c < *count && c < 8; c++)
            printf("  t=%.9g (0x%08x): direct %.9g (0x%08x) split %.9g (0x%08x)\n", __builtin_bit_cast(float, first[c]),
                   first[c], fv[2 * c], __builtin_bit_cast(uint32_t, fv[2 * c]), fv[2 * c + 1],
                   __builtin_bit_cast(uint32_t, fv[2 * c + 1]));
    }
    printf("ex2 identity (%s split) over every FP32 t in [-126, 128): %llu mismatches -> %s\n",
           trunc_split ? "trunc" : "floor", total_bad,
           total_bad ? "ex2(t) != split" : "ex2(t) == split everywhere");
    return 0;
}
