/*
 * test_gpu_e4m3_cvt.cu - the hardware conversion the sm90 kernels use
 * (flamia_cvt_e4m3x2, cvt.rn.satfinite.e4m3x2.f32) equals the scalar encoder
 * of flamia_formats.h on every one of the 2^32 float bit patterns, in both
 * byte lanes. Finite inputs must match exactly; non-finite ones are counted
 * too (the kernels flag non-finite inputs, so only finite ones reach codes).
 * Also: the CEIL block exponent as the kernels compile it (flamia_fmt_block_exponent,
 * branch-free) equals its definition flamia_exp_ceil_for(., 448) on every non-negative
 * float. And the backward's dQ operand fold (flamia_e4m3x2_scale_f16 with the factor of
 * flamia_f16x2_pow2_neg): every pair of E4M3 codes times 2^-s, s = 0..40, re-encodes to the
 * value of the single rounding e4m3(dec(code) 2^-s) (values compared, so +0 and -0 are one).
 * And the forward's two decodes of P's codes for the P-values row sum
 * (flamia_e4m3x2_values, flamia_e4m3x2_values_bits): every pair of non-negative, non-NaN codes
 * gives flamia_fmt_e4m3_decode's values, bit for bit.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "flamia.h"
#include "flamia_formats.h"
#include "sm90_e4m3.cuh"

struct Result {
    unsigned long long finite_bad, nonfinite_bad, exp_bad;
    unsigned first_bad, first_exp_bad;
};

__global__ void check_all(Result *res) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    unsigned long long fb = 0, nb = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += stride) {
        const uint32_t u = (uint32_t)i;
        const float x = flamia_bitsf(u);
        const float y = flamia_bitsf(u ^ 0x80000000u); /* the other lane sees other values */
        const uint32_t hw = flamia_cvt_e4m3x2(x, y);
        const uint32_t sw = (uint32_t)flamia_fmt_e4m3_encode(x) | ((uint32_t)flamia_fmt_e4m3_encode(y) << 8);
        if (!(u & 0x80000000u) &&
            flamia_fmt_block_exponent(x, FLAMIA_EXP_CEIL) != flamia_exp_ceil_for(x, FLAMIA_E4M3_MAX)) {
            atomicAdd(&res->exp_bad, 1ull);
            atomicMin(&res->first_exp_bad, u);
        }
        if (hw != sw) {
            if ((u & 0x7f800000u) == 0x7f800000u) nb++;
            else {
                fb++;
                atomicMin(&res->first_bad, u);
            }
        }
    }
    if (fb) atomicAdd(&res->finite_bad, fb);
    if (nb) atomicAdd(&res->nonfinite_bad, nb);
}

/* one thread per (code pair, s): 65,536 x 41 cases */
__global__ void check_scale(unsigned long long *bad, unsigned *first_bad) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 65536u * 41u) return;
    const uint32_t codes = i & 0xffffu;
    const int s = (int)(i >> 16);
    const uint32_t hw = flamia_e4m3x2_scale_f16(codes, flamia_f16x2_pow2_neg(s));
    for (int lane = 0; lane < 2; lane++) {
        const uint8_t c = (uint8_t)(codes >> (8 * lane));
        if ((c & 0x7f) == 0x7f) continue; /* NaN codes: never a dS code */
        const float want = flamia_fmt_e4m3_decode(flamia_fmt_e4m3_encode(flamia_ldexpf(flamia_fmt_e4m3_decode(c), -s)));
        const float got = flamia_fmt_e4m3_decode((uint8_t)(hw >> (8 * lane)));
        if (got != want) {
            atomicAdd(bad, 1ull);
            atomicMin(first_bad, i);
        }
    }
}

/* one thread per code pair */
__global__ void check_decode(unsigned long long *bad, unsigned *first_bad) {
    const unsigned codes = blockIdx.x * blockDim.x + threadIdx.x;
    if (codes >= 65536u || (codes & 0x8080u) || (codes & 0x7f) == 0x7f || (codes & 0x7f00) == 0x7f00) return;
    const float2 a = flamia_e4m3x2_values(codes), b = flamia_e4m3x2_values_bits(codes);
    const float lo = flamia_fmt_e4m3_decode((uint8_t)codes), hi = flamia_fmt_e4m3_decode((uint8_t)(codes >> 8));
    if (__float_as_uint(a.x) != __float_as_uint(lo) || __float_as_uint(a.y) != __float_as_uint(hi) ||
        __float_as_uint(b.x) != __float_as_uint(lo) || __float_as_uint(b.y) != __float_as_uint(hi)) {
        atomicAdd(bad, 1ull);
        atomicMin(first_bad, codes);
    }
}

/* waits for the kernel just launched and copies its result back; 0, or 1 with the error printed */
static int finish(void *host, const void *dev, size_t bytes) {
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "FAIL: %s\n", cudaGetErrorString(e));
        return 1;
    }
    cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    return 0;
}

int main() {
    if (!flamia_cuda_available()) {
        printf("SKIP test_gpu_e4m3_cvt: no sm_90 GPU\n");
        return 77;
    }
    Result h = {0, 0, 0, 0xffffffffu, 0xffffffffu}, *d = nullptr;
    if (cudaMalloc(&d, sizeof h) != cudaSuccess) return 1;
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    check_all<<<132 * 16, 256>>>(d);
    if (finish(&h, d, sizeof h)) return 1;
    printf("e4m3 hardware cvt vs flamia_fmt_e4m3_encode over 2^32 inputs: finite mismatches %llu, "
           "non-finite mismatches %llu\n", h.finite_bad, h.nonfinite_bad);
    printf("CEIL block exponent vs flamia_exp_ceil_for over 2^31 non-negative inputs: mismatches %llu\n",
           h.exp_bad);
    if (h.exp_bad) {
        const float x = flamia_bitsf(h.first_exp_bad);
        fprintf(stderr, "FAIL: first exponent mismatch at 0x%08x (%a): host %d\n", h.first_exp_bad, x,
                flamia_exp_ceil_for(x, FLAMIA_E4M3_MAX));
        return 1;
    }
    if (h.finite_bad) {
        const float x = flamia_bitsf(h.first_bad);
        fprintf(stderr, "FAIL: first mismatch at 0x%08x (%a): host code %02x\n", h.first_bad, x,
                flamia_fmt_e4m3_encode(x));
        return 1;
    }
    if (h.nonfinite_bad) printf("note: non-finite inputs differ (they only occur with err_flag set)\n");

    struct {
        unsigned long long bad;
        unsigned first;
    } sc = {0, 0xffffffffu}, *dsc = nullptr;
    if (cudaMalloc(&dsc, sizeof sc) != cudaSuccess) return 1;
    cudaMemcpy(dsc, &sc, sizeof sc, cudaMemcpyHostToDevice);
    check_scale<<<(65536 * 41 + 255) / 256, 256>>>(&dsc->bad, &dsc->first);
    if (finish(&sc, dsc, sizeof sc)) return 1;
    printf("dQ operand fold e4m3(code) x 2^-s through F16 vs e4m3(dec(code) 2^-s), all code pairs, s = 0..40: "
           "mismatches %llu\n", sc.bad);
    if (sc.bad) {
        fprintf(stderr, "FAIL: first mismatch at codes 0x%04x, s = %u\n", sc.first & 0xffffu, sc.first >> 16);
        return 1;
    }
    sc.bad = 0, sc.first = 0xffffffffu;
    cudaMemcpy(dsc, &sc, sizeof sc, cudaMemcpyHostToDevice);
    check_decode<<<256, 256>>>(&dsc->bad, &dsc->first);
    if (finish(&sc, dsc, sizeof sc)) return 1;
    printf("P-code decodes (F2FP + HADD2, bits + FMUL) vs flamia_fmt_e4m3_decode, all non-negative code pairs: "
           "mismatches %llu\n", sc.bad);
    if (sc.bad) {
        fprintf(stderr, "FAIL: first mismatch at codes 0x%04x\n", sc.first);
        return 1;
    }
    return 0;
}
