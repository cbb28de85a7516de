/* kv_cache.h — a model's KV cache, and one token through the model over it
 * with nothing traced: what a deployed decoder does for each new token.
 *
 *     attn_kv_cache c;
 *     attn_kv_init(&c, m, err);
 *     attn_kv_append(&c, &prompt_trace, err);     // the prompt's keys and values
 *     attn_kv_step(&c, m, &tr.cfg, id, logits, err); // one token: appends its own; logits (V)
 *     attn_kv_prefill(&c, m, &run, ids, n, logits, err); // or n tokens at once, untraced
 *     attn_kv_free(&c);
 * (attn_kv_init_windowed(&c, m, &run, err) for untraced decoding only: below.)
 *
 * Per layer it holds what attention stored for each position so far (keys
 * projected, + bias, normalised per head if the model does, rotated at their
 * position; values projected, + bias) and, unless it is an untraced cache
 * (keeps_x below), the layer's normalised input x, which a traced step shows
 * as x_past:
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
 * A Gemma model (gemma.h) has local layers: each reads only the last W
 * positions (its window), the global ones every position. attn_kv_init's
 * cache keeps every position of every layer, as a traced step shows them
 * (k_cache, v_cache, x_past). attn_kv_init_windowed's keeps, in each local
 * layer, only rows a later query can still read: when positions n .. n+m−1
 * do not fit in its room, the rows of positions below n − W + 1 (which no
 * query from n on sees) are let go, so a local layer holds positions
 * first .. n−1:
 *   local layer l:  k, v: (g, local_cap, k), position p's row p − first
 * The rows let go were hidden by the window (masked: weight exactly 0), so
 * the logits are those of the cache that keeps everything; the local layers'
 * memory is bounded by about W + W/4 rows, whatever the text's length, or,
 * once a prompt longer than the window has been prefilled, by the room that
 * took (W − 1 plus a chunk of 512, grown in powers of two; the room is not
 * given back). kv_bytes.h counts W rows, the window's own need.
 * Mistral's window (every layer local) is kept the same way. A model that
 * decodes through the traced layer (gpt-oss) keeps every position.
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
    int n, cap;            /* positions held, positions there is room for (in a full layer) */
    int window;            /* W: local layers keep only what their window reads (windowed); 0: all */
    int first;             /* windowed: the oldest position a local layer holds, its row 0 */
    int local_cap;         /* windowed: rows there is room for in a local layer */
    unsigned char local[ATTN_ARCH_MAX_LAYERS]; /* windowed: local[l], layer l is local */
    float **keys, **values, **x; /* layers arrays each: k, v, x above */
    bool keeps_x;          /* x is kept; not in attn_kv_init_windowed's cache, unless it decodes through
                            * the traced layer (latent, sinks): nothing reads an untraced step's x */
    float *step;           /* a decoding step's working memory (kv_step.c), kept for the next step */
    size_t step_floats;    /* its size in floats */
} attn_kv_cache;

/* An empty cache shaped for m (room for nothing yet), every position kept. */
attn_status attn_kv_init(attn_kv_cache *c, const attn_model *m, attn_error *err);

/* The same for untraced decoding with run's settings (attn_kv_step,
 * attn_kv_prefill): windowed when run masks local layers with a window (a
 * Gemma model's local layers; Mistral's or a set sliding_window: every
 * layer), unless keep_first keeps early keys visible or dropout in training
 * needs the traced pass; otherwise as attn_kv_init. It keeps no layer inputs
 * x (nothing but a traced step reads them, and at TinyLlama's shape they are
 * four times the keys and values), except in a cache whose steps are traced
 * layers (latent attention, gpt-oss's sinks: attn_kv_latent_pass). */
attn_status attn_kv_init_windowed(attn_kv_cache *c, const attn_model *m, const attn_config *run, attn_error *err);
void attn_kv_free(attn_kv_cache *c);

/* Whether layer l of c keeps only its window's rows; the position of its row
 * 0; and the rows there is room for (the stride between its kv heads). */
static inline bool attn_kv_windowed(const attn_kv_cache *c, int l)
{
    return c->window > 0 && l >= 0 && l < ATTN_ARCH_MAX_LAYERS && c->local[l];
}
static inline int attn_kv_first(const attn_kv_cache *c, int l) { return attn_kv_windowed(c, l) ? c->first : 0; }
static inline int attn_kv_room(const attn_kv_cache *c, int l) { return attn_kv_windowed(c, l) ? c->local_cap : c->cap; }

/* Makes room for positions up to n (c->n .. n−1 to come); a windowed cache
 * may let go of the local layers' rows that no position from c->n on reads.
 * On failure the cache is as it was. */
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
 * whose cells are the traced pass's (ATTN_ERR_CONFIG). On failure nothing is
 * appended (c->n as it was); a windowed cache may then have let go of rows
 * the failed prompt's first positions read: free it rather than go on. */
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
