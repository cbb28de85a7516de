/* attention.h — one traced layer of masked multi-head attention.
 *
 * The pipeline of one layer (names as in the trace):
 *   x → q, k, v → q_heads, k_heads, v_heads → [q_norm, k_norm] → [q_rope, k_rope] → [k_cache, v_cache]
 *     → k_expanded, v_expanded → scores → [bias] → [capped_scores] → mask → masked_scores
 *     → weights [, sink_weight] → [weights_dropout] → context → merged → out
 * (in brackets: with a setting — qk_norm or a Qwen3 checkpoint, rope, past,
 * alibi, softcap, sink_logit, training dropout). Mode mla replaces the part
 * before the scores and the context (mla.h):
 *   x → q → q_nope, q_pe;  [x_past ; x] → c_kv, k_pe → k_nope, v_up (naive) or q_latent (absorbed)
 *     → scores … weights → [context_latent] → context → merged → out
 * With tiles the context is
 * tiles.h's, from q, k_expanded and v_expanded tile by tile [→ tile_max,
 * tile_sum]; the weights are still computed, for the pictures.
 * forward.h runs it as a single-layer trace; model_run.h runs it in every
 * layer of a trained model. */
#ifndef ATTN_ATTENTION_H
#define ATTN_ATTENTION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/attention/wmat.h"
#include "engine/base/error.h"
#include "engine/trace/trace.h"

struct attn_model; /* model.h */

/* A run watched from another thread (a window that keeps drawing while it
 * recomputes): the run writes where it is, and stops with ATTN_ERR_CANCELLED
 * at the next stage or layer once cancel is set. Plain C11 atomics, so the
 * watcher reads them without a lock.
 *
 * A model's run goes through three phases: its weights read and checked
 * (bytes_done of bytes_total, attn_model_load_watched), its tokenizer built,
 * then its layers traced. layers_done counts the layers of the trace being
 * made whose every stage is written: once the watcher has read it (an
 * acquire load, the run's store being a release), it may read those layers'
 * tensors while the run goes on with the next ones, nothing of theirs being
 * written again. */
typedef enum {
    ATTN_PHASE_NONE,       /* not started, or a run that is not a model's */
    ATTN_PHASE_READING,    /* the weights: bytes_done of bytes_total */
    ATTN_PHASE_TOKENIZER,  /* tokenizer.json */
    ATTN_PHASE_TRACING     /* the layers: layer, stage, layers_done */
} attn_phase;

typedef struct {
    atomic_int cancel;   /* set by the watcher */
    atomic_int layer;    /* the layer being computed (0 for a single layer) */
    atomic_int stage;    /* attn_stage_id of the step being computed */
    atomic_int phase;    /* attn_phase */
    atomic_int layers;         /* a model's trace: its layers ... */
    atomic_int layers_done;    /* ... of which every stage is written */
    atomic_llong bytes_done;   /* ATTN_PHASE_READING: bytes of the weights read ... */
    atomic_llong bytes_total;  /* ... of this many */
    atomic_llong phase_ms;     /* attn_clock_ms() when the phase began (whole ms) */
} attn_progress;

/* Every field 0: not cancelled, nothing done. */
void attn_progress_init(attn_progress *p);

/* Records (layer, stage) in p and says whether p asks the run to stop
 * (NULL: no watcher, never). */
bool attn_progress_at(attn_progress *p, int layer, attn_stage_id stage);

/* How far p's run is in its phase, 0 .. 1: the bytes of the weights read,
 * or the layers traced (a layer in three parts: projections, scores, context
 * and the rest). *left_ms (may be NULL) receives the phase's time left at the
 * pace so far once that can be told (half a second in, past 2%), else -1. */
double attn_progress_fraction(const attn_progress *p, double *left_ms);

/* The part of a pass of `layers` layers done when it is at `stage` of
 * `layer`, 0 .. 1: a layer in thirds (projections; scores to weights; the
 * context and the rest). What attn_progress_fraction counts while tracing. */
double attn_progress_at_stage(int layer, int stage, int layers);

/* Records the phase p's run is in (NULL: no watcher) and whether p asks it to stop. */
bool attn_progress_phase(attn_progress *p, attn_phase phase);

/* Optional caller-supplied inputs; any NULL field is taken from the config's
 * --weights / --input files if set, else made deterministically from the seed
 * (a token's embedding depends only on its text and the seed). */
typedef struct {
    const float *w_q;    /* (d, h*k); mode mla: (d, h*(k+D)) */
    const float *w_k;    /* (d, g*k) */
    const float *w_v;    /* (d, g*k) */
    const float *w_o;    /* (h*k, d) */
    const attn_wmat *w_stored[4]; /* or W_Q, W_K, W_V, W_O as a checkpoint stores them, (out, in), in
                                   * their own dtype: widened and transposed into the trace's (in, out) */
    const float *b_q, *b_k, *b_v; /* (h*k), (g*k), (g*k): with tr->arch.qkv_bias */
    const float *b_o;             /* (d): with tr->arch.o_bias (gpt-oss), out = merged · W_O + b_O */
    const float *sinks;           /* (h): with tr->arch.sinks, each query head's learned sink logit X_h
                                   * (gpt-oss), in place of the config's one sink_logit for all heads */
    const float *q_norm, *k_norm; /* (k) gains: with tr->arch.qk_norm */
    double qk_eps;                /* their RMSNorm's ε */
    const float *x;      /* (b, s, d) */
    const float *x_past; /* (b, P, d) */
    const float *k_past, *v_past; /* (b, g, P, k): the KV cache as stored, keys normalised and rotated;
                                   * NULL: computed again from x_past */
    int past_stride;     /* with b = 1: positions between kv heads' first rows in k_past and
                          * v_past, a cache with room to grow (kv_cache.h); 0: P */
    const float *memory; /* (b, t, d) */
    const float *w_dkv, *w_uk, *w_uv, *w_kr; /* mode mla: (d, R), (R, h*k), (R, h*k), (d, D) */
    const float *ckv_past, *kpe_past; /* mode mla: the cache as stored, c_kv (b, P, R) and k_pe (b, P, D),
                                       * already rotated; NULL: computed again from x_past */
    int latent_stride;   /* mode mla: floats from one cached position's row to the next in ckv_past
                          * and kpe_past (a cache keeping [c_kv | k_pe] together: R + D); 0: R, D */
    const float *q_mla;  /* mode mla, a DeepSeek checkpoint's low-rank query: q (b, s, h*(k+D)) as the
                          * model computed it (RMSNorm(x · W_QA) · W_QB); NULL: x · W_Q */
    const float *kv_norm; /* mode mla, a DeepSeek checkpoint: the latent's RMSNorm gains (R) */
    double kv_eps;        /* their ε */
    float *qk_scratch;   /* 2 (b,h,s,t) + (b,1,s,t) floats for a layer whose scores, mask, masked
                          * scores and weights the trace does not keep (attn_config.qk_keep) */
    const struct attn_model *model; /* with cfg->model: that model, already loaded (else it is
                                     * loaded for the run); the fields above are then ignored */
    attn_progress *progress;        /* NULL, or a watcher's: also for a model's run */
    attn_arena *arena;              /* NULL, or the store the trace's arena is lent by (arena.h) */
} attn_inputs;

/* Computes layer `layer` of tr, whose tensors are already placed (name,
 * shape, data): fills its inputs from in (NULL: none given), then runs every
 * stage. The fully masked rows are recorded from the first layer that keeps its mask. */
attn_status attn_attention_run(attn_trace *tr, int layer, const attn_inputs *in, attn_error *err);

/* The key of a dropout mask (attn_op_dropout): "attention" for the weights,
 * "output" for the layer's output, hashed with the config's seed. One place,
 * so a decoding step (kv_step.c) drops exactly the cells a traced pass does. */
uint64_t attn_dropout_key(const attn_config *c, const char *where);

/* Deterministic default embedding of one token: d values ~ N(0, 1). */
void attn_embed_token(const char *token, uint64_t seed, float *out, int d);

#endif
