/*
 * test_bwd_order_rule.c - host-only: the FP8 backward's launch order (flamia_sm90_bwd_uses_order,
 * backward.cu use_order) is decided as docs/cuda-api.md says (bwd_order_rule.h), over every kind,
 * GQA group from 1 to 16, the dQ modes and document lengths on both sides of the threshold.
 * Needs no GPU (cpu suite, i.e. CI); built with the CUDA kernels because the decision lives
 * in their library. test_gpu_backward checks the order table itself on the GPU.
 */
#include <stdio.h>

#include "bwd_order_rule.h"
#include "gpu_common.h" /* EXPECT, failures, gpu_problem_of_kind */

int main(void) {
    if (bwd_order_rule_overridden()) {
        printf("SKIP test_bwd_order_rule: FLAMIA_SM90_BWD_ORDER or FLAMIA_SM90_BWD set\n");
        return SKIP_CODE;
    }
    const enum flamia_sm90_kind kinds[] = {FLAMIA_SM90_MXFP8, FLAMIA_SM90_MXFP8_EXACT, FLAMIA_SM90_BF16};
    const int hkv[] = {16, 8, 4, 2, 1}; /* over 16 query heads: MHA, groups of 2 .. 16 */
    const int lens[] = {1, 128, 256, 1024, 1025, 2048, 2049, 3071, 3072, 3073, 3584, 4096, 4097, 8192, 65536};
    int checked = 0, ordered = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (size_t h = 0; h < sizeof hkv / sizeof *hkv; h++)
            for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
                for (int det = 0; det < 2; det++)
                    for (int causal = 0; causal < 2; causal++) {
                        struct flamia_sm90_problem P = gpu_problem_of_kind(kinds[k], 4 * lens[l], 4, 16, hkv[h], 128);
                        P.max_seqlen = lens[l], P.deterministic = det, P.causal = causal;
                        const int got = flamia_sm90_bwd_uses_order(&P), want = bwd_order_expected(&P);
                        EXPECT(got == want, "kind %d, 16 / %d heads, max_seqlen %d, deterministic %d, causal %d: order %s",
                               (int)kinds[k], hkv[h], lens[l], det, causal, got ? "used" : "not used");
                        checked++, ordered += got;
                    }
    printf("test_bwd_order_rule: %d problems, the order used on %d (FP8 GQA, default dQ; up to %d / %d tokens "
           "in groups of 4 / 8, never in groups of 2)\n", checked, ordered, bwd_order_documented_max_seqlen(4),
           bwd_order_documented_max_seqlen(8));
    if (failures) {
        printf("test_bwd_order_rule: %d failures\n", failures);
        return 1;
    }
    printf("test_bwd_order_rule: ok\n");
    return 0;
}
