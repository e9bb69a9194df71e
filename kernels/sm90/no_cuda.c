/* no_cuda.c - the CUDA entry points of a build without nvcc: each says so. */
#include "flamia.h"
#include "flamia_internal.h"

#define NO_CUDA() flamia_fail(FLAMIA_ERR_UNSUPPORTED, "libflamia was built without CUDA (meson -Dcuda=enabled needs nvcc)")

int flamia_cuda_available(void) { return 0; }
flamia_status flamia_cuda_set_deterministic(int on) {
    (void)on;
    return NO_CUDA();
}
int flamia_cuda_deterministic(void) { return 0; }
flamia_status flamia_cuda_set_o_sum_interval(int key_tiles) {
    (void)key_tiles;
    return NO_CUDA();
}
int flamia_cuda_o_sum_interval(void) { return 0; }
flamia_status flamia_cuda_workspace_size(const flamia_recipe *r, const flamia_shape *s, size_t *bytes) {
    (void)r; (void)s; (void)bytes;
    return NO_CUDA();
}
flamia_status flamia_cuda_quantize(const flamia_recipe *r, const flamia_shape *s, const void *q,
                                   const void *k, const void *v, void *ws, size_t wsb, void *st) {
    (void)r; (void)s; (void)q; (void)k; (void)v; (void)ws; (void)wsb; (void)st;
    return NO_CUDA();
}
flamia_status flamia_cuda_forward(const flamia_recipe *r, const flamia_shape *s, void *ws,
                                  size_t wsb, void *o, float *lse, void *st) {
    (void)r; (void)s; (void)ws; (void)wsb; (void)o; (void)lse; (void)st;
    return NO_CUDA();
}
flamia_status flamia_cuda_backward(const flamia_recipe *r, const flamia_shape *s, void *ws,
                                   size_t wsb, const void *o, const float *lse, const void *dout,
                                   void *dq, void *dk, void *dv, void *st) {
    (void)r; (void)s; (void)ws; (void)wsb; (void)o; (void)lse; (void)dout; (void)dq; (void)dk;
    (void)dv; (void)st;
    return NO_CUDA();
}
flamia_status flamia_cuda_train_step(const flamia_recipe *r, const flamia_shape *s, const void *q,
                                     const void *k, const void *v, const void *dout, void *o,
                                     float *lse, void *dq, void *dk, void *dv, void *ws,
                                     size_t wsb, void *st) {
    (void)r; (void)s; (void)q; (void)k; (void)v; (void)dout; (void)o; (void)lse; (void)dq;
    (void)dk; (void)dv; (void)ws; (void)wsb; (void)st;
    return NO_CUDA();
}
flamia_status flamia_cuda_check_finite(const void *ws, size_t wsb, void *st) {
    (void)ws; (void)wsb; (void)st;
    return NO_CUDA();
}
flamia_status flamia_cuda_debug_p_codes(const flamia_recipe *r, const flamia_shape *s, void *ws,
                                        size_t wsb, const void *o, const float *lse, const void *dout,
                                        uint8_t *fwd_codes, uint8_t *bwd_codes, float *fwd_frames,
                                        void *st) {
    (void)r; (void)s; (void)ws; (void)wsb; (void)o; (void)lse; (void)dout; (void)fwd_codes;
    (void)bwd_codes; (void)fwd_frames; (void)st;
    return NO_CUDA();
}
