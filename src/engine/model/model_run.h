/* model_run.h — a trained model's forward pass, every layer traced.
 *
 * Tensor names (n layers; N = 0 .. n−1):
 *   embeddings                                   (b, s, d)
 *   layers.N.resid_in → layers.N.x = RMSNorm(resid_in) → the attention's
 *     stages (layers.N.q … layers.N.out, attention.h) → layers.N.resid_mid
 *     → layers.N.mlp_norm → gate, up → act → mlp_out → layers.N.resid_out
 *   final_norm (b, s, d) → logits (b, s, V) → probs (b, s, V), their rows
 *     computed when read (attn_tensor_fill, trace.h; head.h)
 * The mask settings (causal, padding, fill, sliding window, softmax guard,
 * scale) act in every layer; RoPE is the model's (rotate-half, its theta). */
#ifndef ATTN_MODEL_RUN_H
#define ATTN_MODEL_RUN_H

#include "engine/attention/attention.h"
#include "engine/model/model.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"

/* Token rows for a model: cfg->text through the tokenizer (rows split at '|',
 * "\|" a literal bar), else cfg->tokens looked up token by token in the
 * vocabulary (unknown ones become the unk token), else the model's example.
 * The tokenizer's BOS leads every row. Fills the padded table *tok and *ids
 * (b, L) with −1 at pads (caller frees both). */
attn_status attn_model_tokenize(const attn_model *m, const attn_config *cfg, attn_tokens *tok, int **ids,
                                attn_error *err);

/* cfg with m's sizes and RoPE (and its sliding window unless cfg sets one):
 * the settings a trace of m runs with, its cfg, and what the untraced passes
 * over a KV cache take (kv_cache.h). Caller frees *run (attn_config_free). */
attn_status attn_model_run_config(const attn_model *m, const attn_config *cfg, attn_config *run, attn_error *err);

/* The KV cache of the first P positions, per layer (m->cfg.layers arrays
 * each): x, the layer's normalised input (b, P, d), which the trace shows as
 * x_past; k and v, what attention stored, keys normalised and rotated and
 * values (b, g, P, k). k and v may be NULL: then they are computed from x.
 * Latent attention (a DeepSeek model) keeps no keys and values: k holds each
 * cached position's latent and RoPE key side by side, [c_kv | k_pe] (b = 1,
 * P rows of R + D), normalised and rotated; v and stride are unused. */
typedef struct {
    const float *const *x;
    const float *const *k, *const *v;
    int stride;  /* one row only: positions between kv heads' first rows in k and v (0: P) */
} attn_model_past;

/* Runs m on cfg's text into *out (caller frees with attn_trace_free). With
 * cfg->past = P > 0 the first P positions are the KV cache: past, when
 * given, holds it; else it is computed by running those positions first. */
attn_status attn_model_trace_run(const attn_model *m, const attn_config *cfg, const attn_model_past *past,
                                 attn_trace *out, attn_error *err);

/* The same, watched (attention.h's attn_progress; NULL: not watched), its
 * arena lent by store (arena.h; NULL: its own). */
attn_status attn_model_trace_watched(const attn_model *m, const attn_config *cfg, const attn_model_past *past,
                                     attn_progress *watch, attn_arena *store, attn_trace *out, attn_error *err);

/* The same on one row of token ids, ids[0 .. n) (cfg's text and tokens unused). */
attn_status attn_model_trace_ids(const attn_model *m, const attn_config *cfg, const int *ids, int n,
                                 const attn_model_past *past, attn_trace *out, attn_error *err);

/* Layer l's keys and values as a cache stores them, from a trace of m with
 * no past: (b, g, s, k) each (its k_rope, or k_norm or k_heads without RoPE;
 * its v_heads); from a trace with a past, its k_cache and v_cache (b, g, t, k). */
void attn_model_trace_kv(const attn_trace *tr, int l, const float **k, const float **v);

/* KV-cache decoding with a model, step `step` (1-based) of base: the first
 * `step` tokens of every row (as token strings in out->tokens, text unset),
 * all but the last in the cache. *len receives the number of steps. As
 * attn_config_decode does for one layer. */
attn_status attn_model_decode(const attn_model *m, const attn_config *base, int step, attn_config *out, int *len,
                              attn_error *err);

/* Bytes the trace of cfg on m would take (tokenizing cfg's text), its
 * scratch included: with every layer's attention weights, or, when those
 * exceed the limit (attn_config_max_bytes), with one layer's (cfg->qk_prefer's). */
attn_status attn_model_trace_estimate(const attn_model *m, const attn_config *cfg, double *bytes, attn_error *err);

/* Bytes a traced pass of one row of n tokens takes on a model of config c,
 * every layer's attention weights kept, or one layer's (one_layer, what a
 * prompt too long for all keeps): what the budget weighs (n ≥ 1). */
double attn_model_trace_bytes(const attn_model_config *c, int n, bool one_layer);

/* Of those, the logits and probs of one position (2·V floats): reserved whole,
 * but computed and held only for the rows read (head.h). */
double attn_model_head_row_bytes(const attn_model_config *c);

/* Bytes tr (a model's trace) would take with every layer's attention weights:
 * what a trace that kept one layer's (its cfg.qk_keep) saved. */
double attn_model_trace_full_bytes(const attn_trace *tr);

#endif
