/* errors.c - status strings and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "flamia_internal.h"

static _Thread_local char last_error[512];

const char *flamia_status_string(flamia_status s) {
    switch (s) {
    case FLAMIA_OK: return "ok";
    case FLAMIA_ERR_INVALID: return "invalid argument";
    case FLAMIA_ERR_UNSUPPORTED: return "unsupported";
    case FLAMIA_ERR_CUDA: return "CUDA error";
    case FLAMIA_ERR_NOMEM: return "out of memory";
    }
    return "unknown status";
}

const char *flamia_last_error(void) { return last_error; }

const char *flamia_version_string(void) {
#if FLAMIA_WITH_CUDA
    return "flamia 0.1.0 (cuda sm_90a)";
#else
    return "flamia 0.1.0 (cpu only)";
#endif
}

void flamia_clear_error(void) { last_error[0] = '\0'; }

flamia_status flamia_fail(flamia_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}
