/* recipes.c - named presets and recipe validation (docs/numerics.md, section "Recipes"). */
#include <stdio.h>
#include <string.h>

#include "flamia_internal.h"

static const char *const preset_names[] = {"bf16",       "mxfp8",    "mxfp8-exact", "nvfp4",
                                           "fp8-tensor", "mx-floor", NULL};

const char *const *flamia_recipe_preset_names(void) { return preset_names; }

static flamia_operand_quant oq(flamia_format f, flamia_granularity g, flamia_exp_rule e) {
    flamia_operand_quant q = {f, g, e};
    return q;
}

/* mxfp8: the default; every other preset is this with a few knobs changed. */
static flamia_recipe mxfp8(void) {
    flamia_recipe r;
    memset(&r, 0, sizeof r);
    flamia_operand_quant blk = oq(FLAMIA_FMT_E4M3, FLAMIA_GRAN_TOKEN_BLOCK, FLAMIA_EXP_CEIL);
    r.q_score = r.k_score = r.q = r.k = r.v = r.dout = blk;
    r.p_format = FLAMIA_FMT_E4M3;
    r.p_offset_log2 = 8;
    r.ds_format = FLAMIA_FMT_E4M3;
    r.ds_scale = FLAMIA_DS_BLOCK32;
    r.ds_exp_rule = FLAMIA_EXP_CEIL;
    r.token_block = 32;
    r.tile_q = 128;
    r.tile_k = 128;
    r.hadamard = 0;
    r.exp_mode = FLAMIA_EXP2_EXACT;
    r.row_sum = FLAMIA_ROWSUM_EXPONENTIALS;
    return r;
}

/* The preset called `name` into *r; 0, or -1 for no such preset. */
static int base_preset(const char *name, flamia_recipe *r) {
    *r = mxfp8();
    if (!strcmp(name, "mxfp8")) {
    } else if (!strcmp(name, "bf16")) {
        flamia_operand_quant b = oq(FLAMIA_FMT_BF16, FLAMIA_GRAN_TOKEN, FLAMIA_EXP_CEIL);
        r->q_score = r->k_score = r->q = r->k = r->v = r->dout = b;
        r->p_format = FLAMIA_FMT_BF16;
        r->p_offset_log2 = 0;
        r->ds_format = FLAMIA_FMT_BF16;
    } else if (!strcmp(name, "mxfp8-exact")) {
        flamia_operand_quant t = oq(FLAMIA_FMT_E4M3, FLAMIA_GRAN_TOKEN, FLAMIA_EXP_CEIL);
        r->q_score = r->k_score = r->q = r->k = r->v = r->dout = t;
        r->ds_scale = FLAMIA_DS_ROW32;
    } else if (!strcmp(name, "nvfp4")) {
        r->q_score = r->k_score = oq(FLAMIA_FMT_NVFP4, FLAMIA_GRAN_TOKEN_BLOCK, FLAMIA_EXP_CEIL);
    } else if (!strcmp(name, "fp8-tensor")) {
        flamia_operand_quant t = oq(FLAMIA_FMT_E4M3, FLAMIA_GRAN_TENSOR, FLAMIA_EXP_CEIL);
        r->q_score = r->k_score = r->q = r->k = r->v = r->dout = t;
        r->ds_scale = FLAMIA_DS_TENSOR;
    } else if (!strcmp(name, "mx-floor")) {
        flamia_operand_quant f = oq(FLAMIA_FMT_E4M3, FLAMIA_GRAN_TOKEN_BLOCK, FLAMIA_EXP_FLOOR_OCP);
        r->q_score = r->k_score = r->q = r->k = r->v = r->dout = f;
        r->ds_exp_rule = FLAMIA_EXP_FLOOR_OCP;
    } else {
        return -1;
    }
    return 0;
}

/* PRESET-lsum: the preset with l over P's rounded values (docs/numerics.md 3.4) */
static const char kLsum[] = "-lsum";

flamia_status flamia_recipe_preset(const char *name, flamia_recipe *out) {
    if (!name || !out) return flamia_fail(FLAMIA_ERR_INVALID, "flamia_recipe_preset: NULL argument");
    const size_t n = strlen(name), k = sizeof kLsum - 1;
    const int lsum = n > k && !strcmp(name + n - k, kLsum);
    char base[sizeof out->name]; /* the name without its suffix */
    flamia_recipe r;
    int known = 0;
    if (n < sizeof base) {
        snprintf(base, sizeof base, "%.*s", (int)(lsum ? n - k : n), name);
        known = base_preset(base, &r) == 0;
    }
    if (!known)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "unknown recipe preset '%s' (known: bf16 mxfp8 mxfp8-exact nvfp4 "
                           "fp8-tensor mx-floor, each also as PRESET-lsum)", name);
    if (lsum) r.row_sum = FLAMIA_ROWSUM_P_VALUES;
    snprintf(r.name, sizeof r.name, "%s", name);
    *out = r;
    return FLAMIA_OK;
}

static flamia_status check_operand(const char *what, flamia_operand_quant o, int allow_nvfp4) {
    if (o.format < FLAMIA_FMT_FP32 || o.format > FLAMIA_FMT_NVFP4)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: %s has an unknown format %d", what, (int)o.format);
    if (o.format == FLAMIA_FMT_NVFP4 && !allow_nvfp4)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "recipe: %s cannot be NVFP4 (only Q and K of the score product)", what);
    if (o.granularity < FLAMIA_GRAN_TENSOR || o.granularity > FLAMIA_GRAN_TOKEN)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: %s has an unknown granularity %d", what, (int)o.granularity);
    if (o.exp_rule != FLAMIA_EXP_CEIL && o.exp_rule != FLAMIA_EXP_FLOOR_OCP)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: %s has an unknown exponent rule %d", what, (int)o.exp_rule);
    return FLAMIA_OK;
}

flamia_status flamia_recipe_validate(const flamia_recipe *r, int training) {
    if (!r) return flamia_fail(FLAMIA_ERR_INVALID, "recipe: NULL");
    flamia_status st;
    if ((st = check_operand("Q (score)", r->q_score, 1)) || (st = check_operand("K (score)", r->k_score, 1)) ||
        (st = check_operand("Q", r->q, 0)) || (st = check_operand("K", r->k, 0)) ||
        (st = check_operand("V", r->v, 0)) || (st = check_operand("dO", r->dout, 0)))
        return st;
    if (r->p_format < FLAMIA_FMT_FP32 || r->p_format > FLAMIA_FMT_NVFP4)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "recipe: P format must be FP32, BF16, E4M3 or NVFP4");
    if (training && r->p_format == FLAMIA_FMT_NVFP4)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "recipe: a 4-bit P (NVFP4) is inference-only here: no backward rebuilds it "
                           "(use E4M3 or BF16 P in training)");
    if (r->ds_format == FLAMIA_FMT_NVFP4 || r->ds_format < FLAMIA_FMT_FP32 || r->ds_format > FLAMIA_FMT_E4M3)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "recipe: dS format must be FP32, BF16 or E4M3");
    if (r->ds_scale < FLAMIA_DS_BLOCK32 || r->ds_scale > FLAMIA_DS_FIXED)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: unknown dS scale rule %d", (int)r->ds_scale);
    if (r->p_offset_log2 < 0 || r->p_offset_log2 > 8)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: p_offset_log2 %d outside [0, 8] (E4M3 max 448)", r->p_offset_log2);
    if (r->token_block != 32)
        return flamia_fail(FLAMIA_ERR_UNSUPPORTED, "recipe: token_block must be 32 (got %d)", r->token_block);
    if (r->tile_q <= 0 || r->tile_k <= 0 || r->tile_k % r->token_block || r->tile_q % r->token_block)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: tiles %dx%d must be positive multiples of the token block",
                           r->tile_q, r->tile_k);
    if (r->row_sum != FLAMIA_ROWSUM_EXPONENTIALS && r->row_sum != FLAMIA_ROWSUM_P_VALUES)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: unknown row-sum rule %d", (int)r->row_sum);
    if (r->exp_mode < FLAMIA_EXP2_EXACT || r->exp_mode > FLAMIA_EXP2_MITCHELL)
        return flamia_fail(FLAMIA_ERR_INVALID, "recipe: unknown exp mode %d", (int)r->exp_mode);
    if (training && r->exp_mode != FLAMIA_EXP2_EXACT)
        return flamia_fail(FLAMIA_ERR_INVALID,
                           "recipe: approximate exponentials are inference-only: the backward must rebuild "
                           "the forward's P exactly (use FLAMIA_EXP2_EXACT in training)");
    return FLAMIA_OK;
}
