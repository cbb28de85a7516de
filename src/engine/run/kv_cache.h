/* kv_cache.h — a model's KV cache, and one token through the model over it
 * with nothing traced: what a deployed decoder does for each new token.
 *
 *     attn_kv_cache c;
 *     attn_kv_init(&c, m, err);
 *     attn_kv_append(&c, &prompt_trace, err);     // the prompt's keys and values
 *     attn_kv_step(&c, m, &tr.cfg, id, logits, err); // one token: appends its own; logits (V)
 *     attn_kv_prefill(&c, m, &run, ids, n, logits, err); // or n tokens at once, untraced
 *     attn_kv_free(&c);
 *
 * Per layer it holds what attention stored for each position so far (keys
 * projected, + bias, normalised per head if the model does, rotated at their
 * position; values projected, + bias) and the layer's normalised input x,
 * which a traced step shows as x_past:
 *   k, v: (g, cap, k), kv head j's position i at (j·cap + i)·k
 *   x:    (cap, d)
 * Room grows by doubling, so appending a position copies nothing already held.
 *
 * Latent attention (a DeepSeek model, mla.h) keeps what it was made for: no
 * keys and values, but each position's normalised latent and rotated RoPE
 * key side by side, R + D values a layer instead of 2·h·k:
 *   keys: (1, cap, R + D), position i's [c_kv | k_pe] at i·(R + D); values: none
 * Its step and prefill are traced passes over that cache (kv_latent.c:
 * model_run.c's layers with the cached rows read, not recomputed), slower
 * than attn_kv_step's fused products but the same numbers as a full pass.
 *
 * A Gemma model (gemma.h) keeps every position of every layer too: a local
 * layer reads only its last W of them (its own mask, built once a step beside
 * the global layers'), each layer turns its keys with its own RoPE base. A
 * cache that dropped a local layer's older rows would hold W of them instead
 * (attnlab info --model says how much that saves); this one does not yet.
 *
 * attn_kv_step runs the traced pass's ops (model_run.c, attention.c) on one
 * query row, with what makes a deployed decoder fast: each kv head's cached
 * rows are read where they are (no k_cache, no k_expanded), the query heads
 * sharing a kv head are one product, and W_Q·W_K·W_V and W_gate·W_up are one
 * matrix-vector product each, reading the checkpoint's (out, in) rows in
 * order. Its logits equal a traced step's up to float rounding (test_kv_cache). */
#ifndef ATTN_KV_CACHE_H
#define ATTN_KV_CACHE_H

#include "engine/base/error.h"
#include "engine/model/model.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"

typedef struct {
    int layers, g, k, d;   /* the model's layers, kv heads, head dim, d_model; latent: 1, R + D */
    bool latent;           /* latent attention: keys hold [c_kv | k_pe], values nothing */
    int n, cap;            /* positions held, positions there is room for */
    float **keys, **values, **x; /* layers arrays each: k, v, x above */
} attn_kv_cache;

/* An empty cache shaped for m (room for nothing yet). */
attn_status attn_kv_init(attn_kv_cache *c, const attn_model *m, attn_error *err);
void attn_kv_free(attn_kv_cache *c);

/* Makes room for n positions. */
attn_status attn_kv_reserve(attn_kv_cache *c, int n, attn_error *err);

/* Appends the positions tr computed (P .. P+s−1 of its one row) from a trace
 * of the cache's model whose past is exactly the positions held (P = c->n):
 * its layers' x, and their keys and values (attn_model_trace_kv). */
attn_status attn_kv_append(attn_kv_cache *c, const attn_trace *tr, attn_error *err);

/* Token id at position c->n through m over the cache, with run's settings (a
 * model trace's cfg: masks, fill, scale, guard, RoPE, dropout); appends its
 * keys, values and inputs, and writes the next-token logits (V). */
attn_status attn_kv_step(attn_kv_cache *c, const attn_model *m, const attn_config *run, int id, float *logits,
                         attn_error *err);

/* The n tokens ids (positions c->n .. c->n+n−1) through m over the cache,
 * all at once, nothing traced (prefill.c): a prompt's keys, values and inputs
 * appended, and the last position's next-token logits (V) written; what a
 * traced pass of them would append, and its last logits, up to float rounding
 * (test_kv_cache). run as for attn_kv_step, but without dropout in training,
 * whose cells are the traced pass's (ATTN_ERR_CONFIG). */
attn_status attn_kv_prefill(attn_kv_cache *c, const attn_model *m, const attn_config *run, const int *ids, int n,
                            float *logits, attn_error *err);

/* The latent cache's step and prefill (kv_latent.c): n tokens ids at positions
 * c->n … as one traced pass over the cache; appends them, writes the last
 * position's logits (V). attn_kv_step and attn_kv_prefill call it for a
 * latent cache, and for gpt-oss's keys and values (its sinks, o's bias and
 * experts are the traced layer's, not the fused step's). */
attn_status attn_kv_latent_pass(attn_kv_cache *c, const attn_model *m, const attn_config *run, const int *ids, int n,
                                float *logits, attn_error *err);

#endif
