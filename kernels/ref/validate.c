/* validate.c - shape checks shared by the CPU reference and the CUDA entry points. */
#include <math.h>

#include "flamia_internal.h"

float flamia_effective_scale(const flamia_shape *s) {
    return s->softmax_scale > 0.0f ? s->softmax_scale : 1.0f / sqrtf((float)s->head_dim);
}

flamia_status flamia_shape_check_dims(const flamia_shape *s) {
    if (!s) return flamia_fail(FLAMIA_ERR_INVALID, "shape: NULL");
    if (s->total_tokens <= 0) return flamia_fail(FLAMIA_ERR_INVALID, "shape: total_tokens %d must be > 0", s->total_tokens);
    if (s->num_docs <= 0 || s->num_docs > s->total_tokens)
        return flamia_fail(FLAMIA_ERR_INVALID, "shape: num_docs %d must be in [1, total_tokens=%d]", s->num_docs, s->total_tokens);
    if (!s->cu_seqlens) return flamia_fail(FLAMIA_ERR_INVALID, "shape: cu_seqlens is NULL");
    if (s->heads_q <= 0 || s->heads_kv <= 0)
        return flamia_fail(FLAMIA_ERR_INVALID, "shape: heads_q %d and heads_kv %d must be > 0", s->heads_q, s->heads_kv);
    if (s->heads_q % s->heads_kv)
        return flamia_fail(FLAMIA_ERR_INVALID, "shape: heads_q %d is not a multiple of heads_kv %d (GQA)", s->heads_q, s->heads_kv);
    if (s->head_dim != 64 && s->head_dim != 128)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "shape: head_dim %d unsupported (64 or 128)", s->head_dim);
    if (s->causal != 0 && s->causal != 1) return flamia_fail(FLAMIA_ERR_INVALID, "shape: causal must be 0 or 1");
    if (!(s->softmax_scale >= 0.0f) || isinf(s->softmax_scale))
        return flamia_fail(FLAMIA_ERR_INVALID, "shape: softmax_scale %g must be finite and >= 0", (double)s->softmax_scale);
    return FLAMIA_OK;
}

flamia_status flamia_shape_validate(const flamia_shape *s) {
    flamia_status st = flamia_shape_check_dims(s);
    if (st) return st;
    const int32_t *c = s->cu_seqlens;
    if (c[0] != 0) return flamia_fail(FLAMIA_ERR_INVALID, "shape: cu_seqlens[0] = %d, must be 0", (int)c[0]);
    for (int d = 0; d < s->num_docs; d++)
        if (c[d + 1] <= c[d])
            return flamia_fail(FLAMIA_ERR_INVALID, "shape: cu_seqlens not increasing at document %d (%d -> %d)", d,
                               (int)c[d], (int)c[d + 1]);
    if (c[s->num_docs] != s->total_tokens)
        return flamia_fail(FLAMIA_ERR_INVALID, "shape: cu_seqlens[%d] = %d, must equal total_tokens %d", s->num_docs,
                           (int)c[s->num_docs], s->total_tokens);
    return FLAMIA_OK;
}
