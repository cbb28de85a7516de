/* generate.h — writing text with a trained model, one token at a time, with a KV cache.
 *
 *     attn_generator g;
 *     attn_generator_init(&g, &model, &cfg, &err);      // the prompt, in one pass
 *     while (more) attn_generator_step(&g, &opts, &id, &err);
 *     attn_generator_free(&g);
 *
 * attn_generator_init traces the prompt, and each step is, by default, a
 * traced pass (model_run.h): after it g.trace is that step's trace, one new
 * query row (s = 1) reading every earlier position from the cache (P = n − 1),
 * its k_cache and v_cache what the cache held plus the new position. With
 * trace_steps false a step is attn_kv_step, which traces nothing and leaves
 * g.trace the prompt's: what to time and what a long continuation needs.
 * attn_generator_init_untraced traces nothing at all: the prompt is one
 * attn_kv_prefill, the steps attn_kv_step, g.trace stays empty: what
 * `attnlab generate` does; its cache is attn_kv_init_windowed's, so the
 * local layers of a Gemma model (or Mistral's window) keep only the rows
 * their window still reads. Either way g.logits is the last position's. */
#ifndef ATTN_GENERATE_H
#define ATTN_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/model/model.h"
#include "engine/run/kv_cache.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"

typedef struct {
    double temperature; /* 0: greedy (the most likely token); else p ∝ exp(logit / T) */
    int top_k;          /* sample among the k most likely (0: all) */
    uint64_t seed;      /* the same seed gives the same text */
    bool allow_unk;     /* false (the default): the unknown token is never chosen */
} attn_sampling;

/* The sampling settings of a run: cfg's temperature, top_k, seed and allow_unk. */
attn_sampling attn_sampling_of(const attn_config *cfg);

typedef struct {
    const attn_model *m;  /* borrowed */
    attn_config cfg;      /* the run's settings (masks, fill, ...) */
    int *ids;             /* (n) every token so far, the prompt's first */
    int n;
    attn_kv_cache cache;  /* every position's keys, values and layer inputs but the last chosen one's;
                           * untraced, no layer inputs, and a local layer's rows only as far as its
                           * window reads (kv_cache.h) */
    float *logits;        /* (V) the last position's next-token logits */
    attn_config run;      /* cfg as the model runs it (attn_model_run_config): what untraced passes take */
    bool trace_steps;     /* true (init's default): each step traced into trace */
    attn_trace trace;     /* the last traced pass: the prompt's, then each traced step's; empty untraced */
    uint64_t draws;       /* samples taken (the random stream's counter) */
} attn_generator;

/* Runs the prompt (cfg's text, one row) and fills the cache. */
attn_status attn_generator_init(attn_generator *g, const attn_model *m, const attn_config *cfg, attn_error *err);

/* The same with nothing traced: the prompt through attn_kv_prefill, and
 * trace_steps false. With dropout in training (its cells are the traced
 * pass's) the prompt is traced, as by attn_generator_init. */
attn_status attn_generator_init_untraced(attn_generator *g, const attn_model *m, const attn_config *cfg,
                                         attn_error *err);

/* Picks the next token from the last position's logits (never an id without
 * a token, never the model's <unk> unless s->allow_unk), appends it and runs
 * one step over the cache. *next receives its id. A prompt at the model's context length cannot grow:
 * ATTN_ERR_CONFIG. The caller decides where to stop: a model's text ends at
 * its EOS (m->cfg.eos), after which it was never trained to go on. */
attn_status attn_generator_step(attn_generator *g, const attn_sampling *s, int *next, attn_error *err);

void attn_generator_free(attn_generator *g);

/* The choice from one row of logits (V): argmax at temperature 0, else a draw
 * u ∈ [0, 1) against the top-k softmax at that temperature, among the ids
 * attn_may_choose allows: not the argmax, not among the top k, never drawn
 * otherwise. tok NULL: every id may be chosen. −1 when none may. */
int attn_sample_logits(const float *logits, int V, const attn_tokenizer *tok, const attn_sampling *s, float u);

/* Whether id may be written: it is a token of tok (a checkpoint's vocab_size
 * may be larger than its tokenizer: DeepSeek-V3 has 129,280 rows of logits for
 * 128,815 tokens, and the rows beyond are no text), and not the unknown token
 * unless allow_unk. True for every id when tok is NULL. */
bool attn_may_choose(const attn_tokenizer *tok, int id, bool allow_unk);

#endif
