/* forward.h — run masked multi-head attention and record every stage.
 *
 * The pipeline (names as in the trace):
 *   x → q, k, v → q_heads, k_heads, v_heads → [q_rope, k_rope] → [k_cache, v_cache]
 *     → k_expanded, v_expanded → scores → mask → masked_scores → weights
 *     → [weights_dropout] → context → merged → out */
#ifndef ATTN_FORWARD_H
#define ATTN_FORWARD_H

#include "config.h"
#include "error.h"
#include "trace.h"

/* Optional caller-supplied inputs; any NULL field is taken from the config's
 * --weights / --input files if set, else made deterministically from the seed
 * (a token's embedding depends only on its text and the seed). */
typedef struct {
    const float *w_q;    /* (d, d) */
    const float *w_k;    /* (d, g*k) */
    const float *w_v;    /* (d, g*k) */
    const float *w_o;    /* (d, d) */
    const float *x;      /* (b, s, d) */
    const float *x_past; /* (b, P, d) */
    const float *memory; /* (b, t, d) */
} attn_inputs;

/* Inputs taken from an existing trace (its weights, x, x_past, memory), so a
 * rerun with other mask settings computes on exactly the same numbers. The
 * pointers borrow tr's arena: keep tr alive while they are used. */
void attn_inputs_from_trace(const attn_trace *tr, attn_inputs *in);

/* Validates cfg and estimates the trace's size in bytes without allocating it. */
attn_status attn_trace_estimate(const attn_config *cfg, double *bytes, attn_error *err);

/* Runs the forward pass into *out (caller frees with attn_trace_free).
 * inputs may be NULL. A config whose trace would exceed cfg->max_bytes
 * (default: half the physical memory) is refused before any allocation. */
attn_status attn_trace_run(const attn_config *cfg, const attn_inputs *inputs, attn_trace *out,
                           attn_error *err);

/* Deterministic default embedding of one token: d values ~ N(0, 1). */
void attn_embed_token(const char *token, uint64_t seed, float *out, int d);

#endif
