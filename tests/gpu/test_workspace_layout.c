/*
 * test_workspace_layout.c - host-only check of the workspace layout (sm90_launch.h
 * flamia_sm90_layout_of) against the sizes its comment promises, for every kind: each
 * region 256-byte aligned, at least as large as its contents, disjoint from the next, all
 * inside total; the BF16 operand copies present for the bf16 kind only (the FP8 kinds never
 * touch them). Needs no GPU (cpu suite); built with the CUDA kernels because sm90_launch.h
 * includes the CUDA runtime header.
 */
#include <stdio.h>
#include <string.h>

#include "gpu_common.h" /* EXPECT, failures */
#include "sm90_launch.h"
#include "test_inputs.h"

struct region {
    const char *name;
    size_t off, need; /* need: the bytes its contents take (sm90_launch.h's comment) */
};

static void check_shape(const char *label, int T, int ndocs, int Hq, int Hkv, int D, enum flamia_sm90_kind kind,
                        size_t *total) {
    const struct flamia_sm90_layout L = gpu_layout_of_kind(kind, T, ndocs, Hq, Hkv, D);
    const size_t t = (size_t)T, q = (size_t)Hq, k = (size_t)Hkv, d = (size_t)D, tv = (size_t)L.t_vpad;
    const size_t bf = kind == FLAMIA_SM90_BF16; /* the BF16 operand copies: bf16 kind only */
    const size_t items = q * (size_t)flamia_sm90_tile_slots(T, ndocs);
    const struct region R[] = {
        {"err_flag", L.err_flag, 4},
        {"q_codes", L.q_codes, t * q * d},
        {"k_codes", L.k_codes, t * k * d},
        {"v_codes", L.v_codes, t * k * d},
        {"vt_codes", L.vt_codes, k * d * tv},
        {"q_exp", L.q_exp, t * q},
        {"k_exp", L.k_exp, t * k},
        {"v_exp", L.v_exp, t * k},
        {"q_bf16", L.q_bf16, bf * t * q * d * 2},
        {"k_bf16", L.k_bf16, bf * t * k * d * 2},
        {"v_bf16", L.v_bf16, bf * t * k * d * 2},
        {"row_frame", L.row_frame, t * q * 4},
        {"qt_codes", L.qt_codes, q * d * tv},
        {"kt_codes", L.kt_codes, k * d * tv},
        {"do_codes", L.do_codes, t * q * d},
        {"do_exp", L.do_exp, t * q},
        {"do_bf16", L.do_bf16, t * q * d * 2},
        {"delta", L.delta, t * q * 4},
        {"dq_accum", L.dq_accum, t * q * d * 4},
        {"dq_turn", L.dq_turn, t * q * 4},
        {"bwd_rows", L.bwd_rows, q * 8 * t * 4},
        {"fwd_work", L.fwd_work, (FLAMIA_SM90_FWD_HEADER + (items + 31) / 32 + items) * 4},
        {"bwd_order", L.bwd_order, k * (size_t)flamia_sm90_tile_slots(T, ndocs) * 4},
    };
    const int n = (int)(sizeof R / sizeof *R);
    for (int i = 0; i < n; i++) {
        const size_t end = i + 1 < n ? R[i + 1].off : L.total;
        EXPECT(R[i].off % 256 == 0, "%s kind %d: %s at %zu, not 256-byte aligned", label, (int)kind, R[i].name,
               R[i].off);
        EXPECT(end >= R[i].off && end - R[i].off >= R[i].need, "%s kind %d: %s holds %zu bytes, needs %zu", label,
               (int)kind, R[i].name, end - R[i].off, R[i].need);
        /* no region larger than its contents plus the alignment pad: nothing is allocated for nothing */
        EXPECT(end - R[i].off < R[i].need + 256, "%s kind %d: %s takes %zu bytes for %zu", label, (int)kind,
               R[i].name, end - R[i].off, R[i].need);
    }
    *total = L.total;
}

int main(void) {
    rng_t r = {20261201};
    int shapes = 0;
    for (int i = 0; i < 300; i++) {
        const int T = rng_int(&r, 1, 70000), ndocs = rng_int(&r, 1, T < 300 ? T : 300);
        const int Hkv = rng_int(&r, 1, 8), Hq = Hkv * rng_int(&r, 1, 4), D = rng_int(&r, 0, 1) ? 128 : 64;
        size_t total[3];
        const enum flamia_sm90_kind kinds[3] = {FLAMIA_SM90_MXFP8, FLAMIA_SM90_MXFP8_EXACT, FLAMIA_SM90_BF16};
        for (int j = 0; j < 3; j++) check_shape("random", T, ndocs, Hq, Hkv, D, kinds[j], &total[j]);
        EXPECT(total[0] == total[1] && total[2] > total[0], "T %d: totals mxfp8 %zu exact %zu bf16 %zu", T, total[0],
               total[1], total[2]);
        shapes++;
    }
    size_t fp8 = 0, bf16 = 0; /* 16 x 4096 tokens, 16 + 16 heads, d = 128: the figures docs/cuda-api.md gives */
    check_shape("16x4096", 65536, 16, 16, 16, 128, FLAMIA_SM90_MXFP8, &fp8);
    check_shape("16x4096", 65536, 16, 16, 16, 128, FLAMIA_SM90_BF16, &bf16);
    printf("workspace at 16x4096, 16 + 16 heads, d = 128: mxfp8 %.2f GB, bf16 %.2f GB\n", fp8 * 1e-9, bf16 * 1e-9);
    if (failures) {
        fprintf(stderr, "test_workspace_layout: %d failures\n", failures);
        return 1;
    }
    printf("test_workspace_layout: ok (%d random shapes x 3 kinds)\n", shapes);
    return 0;
}
