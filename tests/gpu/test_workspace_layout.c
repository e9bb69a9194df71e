/*
 * test_workspace_layout.c - host-only check of the workspace layout (sm90_launch.h
 * flamia_sm90_layout_of) against the sizes its comment promises, for every kind: each
 * region 256-byte aligned, at least as large as its contents, disjoint from the next, all
 * inside total; the BF16 operand copies present for the bf16 kind only (the FP8 kinds never
 * touch them). The deterministic mode's split dQ regions (check_split): after total, inside the
 * size asked for, their tile bound above any packing the shape allows, and the kv heads a chunk
 * takes for a given workspace (flamia_sm90_dq_split_heads), bounded from max_seqlen or counted from a
 * host copy of cu_seqlens (problem.doc_tiles). The calls' own layout (flamia_sm90_layout_for_call)
 * against the problem they build, and where a layout of the sizes alone departs from it (the GPU
 * tests' bug until the sixty-ninth session). Needs no GPU (cpu suite); built with
 * the CUDA kernels because sm90_launch.h includes the CUDA runtime header.
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

static int room_grown; /* shapes whose layout grew dq_room */
static int room_one;   /* ... for one chunk */

/* doc_tiles: the documents' tile pairs counted from a host copy of cu_seqlens (0: bounded by max_seqlen) */
static void check_shape(const char *label, int T, int ndocs, int max_seqlen, long long doc_tiles, int Hq, int Hkv,
                        int D, enum flamia_sm90_kind kind, size_t *total) {
    struct flamia_sm90_problem P = gpu_problem_of_kind(kind, T, ndocs, Hq, Hkv, D);
    P.causal = 1;
    P.max_seqlen = max_seqlen;
    P.doc_tiles = doc_tiles;
    const struct flamia_sm90_layout L = flamia_sm90_layout_of(&P);
    const size_t per_kv = (size_t)L.ds_tiles_kv * FLAMIA_SM90_DQ_SPLIT_TILE_BYTES;
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
        {"dq_room", L.dq_room, flamia_sm90_dq_room_bytes(&P, L.dq_accum, L.dq_room - L.dq_accum, per_kv)},
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
    /* dq_room: every kv head in one chunk for at most 1/8 of what precedes dq_accum, else at most 1/16
     * for dq_room_chunks chunks; where one chunk fits within 1/8, that is what the room holds; none
     * asked for, none there and the other regions as before it */
    const size_t one_growth = (size_t)P.dq_room_one_growth, growth = (size_t)FLAMIA_SM90_DQ_ROOM_GROWTH;
    const size_t grown = L.bwd_rows - L.dq_room;
    const int chunks = flamia_sm90_dq_chunks(&P, flamia_sm90_dq_plan_at(&P, &L, L.dq_accum, L.bwd_rows - L.dq_accum, Hkv).heads);
    if (grown) {
        EXPECT(kind != FLAMIA_SM90_BF16 &&
                   ((chunks == 1 && grown * one_growth <= L.dq_accum + 256 * one_growth) ||
                    (grown * growth <= L.dq_accum + 256 * growth && chunks <= P.dq_room_chunks)),
               "%s kind %d: dq_room %zu bytes (before dq_accum %zu), the split then in %d chunks", label, (int)kind,
               grown, L.dq_accum, chunks);
        room_grown++;
    }
    if (one_growth && L.ds_tiles_kv > 0 && kind != FLAMIA_SM90_BF16) {
        size_t next;
        const size_t need = flamia_sm90_dq_codes_at(L.dq_accum, ndocs, Hkv, &next) + k * per_kv - L.dq_accum;
        EXPECT(need > (L.dq_room - L.dq_accum) + L.dq_accum / one_growth || chunks == 1,
               "%s kind %d: one chunk needs %zu bytes of room (before dq_accum %zu), yet the split takes %d", label,
               (int)kind, need, L.dq_accum, chunks);
        if (chunks == 1 && grown) room_one++;
    }
    P.dq_room_chunks = 0;
    const struct flamia_sm90_layout L0 = flamia_sm90_layout_of(&P);
    EXPECT(L0.bwd_rows == L0.dq_room && L0.dq_room == L.dq_room && L0.total == L.total - (L.bwd_rows - L.dq_room),
           "%s kind %d: no growth asked, yet dq_room %zu bytes", label, (int)kind, L0.bwd_rows - L0.dq_room);
    *total = L.total;
}

/* The split dQ's regions for a packing of `ndocs` documents of `lens` (max_seqlen their longest):
 * the tiles the kernels address for it (group sum_d c(n_d) a kv head) inside the bound; the
 * deterministic mode's size asked past total; the plan (flamia_sm90_dq_plan_of) for workspaces around
 * its steps: its regions in order, inside the room it took (past total, or dq_accum and dq_turn),
 * the default mode's chunk limit. Returns the kv heads a chunk takes with the size the deterministic
 * mode asks for (0: the turns). */
static int check_split(const char *label, const int *lens, int ndocs, int Hq, int Hkv, int causal,
                       enum flamia_sm90_kind kind, int counted) {
    static int32_t cu[4097];
    cu_from_lens(lens, ndocs, cu);
    struct flamia_sm90_problem P = gpu_problem_of_kind(kind, cu[ndocs], ndocs, Hq, Hkv, 128);
    P.causal = causal;
    P.max_seqlen = max_len(cu, ndocs);
    P.doc_tiles = counted ? flamia_sm90_doc_tiles(cu, ndocs, causal) : 0; /* the shape's host copy of cu_seqlens */
    P.deterministic = 0;
    const struct flamia_sm90_layout off = flamia_sm90_layout_of(&P);
    EXPECT(off.total_split == off.total, "%s: the mode off asks for more workspace", label);
    P.deterministic = 1;
    const struct flamia_sm90_layout L = flamia_sm90_layout_of(&P);
    EXPECT(L.total == off.total, "%s: the mode moves the other regions (%zu, %zu)", label, L.total, off.total);
    if (kind == FLAMIA_SM90_BF16) {
        EXPECT(L.ds_tiles_kv == 0 && L.total_split == L.total && flamia_sm90_dq_plan_of(&P, (size_t)1 << 50, 8, Hkv).heads == 0,
               "%s: a split for the bf16 kind", label);
        return 0;
    }
    long long need = 0; /* the tiles one kv head's chunk addresses for this packing */
    for (int d = 0; d < ndocs; d++) {
        const long long n = (lens[d] + 127) / 128;
        need += (long long)(Hq / Hkv) * (causal ? n * (n + 1) / 2 : n * n);
    }
    const size_t per = (size_t)L.ds_tiles_kv * FLAMIA_SM90_DQ_SPLIT_TILE_BYTES;
    EXPECT(counted ? need == L.ds_tiles_kv : need <= L.ds_tiles_kv, "%s: %lld tiles a kv head, %s %lld", label, need,
           counted ? "counted" : "bound", L.ds_tiles_kv);
    /* the deterministic mode's size: every kv head past total under the cap, else the most that fit */
    const struct flamia_sm90_dq_plan asked = flamia_sm90_dq_plan_of(&P, L.total_split, Hkv, Hkv);
    const int heads = per <= FLAMIA_SM90_DQ_SPLIT_MAX_BYTES ? asked.heads : 0;
    if (per > FLAMIA_SM90_DQ_SPLIT_MAX_BYTES)
        EXPECT(L.total_split == L.total, "%s: asks past the cap (%zu bytes a kv head)", label, per);
    else
        EXPECT(heads >= 1 && (heads == Hkv || (size_t)(heads + 1) * per > FLAMIA_SM90_DQ_SPLIT_MAX_BYTES) &&
                   L.total_split - L.total <= (size_t)heads * per + 2 * 256 + (size_t)ndocs * 8 + (size_t)Hkv * 4,
               "%s: asks for %zu bytes past total, %d kv heads a chunk of %d (%zu bytes a head)", label,
               L.total_split - L.total, heads, Hkv, per);
    /* plans for workspaces of h heads' share past total, and the mode-off size (dq_accum's room) */
    const size_t codes_past = flamia_sm90_align(flamia_sm90_align(L.total + (size_t)ndocs * 8) + (size_t)Hkv * 4);
    for (int h = 0; h <= (Hkv < 4 ? Hkv : 4); h++) {
        const size_t ws = codes_past + (size_t)h * per;
        for (int det = 0; det < 2; det++) {
            P.deterministic = det;
            const int lims[3] = {-1, 0, Hkv};
            for (int li = 0; li < 3; li++) {
                const int lim = lims[li];
                const struct flamia_sm90_dq_plan pl = flamia_sm90_dq_plan_of(&P, ws, lim, Hkv);
                const int chunks = flamia_sm90_dq_chunks(&P, pl.heads);
                P.deterministic = 1; /* the most either room holds, no limit */
                const struct flamia_sm90_dq_plan any = flamia_sm90_dq_plan_of(&P, ws, 1, Hkv);
                P.deterministic = det;
                if (!pl.heads) {
                    /* none only where neither room holds a head, the switch is off (-1), or the default mode's limit binds */
                    EXPECT(lim < 0 || any.heads == 0 || (!det && (lim == 0 || flamia_sm90_dq_chunks(&P, any.heads) > lim)),
                           "%s: no split (det %d, limit %d, %d heads' share past total)", label, det, lim, h);
                    continue;
                }
                EXPECT(lim >= 0 && (det || (lim > 0 && chunks <= lim)) && pl.heads == any.heads,
                       "%s: split in %d chunks (det %d, limit %d)", label, chunks, det, lim);
                const int in_accum = pl.off == off.dq_accum;
                const size_t end = in_accum ? off.bwd_rows : ws;
                EXPECT((in_accum || pl.off == L.total) && pl.off % 256 == 0 && pl.next >= pl.off + (size_t)ndocs * 8 &&
                           pl.next % 256 == 0 && pl.codes >= pl.next + (size_t)Hkv * 4 && pl.codes % 256 == 0 &&
                           pl.fac == pl.codes + (size_t)pl.heads * L.ds_tiles_kv * 128 * 128 &&
                           pl.fac + (size_t)pl.heads * L.ds_tiles_kv * 2 * 128 * 4 <= end,
                       "%s: plan regions out of their room (off %zu next %zu codes %zu fac %zu, end %zu)", label, pl.off,
                       pl.next, pl.codes, pl.fac, end);
                /* the room with more heads, and every head it holds */
                EXPECT(pl.heads == (in_accum ? (h > pl.heads ? -1 : pl.heads) : (h < Hkv ? h : Hkv)),
                       "%s: %d heads a chunk with %d heads' share past total", label, pl.heads, h);
            }
        }
    }
    return heads;
}

/* The calls' own layout (flamia_sm90_layout_for_call, which needs no GPU) for n documents of len
 * tokens, against the problem the calls build (max_seqlen, causal, the host copy's count, the
 * library's dq_room settings): the same regions. Returns whether the layout of the sizes alone (what
 * the GPU tests read until the sixty-ninth session) puts fwd_work elsewhere. */
/* memcmp compares layouts: no padding bytes in the struct */
_Static_assert(sizeof(struct flamia_sm90_layout) == 26 * sizeof(size_t) + sizeof(long long) + 2 * sizeof(int),
               "struct flamia_sm90_layout has padding: compare it field by field");
static int check_call_layout(const char *preset, int n, int len, int Hq, int Hkv, int host_copy) {
    int32_t cu[65];
    for (int d = 0; d <= n; d++) cu[d] = len * d;
    flamia_recipe rec;
    if (flamia_recipe_preset(preset, &rec) != FLAMIA_OK) {
        EXPECT(0, "preset %s: %s", preset, flamia_last_error());
        return 0;
    }
    const flamia_shape shape = {cu[n], n, cu, Hq, Hkv, 128, 1, 0.0f, len, host_copy ? cu : NULL};
    struct flamia_sm90_layout got;
    memset(&got, 0, sizeof got);
    const flamia_status st = flamia_sm90_layout_for_call(&rec, &shape, &got);
    EXPECT(st == FLAMIA_OK, "%s %dx%d: flamia_sm90_layout_for_call -> %s: %s", preset, n, len, flamia_status_string(st),
           flamia_last_error());
    if (st != FLAMIA_OK) return 0;
    struct flamia_sm90_problem P = gpu_problem_of_kind(gpu_kind_of_preset(preset), cu[n], n, Hq, Hkv, 128);
    P.causal = 1;
    P.max_seqlen = len;
    P.doc_tiles = host_copy ? flamia_sm90_doc_tiles(cu, n, 1) : 0;
    P.dq_room_chunks = flamia_sm90_dq_room_chunks();
    P.dq_room_growth = flamia_sm90_dq_room_growth();
    P.dq_room_one_growth = flamia_sm90_dq_room_one_growth();
    const struct flamia_sm90_layout want = flamia_sm90_layout_of(&P);
    EXPECT(memcmp(&got, &want, sizeof got) == 0, /* every region */
           "%s %dx%d%s: the call's layout (fwd_work %zu, total %zu) is not the calls' problem's (%zu, %zu)", preset, n,
           len, host_copy ? ", counted" : "", got.fwd_work, got.total, want.fwd_work, want.total);
    return gpu_layout_of_kind(P.kind, cu[n], n, Hq, Hkv, 128).fwd_work != got.fwd_work;
}

int main(void) {
    rng_t r = {20261201};
    int shapes = 0;
    for (int i = 0; i < 300; i++) {
        const int T = rng_int(&r, 1, 70000), ndocs = rng_int(&r, 1, T < 300 ? T : 300);
        const int Hkv = rng_int(&r, 1, 8), Hq = Hkv * rng_int(&r, 1, 4), D = rng_int(&r, 0, 1) ? 128 : 64;
        size_t total[3];
        const enum flamia_sm90_kind kinds[3] = {FLAMIA_SM90_MXFP8, FLAMIA_SM90_MXFP8_EXACT, FLAMIA_SM90_BF16};
        const int max_seqlen = rng_int(&r, (T + ndocs - 1) / ndocs, T);
        for (int j = 0; j < 3; j++) check_shape("random", T, ndocs, max_seqlen, 0, Hq, Hkv, D, kinds[j], &total[j]);
        EXPECT(total[0] == total[1] && total[2] > total[0], "T %d: totals mxfp8 %zu exact %zu bf16 %zu", T, total[0],
               total[1], total[2]);
        shapes++;
    }
    enum { SPLIT_DOCS = 4096 };
    static int lens[SPLIT_DOCS];
    int split_forms[3] = {0, 0, 0}; /* turns, chunks, every kv head at once */
    for (int i = 0; i < 300; i++) { /* random packings, split regions */
        const int n = rng_int(&r, 1, rng_int(&r, 0, 3) ? 40 : SPLIT_DOCS), Hkv = rng_int(&r, 1, 16);
        for (int d = 0; d < n; d++) lens[d] = rng_int(&r, 0, 4) ? rng_int(&r, 1, 3000) : rng_int(&r, 1, 40000);
        const enum flamia_sm90_kind kind = rng_int(&r, 0, 3) ? FLAMIA_SM90_MXFP8 : rng_int(&r, 0, 1) ? FLAMIA_SM90_MXFP8_EXACT : FLAMIA_SM90_BF16;
        const int Hq = Hkv * rng_int(&r, 1, 8), causal = rng_int(&r, 0, 3) != 0;
        const int h = check_split("random packing", lens, n, Hq, Hkv, causal, kind, 0);
        split_forms[h == 0 ? 0 : h < Hkv ? 1 : 2]++;
        /* with the documents counted: the same checks, and never fewer kv heads a chunk */
        EXPECT(check_split("random packing, counted", lens, n, Hq, Hkv, causal, kind, 1) >= h,
               "random packing of %d documents: fewer kv heads a chunk counted than bounded", n);
    }
    /* every form met (the seed is fixed) */
    EXPECT(split_forms[0] && split_forms[1] && split_forms[2], "split forms met: turns %d, chunks %d, all heads %d",
           split_forms[0], split_forms[1], split_forms[2]);
    /* the sizes docs/cuda-api.md gives: 16 x 4096 every head at once; one document of 131,072 tokens a kv
     * head a chunk; of 262,144 (a head's share over the cap) by turns */
    for (int d = 0; d < 16; d++) lens[d] = 4096;
    EXPECT(check_split("16x4096", lens, 16, 16, 16, 1, FLAMIA_SM90_MXFP8, 0) == 16, "16x4096: not every head at once");
    lens[0] = 131072;
    EXPECT(check_split("1x131072", lens, 1, 16, 16, 1, FLAMIA_SM90_MXFP8, 0) == 1, "1x131072: not one kv head a chunk");
    lens[0] = 262144;
    EXPECT(check_split("1x262144", lens, 1, 16, 16, 1, FLAMIA_SM90_MXFP8, 0) == 0, "1x262144: split past the cap");
    { /* the default mode's split as a call plans it (flamia_sm90_dq_plan_for_call: no GPU here, so an
         H100's 132 SMs), with the default floors and limits (the grid's order: 8 CTAs an SM, 6 chunks;
         under that floor or past that limit longest first: GQA groups of 4, 2 CTAs an SM, 6 chunks;
         smaller groups where the chunk's work outlasts its longest CTA and that document has 16 tiles
         or more, 4 CTAs an SM, 16 chunks) in dq_accum's room grown by dq_room: documents x length / kv
         heads -> chunks, longest first. 16x4096: 4 chunks of 2,112 CTAs; 4x4096: 4 of 528, ordered
         (work 64 tile pairs an SM, longest 32); 2x4096: 4 of 264, under the floor of 4, none;
         gqa-16x1024: 2 chunks of 288, ordered (floor 264); gqa-8x1024: 144, none; 8x2048: 3 chunks of
         680-816, ordered; gqa-64x1024: 2 chunks of 1,152, the grid's order. Every deterministic mode
         takes it (no floor), longest first where its path is (2x4096 and gqa-8x1024 too). */
        flamia_sm90_set_dq_split_max_chunks(6);
        flamia_sm90_set_dq_split_min_ctas(-1);
        const struct { int n, len, hkv, chunks, ordered, det_ordered; } cases[] = {
            {16, 4096, 16, 4, 0, 0}, {4, 4096, 16, 4, 1, 1}, {2, 4096, 16, 0, 0, 1},  {16, 1024, 4, 2, 1, 1},
            {8, 1024, 4, 0, 0, 1},   {8, 2048, 16, 3, 1, 1}, {64, 1024, 4, 2, 0, 0},
        };
        for (int i = 0; i < (int)(sizeof cases / sizeof *cases); i++) {
            int32_t c[65];
            for (int d = 0; d <= cases[i].n; d++) c[d] = cases[i].len * d;
            struct flamia_sm90_problem P =
                gpu_problem_of_kind(FLAMIA_SM90_MXFP8, c[cases[i].n], cases[i].n, 16, cases[i].hkv, 128);
            P.causal = 1;
            P.max_seqlen = cases[i].len;
            const size_t ws = flamia_sm90_layout_of(&P).total;
            const struct flamia_sm90_dq_plan pl = flamia_sm90_dq_plan_for_call(&P, ws);
            EXPECT(flamia_sm90_dq_chunks(&P, pl.heads) == cases[i].chunks && pl.ordered == cases[i].ordered,
                   "%dx%d over %d kv heads: the default mode's split in %d chunks (ordered %d), want %d (%d)",
                   cases[i].n, cases[i].len, cases[i].hkv, flamia_sm90_dq_chunks(&P, pl.heads), pl.ordered,
                   cases[i].chunks, cases[i].ordered);
            P.deterministic = 1;
            const struct flamia_sm90_dq_plan det = flamia_sm90_dq_plan_for_call(&P, ws);
            EXPECT(det.heads > 0 && det.ordered == cases[i].det_ordered,
                   "%dx%d over %d kv heads: the deterministic mode's split in dq_accum's room", cases[i].n, cases[i].len,
                   cases[i].hkv);
        }
        for (int i = 0; i < 2; i++) { /* without dq_room: 6 chunks of 3 heads at 16x4096 (as measured in the
                                         sixty-fifth session) */
            int32_t c[17];
            const int n = i ? 4 : 16;
            for (int d = 0; d <= n; d++) c[d] = 4096 * d;
            struct flamia_sm90_problem P = gpu_problem_of_kind(FLAMIA_SM90_MXFP8, c[n], n, 16, 16, 128);
            P.causal = 1;
            P.max_seqlen = 4096;
            P.dq_room_chunks = 0;
            flamia_sm90_set_dq_split_min_ctas(8);
            EXPECT(flamia_sm90_dq_plan_for_call(&P, flamia_sm90_layout_of(&P).total).heads == (i == 0 ? 3 : 0),
                   "%dx4096: the split without dq_room, floor 8", n);
        }
        { /* a packed batch, 8192+224x256 (16 heads): bounded from max_seqlen, 23,952 tiles a kv head, so no
             kv head fits dq_accum's room; counted from the host copy of cu_seqlens, 2,752, and the default
             mode's split takes 2 chunks of 8 kv heads (5,896 CTAs each) */
            static int32_t c[226];
            c[0] = 0;
            c[1] = 8192;
            for (int d = 1; d <= 224; d++) c[d + 1] = c[d] + 256;
            struct flamia_sm90_problem P = gpu_problem_of_kind(FLAMIA_SM90_MXFP8, c[225], 225, 16, 16, 128);
            P.causal = 1;
            P.max_seqlen = 8192;
            const struct flamia_sm90_layout Lb = flamia_sm90_layout_of(&P);
            const int bounded_heads = flamia_sm90_dq_plan_for_call(&P, Lb.total).heads;
            EXPECT(Lb.ds_tiles_kv == 23952 && bounded_heads == 0,
                   "8192+224x256 bounded: %lld tiles a kv head, the default split in %d heads a chunk", Lb.ds_tiles_kv,
                   bounded_heads);
            P.doc_tiles = flamia_sm90_doc_tiles(c, 225, 1);
            const struct flamia_sm90_dq_plan pl = flamia_sm90_dq_plan_for_call(&P, flamia_sm90_layout_of(&P).total);
            EXPECT(P.doc_tiles == 2752 && flamia_sm90_dq_chunks(&P, pl.heads) == 2 && !pl.ordered &&
                       flamia_sm90_dq_chunk_grid(&P, pl.heads) == 5896,
                   "8192+224x256 counted: %lld tiles, the default split in %d chunks (ordered %d)", P.doc_tiles,
                   flamia_sm90_dq_chunks(&P, pl.heads), pl.ordered);
        }
        { /* one chunk first (FLAMIA_SM90_DQ_ROOM_ONE_GROWTH, sixty-eighth session): 16x1024, counted, every
             kv head in one chunk for +25 MB within 1/8; without that tier 2 chunks, and the room's cap as
             a setting (FLAMIA_SM90_DQ_ROOM_GROWTH) gets the one chunk back */
            int32_t c[17];
            for (int d = 0; d <= 16; d++) c[d] = 1024 * d;
            struct flamia_sm90_problem P = gpu_problem_of_kind(FLAMIA_SM90_MXFP8, c[16], 16, 16, 16, 128);
            P.causal = 1;
            P.max_seqlen = 1024;
            P.doc_tiles = flamia_sm90_doc_tiles(c, 16, 1);
            const struct flamia_sm90_layout LJ = flamia_sm90_layout_of(&P);
            const int chunksJ = flamia_sm90_dq_chunks(&P, flamia_sm90_dq_plan_for_call(&P, LJ.total).heads);
            P.dq_room_one_growth = 0;
            const struct flamia_sm90_layout L4 = flamia_sm90_layout_of(&P);
            const int chunks4 = flamia_sm90_dq_chunks(&P, flamia_sm90_dq_plan_for_call(&P, L4.total).heads);
            P.dq_room_chunks = 1;
            const size_t total16 = flamia_sm90_layout_of(&P).total; /* the default cap: no growth */
            P.dq_room_growth = 8;
            const struct flamia_sm90_layout L1 = flamia_sm90_layout_of(&P);
            const int chunks1 = flamia_sm90_dq_chunks(&P, flamia_sm90_dq_plan_for_call(&P, L1.total).heads);
            EXPECT(chunksJ == 1 && LJ.total == L1.total && chunks4 == 2 && total16 == L4.total && chunks1 == 1 &&
                       L1.total > L4.total && (L1.total - L4.total) * 8 <= L1.dq_accum,
                   "16x1024: %d chunks in %zu bytes; without one chunk first %d in %zu bytes; one chunk asked, cap "
                   "1/8: %d chunks in %zu bytes", chunksJ, LJ.total, chunks4, L4.total, chunks1, L1.total);
        }
        { /* the long documents' path, MHA, tiles counted: logu-64k (longest 158 tiles, 205 tile pairs an SM
             a chunk) 16 chunks of 536 CTAs, ordered; logu:32768:32:16384:7 (longest 108, 76 an SM: that CTA
             would set each chunk's time) none; 12x1024 (8 tiles) not this path: since the room's one chunk,
             1 chunk of 1,728 CTAs in the grid's order (none before it) */
            static const int logu64k[] = {644, 266, 4260, 1092, 55, 3420, 612, 333, 161, 197, 46, 18293,
                                          66, 125, 976, 20103, 124, 1142, 886, 58, 140, 1162, 9359, 2016},
                             logu32k[] = {2418, 978, 95, 4114, 10347, 713, 13807, 296},
                             mha12[] = {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024};
            flamia_sm90_set_dq_split_min_ctas(-1); /* the default floors (the block above set 8) */
            const struct { const char *name; const int *lens; int n, chunks, ordered; } longs[] = {
                {"logu-64k", logu64k, 24, 16, 1}, {"logu:32768:32:16384:7", logu32k, 8, 0, 0}, {"12x1024", mha12, 12, 1, 0}};
            for (int i = 0; i < 3; i++) {
                int32_t c[25];
                cu_from_lens(longs[i].lens, longs[i].n, c);
                struct flamia_sm90_problem P = gpu_problem_of_kind(FLAMIA_SM90_MXFP8, c[longs[i].n], longs[i].n, 16, 16, 128);
                P.causal = 1;
                P.max_seqlen = max_len(c, longs[i].n);
                P.doc_tiles = flamia_sm90_doc_tiles(c, longs[i].n, 1);
                const struct flamia_sm90_dq_plan pl = flamia_sm90_dq_plan_for_call(&P, flamia_sm90_layout_of(&P).total);
                EXPECT(flamia_sm90_dq_chunks(&P, pl.heads) == longs[i].chunks && pl.ordered == longs[i].ordered,
                       "%s: the default mode's split in %d chunks (ordered %d), want %d", longs[i].name,
                       flamia_sm90_dq_chunks(&P, pl.heads), pl.ordered, longs[i].chunks);
            }
        }
        flamia_sm90_set_dq_split_min_ctas(-1);
        flamia_sm90_set_dq_split_max_chunks(FLAMIA_SM90_DQ_SPLIT_DEFAULT_CHUNKS);
    }
    size_t fp8 = 0, bf16 = 0; /* 16 x 4096 tokens, 16 + 16 heads, d = 128: the figures docs/cuda-api.md gives */
    check_shape("16x4096", 65536, 16, 4096, 0, 16, 16, 128, FLAMIA_SM90_MXFP8, &fp8);
    check_shape("16x4096", 65536, 16, 4096, 0, 16, 16, 128, FLAMIA_SM90_BF16, &bf16);
    size_t fp8_1k = 0; /* 16 x 1024, counted (576 tile pairs a kv head; bounded, 648): the room grown for one chunk */
    check_shape("16x1024", 16384, 16, 1024, 576, 16, 16, 128, FLAMIA_SM90_MXFP8, &fp8_1k);
    printf("workspace at 16x4096, 16 + 16 heads, d = 128: mxfp8 %.2f GB, bf16 %.2f GB\n", fp8 * 1e-9, bf16 * 1e-9);
    /* the calls' layout: with the host copy, 16x1024's room for one chunk (+25 MB) moves every region
       after dq_accum, so a layout rebuilt from the sizes reads the wrong bytes there; bounded from
       max_seqlen alone it gets no room; bf16 has no split dQ, so no room */
    EXPECT(check_call_layout("mxfp8", 16, 1024, 16, 16, 1) && check_call_layout("mxfp8-exact", 16, 1024, 16, 16, 1),
           "16x1024, counted: the sizes alone should miss the room the calls grow");
    EXPECT(!check_call_layout("mxfp8", 16, 1024, 16, 16, 0), "16x1024, bounded: a room the rule does not give");
    EXPECT(!check_call_layout("bf16", 16, 1024, 16, 16, 1), "16x1024 bf16: a room without the split dQ");
    EXPECT(check_call_layout("mxfp8", 16, 4096, 16, 16, 0), "16x4096: the room for 4 chunks (+66 MB) missed");
    check_call_layout("mxfp8", 16, 1024, 16, 4, 1);
    { /* refused: nothing written */
        int32_t cu[2] = {0, 128};
        flamia_recipe rec;
        FL(flamia_recipe_preset("mxfp8", &rec));
        const flamia_shape bad = {128, 1, cu, 2, 2, 96, 1, 0.0f, 128, NULL};
        struct flamia_sm90_layout L;
        memset(&L, 0x5A, sizeof L);
        const size_t poison = L.total;
        EXPECT(flamia_sm90_layout_for_call(&rec, &bad, &L) != FLAMIA_OK && L.total == poison,
               "head_dim 96: flamia_sm90_layout_for_call must refuse and write nothing");
        EXPECT(flamia_sm90_layout_for_call(&rec, &bad, NULL) == FLAMIA_ERR_INVALID, "a NULL layout must be refused");
    }
    EXPECT(room_grown > room_one && room_one > 0, "layouts that grew dq_room: %d, for one chunk %d", room_grown, room_one);
    if (failures) {
        fprintf(stderr, "test_workspace_layout: %d failures\n", failures);
        return 1;
    }
    printf("test_workspace_layout: ok (%d random shapes x 3 kinds, %d layouts with dq_room, %d of them for one chunk; "
           "split dQ over 300 random packings: turns %d, chunks of kv heads %d, every head at once %d)\n",
           shapes, room_grown, room_one, split_forms[0], split_forms[1], split_forms[2]);
    return 0;
}
