/* head.h — a model trace's LM head, computed for the rows someone reads.
 *
 * logits (b, s, V) = final_norm (b, s, d) · W_lmᵀ and probs = softmax(logits)
 * are the two largest stages of a model's trace: with V = 49,152 (SmolLM2)
 * they take 384 KiB a position, more than all of its layers' other stages at
 * a short prompt, and V reaches 150k. Most readers look at one row: the
 * window's selected query, the next-token panel, a lesson's measure. So a
 * traced pass computes final_norm only, and the head fills rows of logits
 * and probs when a reader asks (attn_tensor_fill, trace.h):
 *
 *     logits[r] = final_norm[r] · W_lmᵀ            (V)   r = batch · s + query
 *     probs[r]  = softmax(logits[r])               (V)
 *
 * Rows are computed in fixed chunks of ATTN_HEAD_CHUNK, always the same
 * product over the same rows, so a row reads the same bits whether it was
 * asked for alone or with every other (a trace file's). The two stages live
 * in one anonymous mapping whose pages the kernel provides only when a chunk
 * is written: an unread row costs address space, not memory.
 *
 * The head keeps its own read-only mapping of the checkpoint's bytes of W_lm,
 * so it may outlive the model that made it. Thread-safe: the window's export
 * may fill rows while the main thread draws. */
#ifndef ATTN_HEAD_H
#define ATTN_HEAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/attention/wmat.h"
#include "engine/base/error.h"
#include "engine/trace/trace.h"

#define ATTN_HEAD_CHUNK 32 /* rows computed together */

struct attn_model;

typedef struct attn_head {
    attn_lazy lazy;           /* first: what a trace's tensors point to (trace.h) */
    pthread_mutex_t lock;
    attn_wmat w;              /* (V, d) W_lm, reading pin when set, else the model's own bytes */
    void *pin;                /* the head's own mapping of W_lm's file bytes; NULL: none (see attn_head_new) */
    size_t pin_size;
    const float *final_norm;  /* (rows, d): the trace's */
    float *logits, *probs;    /* (rows, V) each, in block */
    void *block;              /* the anonymous mapping both live in */
    size_t block_size;
    unsigned char *done;      /* one flag a chunk: its rows hold their numbers */
    int rows, d, V;
    float cap;                /* Gemma 2's final_logit_softcapping: logits = C·tanh(logits / C); 0: none */
} attn_head;

/* A head for rows positions of m whose final norm is final_norm (rows, d),
 * nothing computed yet. When m's W_lm cannot be mapped again (it does not
 * lie in one of its files), every row is computed here, while m is alive.
 * Pair with attn_head_free. */
attn_status attn_head_new(const struct attn_model *m, const float *final_norm, int rows, attn_head **out,
                          attn_error *err);

void attn_head_free(attn_head *h);

/* Computes the chunks holding rows [row0, row0 + n) that are not yet.
 * Returns 0, or -1 out of memory (those rows then read 0). */
int attn_head_fill(attn_head *h, size_t row0, size_t n);

/* Bytes of logits and probs a position (2·V floats): what a row read costs. */
double attn_head_row_bytes(int V);

#endif
