/*
 * flamia.h - the one public header of libflamia (FLAMIA-H).
 *
 * Packed, causally safe, low-precision (FP8) training attention for NVIDIA
 * Hopper, plus the CPU reference that defines every recipe as a function.
 * Pure C (C11), C ABI.  docs/numerics.md states each recipe operand by operand;
 * this header only names the knobs.
 *
 * Conventions
 *  - Packed layout: tokens of all documents back to back, no padding.
 *    Document d owns tokens [cu_seqlens[d], cu_seqlens[d+1]).
 *  - Tensors are [token][head][dim], row-major, contiguous.  lse is
 *    [token][head_q] (natural log, like FlashAttention).
 *  - GQA: query head h reads key/value head h / (heads_q / heads_kv).
 *  - Every function returns a flamia_status; on failure nothing is written to
 *    the outputs and flamia_last_error() says why.  Nothing aborts.
 */
#ifndef FLAMIA_H
#define FLAMIA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLAMIA_VERSION_MAJOR 0
#define FLAMIA_VERSION_MINOR 1

/* ------------------------------------------------------------------ status */
typedef enum {
    FLAMIA_OK = 0,
    FLAMIA_ERR_INVALID,     /* bad argument: NULL, shape, layout, non-finite input */
    FLAMIA_ERR_UNSUPPORTED, /* valid but not implemented here (head dim, GPU, recipe) */
    FLAMIA_ERR_CUDA,        /* a CUDA runtime call failed */
    FLAMIA_ERR_NOMEM        /* host allocation failed */
} flamia_status;

const char *flamia_status_string(flamia_status s);
/* Detail of the last failure on this thread ("" if none). Valid until the
 * next libflamia call on the same thread. */
const char *flamia_last_error(void);
const char *flamia_version_string(void); /* "flamia X.Y.Z (cuda sm_90a)" or "(cpu only)" */

/* ----------------------------------------------------------------- formats */
/* OCP E4M3 (FN): bias 7, max 448, subnormals, no infinities.
 * encode: round to nearest even, saturate to +-448 (also +-inf), NaN -> 0x7F. */
uint8_t flamia_e4m3_encode(float x);
float flamia_e4m3_decode(uint8_t code); /* 0x7F / 0xFF decode to NaN */
/* E2M1 (FP4) in the low nibble: {0,.5,1,1.5,2,3,4,6}, RNE, saturate to +-6,
 * NaN -> 0x7 (+6: the format has no NaN). */
uint8_t flamia_e2m1_encode(float x);
float flamia_e2m1_decode(uint8_t code);

typedef enum {
    FLAMIA_EXP_CEIL = 0,   /* e = ceil(log2(amax / 448)): nothing clamps (our default) */
    FLAMIA_EXP_FLOOR_OCP   /* e = floor(log2(amax)) - 8 (OCP MX reference): may clamp */
} flamia_exp_rule;
/* Power-of-two block exponent for an E4M3 group with max |x| = amax:
 * scale = 2^e, codes = e4m3(x / 2^e). Clamped to [-127, 127]; amax == 0 -> -127.
 * amax must be finite and >= 0 (else returns 127). */
int flamia_block_exponent(float amax, flamia_exp_rule rule);
/* UE8M0 scale byte: e + 127 (e in [-127,127]); 0xFF is NaN. */
uint8_t flamia_ue8m0_encode(int e);
float flamia_ue8m0_decode(uint8_t code);

/* ----------------------------------------------------------------- recipes */
typedef enum {
    FLAMIA_FMT_FP32 = 0, /* no quantization */
    FLAMIA_FMT_BF16,     /* round to nearest even to bfloat16 */
    FLAMIA_FMT_E4M3,     /* E4M3 codes with power-of-two (UE8M0) scales */
    FLAMIA_FMT_NVFP4     /* E2M1 codes, E4M3 scale per 16 dims, power-of-two scale per group */
} flamia_format;

typedef enum {
    FLAMIA_GRAN_TENSOR = 0,  /* one scale for the whole operand (all tokens, all heads) */
    FLAMIA_GRAN_TOKEN_BLOCK, /* token_block consecutive tokens of one document x head dim, per head */
    FLAMIA_GRAN_TOKEN        /* one token x head dim, per head */
} flamia_granularity;

typedef struct {
    flamia_format format;
    flamia_granularity granularity; /* ignored for FP32 / BF16 */
    flamia_exp_rule exp_rule;       /* ignored for FP32 / BF16 */
} flamia_operand_quant;

/* How the dS exponent is chosen (the dS underflow ablation varies this). */
typedef enum {
    FLAMIA_DS_BLOCK32 = 0, /* 32x32 square block (query block x key block), its own max */
    FLAMIA_DS_ROW32,       /* 1 query row x 32 keys: never depends on later rows (exact) */
    FLAMIA_DS_TILE,        /* tile_q x tile_k tile max (too large, ablation) */
    FLAMIA_DS_ROW,         /* one query row over all its keys (too large, ablation) */
    FLAMIA_DS_TENSOR,      /* whole dS of the head (too large, ablation) */
    FLAMIA_DS_FIXED        /* fixed exponent ds_fixed_exponent (ablation) */
} flamia_ds_scale;

typedef enum {
    FLAMIA_EXP2_EXACT = 0,     /* IEEE exp2 (GPU: ex2.approx.ftz, same in fwd and bwd) */
    FLAMIA_EXP2_SCHRAUDOLPH,   /* bit-level approximation (FP32 bit field) on every key: INFERENCE ONLY,
                                * refused in training */
    FLAMIA_EXP2_SCHRAUDOLPH_MIXED, /* the paper's 8-bit P forward: the approximation in BF16's bit
                                * field on 5 of every 8 key pairs (a document's keys j with
                                * (j / 2) mod 8 < 5), exact on the rest (docs/numerics.md 3.3):
                                * INFERENCE ONLY, refused in training; CPU reference only */
    FLAMIA_EXP2_MITCHELL       /* the paper's 4-bit P forward (Mitchell-P): 2^floor(u) (1 + frac(u))
                                * written into FP32's bits, no offset, on every key: INFERENCE ONLY,
                                * refused in training; CPU reference only */
} flamia_exp_mode;

/* What the forward's row sum l (softmax's normalizer, and lse) adds up (docs/numerics.md 3.4). */
typedef enum {
    FLAMIA_ROWSUM_EXPONENTIALS = 0, /* the unquantized exponentials (the default, as attention
                                     * kernels commonly do) */
    FLAMIA_ROWSUM_P_VALUES          /* the values P V uses (P's quantized values), so each row of
                                     * P / l sums to one and softmax's gradient keeps its zero row
                                     * sums (the CPU reference and the kernels; preset names
                                     * "PRESET-lsum") */
} flamia_row_sum;

/* A recipe: every quantization decision of the forward and the backward.
 * Complete type: keep one on the stack, fill it with flamia_recipe_preset()
 * and change knobs as needed. docs/numerics.md defines the function. */
typedef struct {
    char name[32];                /* preset it came from (informational) */
    flamia_operand_quant q_score; /* Q as used in S = Q K^T */
    flamia_operand_quant k_score; /* K as used in S = Q K^T */
    flamia_operand_quant q;       /* Q as used in dK = dS^T Q */
    flamia_operand_quant k;       /* K as used in dQ = dS K */
    flamia_operand_quant v;       /* V in O = P V and dP = dO V^T */
    flamia_operand_quant dout;    /* dO in dP = dO V^T, dV = P^T dO and D = rowsum(dO * O) */
    flamia_format p_format;       /* P: FP32, BF16 or E4M3 (relative to the row max); NVFP4 (4-bit P,
                                   * an E4M3 scale per row and 16 keys) is inference-only, CPU only */
    int p_offset_log2;            /* E4M3 P holds exp2(s - m + p_offset_log2); 8 uses E4M3's range
                                   * (NVFP4 P: its scales hold amax16 2^p_offset_log2 / 6) */
    flamia_format ds_format;      /* dS: FP32, BF16 or E4M3 */
    flamia_ds_scale ds_scale;     /* dS exponent granularity */
    flamia_exp_rule ds_exp_rule;  /* dS exponent rule */
    int ds_fixed_exponent;        /* used with FLAMIA_DS_FIXED */
    int token_block;              /* tokens per scale block (32) */
    int tile_q, tile_k;           /* query/key tile (128/128): fixes the online-softmax frames */
    int hadamard;                 /* 1: rotate Q, K by the normalized Hadamard of head dim */
    flamia_exp_mode exp_mode;     /* exponential used for P */
    flamia_row_sum row_sum;       /* what l adds up (appended in 0.1: sizeof grew) */
} flamia_recipe;

/* Presets: "bf16" "mxfp8" "mxfp8-exact" "nvfp4" "fp8-tensor" "mx-floor", and each of them
 * as "PRESET-lsum": row_sum = FLAMIA_ROWSUM_P_VALUES (docs/numerics.md 3.4).
 * Returns FLAMIA_ERR_INVALID for an unknown name (out untouched). */
flamia_status flamia_recipe_preset(const char *name, flamia_recipe *out);
/* NULL-terminated list of preset names, in a stable order. */
const char *const *flamia_recipe_preset_names(void);
/* Checks a hand-edited recipe; training = 1 also refuses inference-only knobs. */
flamia_status flamia_recipe_validate(const flamia_recipe *r, int training);

/* ------------------------------------------------------------------ shapes */
typedef struct {
    int total_tokens;          /* T: packed tokens */
    int num_docs;              /* documents in the pack */
    const int32_t *cu_seqlens; /* [num_docs+1]: 0 = c[0] < c[1] < ... < c[num_docs] = T.
                                  Host pointer for CPU calls, device pointer for CUDA calls. */
    int heads_q, heads_kv;     /* heads_q % heads_kv == 0 */
    int head_dim;              /* 64 or 128 */
    int causal;                /* 1: causal inside each document; never across documents */
    float softmax_scale;       /* > 0; 0 means 1/sqrt(head_dim) */
    int max_seqlen;            /* CUDA calls: longest document (host-known); CPU ignores it */
    const int32_t *cu_seqlens_host; /* CUDA calls, optional (NULL: not given): a host copy of
                                  cu_seqlens, the same offsets. Read (and checked) when a call is
                                  enqueued; with it the backward sizes and plans its split dQ by the
                                  documents' real tiles instead of a bound from max_seqlen, so packed
                                  batches take that faster path too (docs/cuda-api.md). Pass the same
                                  shape to flamia_cuda_workspace_size and the calls. CPU calls ignore it. */
} flamia_shape;

/* Validates a host-side shape (cu_seqlens read on the host). */
flamia_status flamia_shape_validate(const flamia_shape *s);

/* ---------------------------------------------------------- CPU reference */
/* Quantized attention exactly as the recipe defines it (docs/numerics.md).
 * q [T][Hq][D], k, v [T][Hkv][D]; o [T][Hq][D]; lse [T][Hq] (natural log). */
flamia_status flamia_ref_forward(const flamia_recipe *r, const flamia_shape *s, const float *q,
                                 const float *k, const float *v, float *o, float *lse);
/* dout [T][Hq][D] -> dq [T][Hq][D], dk, dv [T][Hkv][D] (summed over each GQA group). */
flamia_status flamia_ref_backward(const flamia_recipe *r, const flamia_shape *s, const float *q,
                                  const float *k, const float *v, const float *o,
                                  const float *lse, const float *dout, float *dq, float *dk,
                                  float *dv);

/* Diagnostics of one reference backward (optional out-param of _ex). */
typedef struct {
    double ds_nonzero;    /* dS entries that were nonzero before quantization */
    double ds_flushed;    /* ... of those, quantized to zero */
    double ds_norm_err;   /* ||dS_q - dS||_F / ||dS||_F over all heads */
    double p_codes;       /* P codes compared forward (running frame) vs backward (final frame) */
    double p_mismatch;    /* ... that differ (only E4M3 subnormals can: docs/numerics.md 5) */
    double p_mismatch_unexplained; /* ... that differ outside that documented class: must be 0 */
} flamia_ref_stats;
flamia_status flamia_ref_backward_ex(const flamia_recipe *r, const flamia_shape *s,
                                     const float *q, const float *k, const float *v,
                                     const float *o, const float *lse, const float *dout,
                                     float *dq, float *dk, float *dv, flamia_ref_stats *stats);

/* Debug: the P codes of one query head's forward (docs/numerics.md 3.3), for comparing
 * exponentials or P formats. For every pair the forward evaluates (same document; causal:
 * j <= i), at [i * T + j] (global token indices): the E4M3 code of P in its tile frame
 * (p_format E4M3, offset applied) or the E2M1 nibble of a 4-bit P (NVFP4; its scales are
 * not returned); 0xFF elsewhere. codes: [T][T] bytes, host. P formats without codes (FP32,
 * BF16) are refused (FLAMIA_ERR_UNSUPPORTED); codes is untouched on failure. v is not needed. */
flamia_status flamia_ref_p_codes(const flamia_recipe *r, const flamia_shape *s, const float *q,
                                 const float *k, int head, uint8_t *codes);

/* FP64 textbook attention (no quantization): the ground truth. */
flamia_status flamia_ref64_forward(const flamia_shape *s, const float *q, const float *k,
                                   const float *v, double *o, double *lse);
flamia_status flamia_ref64_backward(const flamia_shape *s, const float *q, const float *k,
                                    const float *v, const float *dout, double *dq, double *dk,
                                    double *dv);

/* --------------------------------------------------------- CUDA (sm_90a) */
/* Device pointers, BF16 tensors (uint16 bit patterns) in the layouts above,
 * shape.cu_seqlens a device pointer. No allocation, no host synchronization:
 * the calls can be captured in a CUDA graph. The workspace carries the
 * quantized operands and softmax statistics from quantize to forward to
 * backward: pass the same one to all three. Built without CUDA, or on a GPU
 * that is not sm_90, they return FLAMIA_ERR_UNSUPPORTED. */
int flamia_cuda_available(void); /* 1 when built with CUDA and an sm_90 GPU is visible */
flamia_status flamia_cuda_workspace_size(const flamia_recipe *r, const flamia_shape *s,
                                         size_t *bytes);
flamia_status flamia_cuda_quantize(const flamia_recipe *r, const flamia_shape *s,
                                   const void *q, const void *k, const void *v,
                                   void *workspace, size_t workspace_bytes, void *stream);
flamia_status flamia_cuda_forward(const flamia_recipe *r, const flamia_shape *s,
                                  void *workspace, size_t workspace_bytes, void *o, float *lse,
                                  void *stream);
flamia_status flamia_cuda_backward(const flamia_recipe *r, const flamia_shape *s,
                                   void *workspace, size_t workspace_bytes, const void *o,
                                   const float *lse, const void *dout, void *dq, void *dk,
                                   void *dv, void *stream);
/* Non-finite inputs. The E4M3 recipes refuse NaN and Inf in Q, K, V and dO, but a call
 * cannot see device data without synchronizing, so the kernels record them in the
 * workspace instead (docs/cuda-api.md "Non-finite inputs"): this reads that record.
 * FLAMIA_OK when every element of Q, K, V of the last flamia_cuda_quantize (or train step)
 * on this workspace, and of dO of every backward since, was finite; FLAMIA_ERR_INVALID,
 * naming the tensors, when one was not (those calls' outputs are then meaningless). The
 * bf16 recipe never records (non-finite values propagate as in IEEE arithmetic).
 * Synchronizes `stream` (waits for the calls enqueued on it): call it outside graph
 * capture (a capturing stream is refused, FLAMIA_ERR_INVALID), e.g. after a step when
 * debugging a divergence. */
flamia_status flamia_cuda_check_finite(const void *workspace, size_t workspace_bytes, void *stream);
/* Deterministic dQ (off by default). dQ sums contributions from every key tile of a
 * document; by default they are reduce-added in FP32 in the order the CTAs
 * finish, so dQ can differ between runs in its last bits (O, lse, dK, dV never do; nor dQ
 * on shapes where the default mode sums it in a second kernel, docs/cuda-api.md). On:
 * the backward adds them in key-tile order, so every output is bit-identical run to run.
 * With the mode on, flamia_cuda_workspace_size asks for more workspace for the FP8 recipes
 * (about Hq x 17 KB per causal 128 x 128 tile pair, e.g. 2.3 GB at 16 x 4096 tokens, 16
 * heads; past 16 GB only as many kv heads as fit, docs/cuda-api.md): given that much, the
 * backward stores its dS codes and sums dQ in a second kernel, in chunks of as many kv heads
 * as the workspace holds (a smaller one still works, same result: the workspace of the mode
 * off lends its FP32 dQ accumulator's room, where one kv head's share fits there); only
 * where no kv head fits do the key tiles take turns instead (the speed of each:
 * docs/cuda-api.md).
 * Process-wide; applies to calls enqueued after it returns, and to workspace sizes asked
 * after it (a captured graph keeps the mode it was captured with). FLAMIA_ERR_UNSUPPORTED
 * without CUDA. */
flamia_status flamia_cuda_set_deterministic(int on);
int flamia_cuda_deterministic(void); /* the current setting, 0 or 1 */
/* The FP8 forward's O accumulation (docs/numerics.md 8). The FP8 tensor core accumulates
 * P V below FP32 accuracy, dropping the low bits of small new terms against a large running
 * O, so O comes out biased low on long rows where V has a nonzero mean. The forward adds its
 * accumulator into an FP32 sum every key_tiles key tiles of 128 and restarts it: 4 (the
 * default) leaves -0.35 % at document positions 2048-8191 with V = 1, for +4 % of the
 * forward's time at 16x4096 (H200; an addition due right before an item's last key tile is
 * left to the final one); 2, 8, 16, 32, 64 trade the other way; 0 never adds (the tensor core
 * alone: -5 % there). Anything else, 1 included (the kernel adds after even key tiles only):
 * FLAMIA_ERR_INVALID, setting unchanged.
 * Process-wide; read when a forward is enqueued (a captured graph keeps the value it was
 * captured with). FLAMIA_ERR_UNSUPPORTED without CUDA. */
flamia_status flamia_cuda_set_o_sum_interval(int key_tiles);
int flamia_cuda_o_sum_interval(void); /* the current setting (0 without CUDA) */
/* quantize -> forward -> backward, what a framework calls per layer in a benchmark */
flamia_status flamia_cuda_train_step(const flamia_recipe *r, const flamia_shape *s,
                                     const void *q, const void *k, const void *v,
                                     const void *dout, void *o, float *lse, void *dq, void *dk,
                                     void *dv, void *workspace, size_t workspace_bytes,
                                     void *stream);

/* Debug: forward/backward P-code consistency (docs/numerics.md 5, docs/cuda-api.md).
 * Small problems only: total_tokens <= 4096 (else FLAMIA_ERR_UNSUPPORTED); E4M3 recipes
 * only (mxfp8, mxfp8-exact; bf16 has no P codes: FLAMIA_ERR_UNSUPPORTED). Needs the
 * workspace that flamia_cuda_quantize and flamia_cuda_forward filled, and that forward's
 * o and lse; dout as for flamia_cuda_backward. Runs debug instantiations of the forward
 * and backward kernels and writes, for every query head h and every pair the kernels
 * evaluate (same document, causal: j <= i), at [(h T + i) T + j] (global token indices):
 *   fwd_codes  the E4M3 code the forward fed its P V product (its tile frame m_i(n),
 *              V's exponent folded in: numerics.md 3.5 GPU latitude),
 *   bwd_codes  the code the backward recomputed (final frame m_i),
 * 0xFF where no pair is evaluated. fwd_frames (may be NULL): the forward's row frame
 * m_i(n) after key tile n, at [(h T + i) ntile + n], ntile = ceil(max_seqlen / 128);
 * NaN where none. All device pointers, [heads_q][T][T] bytes each. o, lse, workspace
 * and the gradients stay untouched except the backward's own workspace regions. */
flamia_status flamia_cuda_debug_p_codes(const flamia_recipe *r, const flamia_shape *s,
                                        void *workspace, size_t workspace_bytes, const void *o,
                                        const float *lse, const void *dout, uint8_t *fwd_codes,
                                        uint8_t *bwd_codes, float *fwd_frames, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* FLAMIA_H */
