/*
 * bwd_order_rule.h - the FP8 backward's launch-order rule as docs/cuda-api.md states it, written
 * out independently of the library's constant (backward.cu use_order): the CTAs launch longest
 * first for FP8 GQA (heads_q > heads_kv) in the default dQ mode, when its dQ takes the reduce-adds
 * (not the split: sm90_launch.h flamia_sm90_dq_plan_of), and the longest document has
 * at most as many tokens as the table below gives for the group (queries per kv head): groups of
 * 4 measured in the forty-ninth session (-12.2 % at gqa-5x3072, 0 at 3584, +4.8 % at
 * 4096); groups of 8 up to 4096 and groups of 2 never (fifty-third session,
 * dev/sessions/fiftieth_groups.sh: groups of 8 -24 % at 4x4096, groups of 2 +8.9 % at 16x1024). test_bwd_order_rule (cpu suite) checks the library's decision against it over a grid
 * of problems, test_gpu_backward on each GPU case. Holds without FLAMIA_SM90_BWD_ORDER and
 * FLAMIA_SM90_BWD in the environment (they override it).
 */
#ifndef FLAMIA_TEST_BWD_ORDER_RULE_H
#define FLAMIA_TEST_BWD_ORDER_RULE_H

#include <stdlib.h>

#include "sm90_launch.h"

/* the documented threshold of a group: groups of 4, of 8 and more; groups of 2 and MHA never (-1) */
static inline int bwd_order_documented_max_seqlen(int group) {
    static const struct { int min_group, max_seqlen; } table[] = {{8, 4096}, {4, 3072}};
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (group >= table[i].min_group) return table[i].max_seqlen;
    return -1;
}

static inline int bwd_order_expected(const struct flamia_sm90_problem *P) {
    return P->kind != FLAMIA_SM90_BF16 && !P->deterministic && P->dq_plan.heads == 0 &&
           P->max_seqlen <= bwd_order_documented_max_seqlen(P->heads_q / P->heads_kv);
}

/* 1 when the environment overrides the rule (the library reads these once per process) */
static inline int bwd_order_rule_overridden(void) {
    return getenv("FLAMIA_SM90_BWD_ORDER") != NULL || getenv("FLAMIA_SM90_BWD") != NULL;
}

#endif
