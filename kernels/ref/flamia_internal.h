/* flamia_internal.h - helpers shared by the library's C and CUDA sources (not public). */
#ifndef FLAMIA_INTERNAL_H
#define FLAMIA_INTERNAL_H

#include "flamia.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a formatted message for flamia_last_error() and returns st. */
flamia_status flamia_fail(flamia_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void flamia_clear_error(void);

/* softmax_scale with 0 meaning 1/sqrt(head_dim) */
float flamia_effective_scale(const flamia_shape *s);
/* Checks the fields of a shape that do not need cu_seqlens' contents. */
flamia_status flamia_shape_check_dims(const flamia_shape *s);

#ifdef __cplusplus
}
#endif
#endif
