/*
 * tiny_lm.h - a small byte-level causal transformer whose attention is the library's CPU
 * reference (flamia_ref_forward / flamia_ref_backward) of a chosen recipe, for the training
 * experiments (experiments/training/main.c). Everything else is plain FP32 C.
 *
 * Model: byte embedding (tied with the output) + learned position-in-document embedding;
 * per layer  h += Wo attn(RMSNorm(h) Wqkv);  h += W2 relu(RMSNorm(h) W1);  a final RMSNorm.
 * Packed documents: one row of tokens with cu_seqlens, causal inside each document, and
 * positions counted from each document's start. The loss is the mean cross entropy of every
 * token that has a next token in its document.
 *
 * The forward's and the backward's attention take separate recipes, so a training step can
 * recompute P unlike the forward did (the controlled mismatches); the backward gets the
 * forward's O and lse, as a framework passes them.
 */
#ifndef FLAMIA_TINY_LM_H
#define FLAMIA_TINY_LM_H

#include <stddef.h>
#include <stdint.h>

#include "flamia.h"

typedef struct {
    int layers, heads, head_dim; /* width d = heads * head_dim; head_dim 64 or 128 */
    int ffn;                     /* hidden width of the MLP */
    int max_pos;                 /* longest document (position table rows) */
} tlm_config;

typedef struct {
    tlm_config c;
    int d;
    size_t n;        /* parameters */
    float *w, *g;    /* parameters, gradients (same layout) */
    float *m, *v;    /* Adam moments */
    long t;          /* Adam steps taken */
} tlm;

enum { TLM_VOCAB = 256 };

/* Allocates and initializes (scaled normal, seeded); 0 or -1 (out of memory). */
int tlm_init(tlm *m, const tlm_config *c, uint64_t seed);
void tlm_free(tlm *m);

/* One packed row: tokens[T], documents by cu_seqlens[num_docs + 1] (host). loss: mean
 * next-byte cross entropy (nats). The attention's forward runs recipe rf; with want_grad the
 * gradients go into m->g (overwritten) through a backward with recipe rb. A NULL recipe is the
 * FP64 textbook attention (flamia_ref64_*: no quantization, no BF16 rounding), the "exact
 * attention" of a dual-mode evaluation. Returns the library's status of a refused recipe
 * (flamia_last_error says why), or FLAMIA_ERR_INVALID / FLAMIA_ERR_NOMEM for a document
 * longer than max_pos / no memory (said on stderr). */
flamia_status tlm_loss(tlm *m, const flamia_recipe *rf, const flamia_recipe *rb, int want_grad,
                       const uint8_t *tokens, int T, int num_docs, const int32_t *cu_seqlens, double *loss);

/* The gradient's L2 norm; then Adam (beta 0.9 / 0.95, no weight decay) with the gradient
 * clipped to norm clip (0: none). Returns the norm before clipping. */
double tlm_adam_step(tlm *m, double lr, double clip);

#endif
