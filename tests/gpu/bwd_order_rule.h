/*
 * bwd_order_rule.h - the FP8 backward's launch-order rule as docs/cuda-api.md states it, written
 * out independently of the library's constant (backward.cu use_order): the CTAs launch longest
 * first for FP8 GQA (heads_q > heads_kv) in the default dQ mode when the longest document has
 * at most 3072 tokens (forty-ninth session: -12.2 % at gqa-5x3072, 0 at 3584, +4.8 % at
 * 4096). test_bwd_order_rule (cpu suite) checks the library's decision against it over a grid
 * of problems, test_gpu_backward on each GPU case. Holds without FLAMIA_SM90_BWD_ORDER and
 * FLAMIA_SM90_BWD in the environment (they override it).
 */
#ifndef FLAMIA_TEST_BWD_ORDER_RULE_H
#define FLAMIA_TEST_BWD_ORDER_RULE_H

#include <stdlib.h>

#include "sm90_launch.h"

enum { kDocumentedOrderMaxSeqlen = 3072 };

static inline int bwd_order_expected(const struct flamia_sm90_problem *P) {
    return P->kind != FLAMIA_SM90_BF16 && !P->deterministic && P->heads_q > P->heads_kv &&
           P->max_seqlen <= kDocumentedOrderMaxSeqlen;
}

/* 1 when the environment overrides the rule (the library reads these once per process) */
static inline int bwd_order_rule_overridden(void) {
    return getenv("FLAMIA_SM90_BWD_ORDER") != NULL || getenv("FLAMIA_SM90_BWD") != NULL;
}

#endif
