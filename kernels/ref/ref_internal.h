/* ref_internal.h - pieces shared by the CPU reference sources (not public). */
#ifndef FLAMIA_REF_INTERNAL_H
#define FLAMIA_REF_INTERNAL_H

#include "flamia_internal.h"

/* Quantizes one operand x [T][heads][D] by spec into its exact dequantized values xq
 * (docs/numerics.md section 2): groups never cross a document boundary. */
void flamia_ref_quantize_operand(const flamia_operand_quant *spec, const flamia_shape *s,
                                 int heads, int token_block, const float *x, float *xq);
/* x[T][heads][D] <- x * H_D / sqrt(D) (Sylvester Hadamard, FP32 butterflies). */
void flamia_ref_hadamard(float *x, size_t rows, int D);
/* Index of the first non-finite element of x[n], or -1. */
long flamia_ref_first_nonfinite(const float *x, size_t n);
/* Quantizes one probability value per the recipe's P format (value in its frame). */
float flamia_ref_p_quantize(const flamia_recipe *r, float p);
/* P of one row's keys [0, n) (a document's keys from its first; pf: each in its tile frame,
 * unquantized) in the recipe's P format: pq the values P V uses; codes (NULL, and must be for
 * FP32 / BF16 P) their codes, E4M3 bytes (offset applied) or NVFP4's E2M1 nibbles (16-key
 * groups from key 0; a group never straddles a tile since tile_k is a multiple of 32). */
void flamia_ref_p_quantize_row(const flamia_recipe *r, const float *pf, int n, float *pq, uint8_t *codes);
/* exp2(u) as the recipe evaluates it for the document's key `key` (exact, or an inference-only
 * approximation; the mixed one depends on the key). */
float flamia_ref_exp2(const flamia_recipe *r, float u, int key);

/* Dot products of n <= FLAMIA_REF_DOT_ROWS consecutive rows of a ([T][Ha][D], head ha, tokens
 * d0 + i0 ...) with rows d0 .. d0 + jmax - 1 of b ([T][Hb][D], head hb): scale x the FP64 sum
 * over d ascending, into outf (rounded to FP32) or outd, [r * ld + j]. The same bits as a
 * row-by-row loop (tile_dots.c). */
enum { FLAMIA_REF_DOT_ROWS = 32 };
void flamia_ref_tile_dots(const float *a, int Ha, int ha, const float *b, int Hb, int hb, int D, int d0, int i0,
                          int n, int jmax, double scale, float *outf, double *outd, size_t ld);

/* Deterministic parallel-for: fn(ctx, task, worker) for task in [0, ntasks); task t
 * runs on worker t % nworkers. nworkers from flamia_ref_threads (<= 64). */
typedef void (*flamia_task_fn)(void *ctx, int task, int worker);
int flamia_ref_threads(int ntasks);
void flamia_ref_parallel_for(int ntasks, int nworkers, flamia_task_fn fn, void *ctx);

#endif
