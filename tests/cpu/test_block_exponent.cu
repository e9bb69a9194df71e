/* test_block_exponent.cu - cpu suite (built where nvcc is, as CI): the branch-free block
 * exponent rule the sm90 kernels use (flamia_block_exponent_ceil_fast, sm90_e4m3.cuh,
 * compiled here for the host from the same source) equals the formats header's
 * flamia_fmt_block_exponent(x, CEIL) on every one of the 2^32 floats (~10 s on one core).
 * tests/gpu/test_gpu_e4m3_cvt.cu checks the device compilation the same way. */
#include <stdio.h>
#include "sm90_e4m3.cuh"
int main(void) {
    unsigned long long bad = 0, first = 0;
    for (long long i = 0; i < (1ll << 32); i++) {
        const float x = flamia_bitsf((uint32_t)i);
        if (flamia_block_exponent_ceil_fast(x) != flamia_fmt_block_exponent(x, 0)) {
            bad++;
            if (!first) first = (unsigned long long)i | (1ull << 40);
        }
    }
    if (bad) printf("FAIL: %llu of 2^32 floats differ (first bits 0x%08llx)\n", bad, first & 0xffffffffull);
    else printf("flamia_block_exponent_ceil_fast == flamia_fmt_block_exponent(., CEIL) on all 2^32 floats\n");
    return bad != 0;
}
