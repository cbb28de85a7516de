/* trace.h — a recorded forward pass: every stage as a named float32 tensor.
 *
 * A trace owns a copy of its configuration, the resolved sizes, the token
 * tables, and one arena holding all tensor data. Walk it in pipeline order:
 *
 *     const attn_tensor *e = NULL;
 *     while ((e = attn_trace_next(tr, e))) printf("%s\n", e->name);
 *
 * Every tensor belongs to a layer (0 .. n_layers−1), or to none (−1: a
 * model-level tensor such as embeddings or logits, or one outside the
 * contract). Look a stage up by (layer, id) or (layer, name):
 *
 *     const attn_tensor *w = attn_trace_stage(tr, 2, ATTN_STAGE_WEIGHTS);
 *
 * A single-layer trace is layer 0 and its tensors have their contract names
 * ("weights"); in a trace of several layers they are "layers.N.<stage>"
 * ("layers.2.weights"), the names a file stores them under.
 *
 * Traces come from attn_trace_run (forward.h) or attn_trace_load (trace_io.h)
 * and are released with attn_trace_free, which gives a borrowed arena back to
 * its store (arena.h). */
#ifndef ATTN_TRACE_H
#define ATTN_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/base/error.h"
#include "engine/trace/arch.h"
#include "engine/trace/arena.h"
#include "engine/trace/config.h"
#include "engine/trace/stages.h"
#include "engine/trace/tokens.h"

#define ATTN_MAX_NAME 64

/* A tensor whose rows are computed when first read: a model's logits and
 * probs (head.h's attn_head is one), a layer's masked scores
 * (attention/derived.h, whose release is NULL: the trace's `derived` frees it).
 * fill makes rows [row0, row0 + n) hold their numbers (0, or -1 out of
 * memory); release frees it. whole: any fill fills every row, and looking
 * the tensor up does (attn_trace_stage, attn_tensor_filled). */
typedef struct attn_lazy {
    int (*fill)(struct attn_lazy *self, size_t row0, size_t n);
    void (*release)(struct attn_lazy *self);
    bool whole;
} attn_lazy;
#define ATTN_MAX_LAYERS 4096 /* layers a trace may have: layer indices 0..4095 */

typedef struct {
    char name[ATTN_MAX_NAME];    /* full name, as in a file: "weights", "layers.2.weights" */
    int layer;                   /* 0 .. n_layers−1; −1: model-level or outside the contract */
    int ndim;
    int64_t shape[ATTN_MAX_NDIM];
    const attn_stage_info *info; /* NULL for a name outside the contract */
    const char *dims;            /* its dimension names where they are not info's: mode mla's
                                  * "d,h*(k+D)" (attn_stage_dims); NULL: info->dims */
    float *data;                 /* points into the trace's arena */
    size_t count;                /* product of shape */
    attn_lazy *lazy;             /* a model's logits and probs: rows hold numbers once filled
                                  * (attn_tensor_fill); NULL: every number is there */
} attn_tensor;

typedef struct {
    attn_config cfg;      /* owned copy of the configuration that produced it */
    attn_dims dims;
    attn_tokens tokens;   /* (b, L) target tokens, padded */
    attn_tokens source;   /* (b, t) source tokens when cross-attention, else empty */
    attn_tensor *tensors; /* n_tensors: layer by layer, each in pipeline order, then the rest */
    int n_tensors;
    int n_layers;         /* attention layers (1 for a single-layer trace) */
    float *arena;         /* all tensor data; NULL when it is the file's (map) or another trace's (borrowed) */
    size_t arena_size;    /* bytes of the block arena is */
    attn_arena *store;    /* the store arena was lent by, and goes back to (not owned); NULL: its own */
    void *map;            /* a loaded trace's file, mapped: its tensors point into it; else NULL */
    size_t map_size;
    bool widened;         /* loaded from a file whose tensors are not all aligned little-endian float32
                           * (F16, BF16): they are copies in the arena, or would be when described */
    bool described;       /* loaded by attn_trace_describe: every tensor's data is NULL */
    int *masked_rows;     /* (n_masked, 2): (batch row, query index) with every key masked */
    int n_masked;
    int *token_ids;       /* (b, L) a model's token ids, −1 at pads; NULL without a model */
    char *model_config;   /* the model's config.json, as text; NULL without a model */
    attn_arch arch;       /* what the model's architecture adds to attention (none without a model) */
    attn_lazy *head;      /* owned: computes the logits and probs rows read (head.h); NULL: none */
    attn_lazy *derived;   /* owned: fills the stages made from others when first read (attention/derived.h);
                           * NULL: none (every stage written) */
} attn_trace;

void attn_trace_free(attn_trace *tr);

/* Makes rows [row0, row0 + n) of t hold their numbers, a row being its last
 * axis (logits (b, s, V): row = batch · s + query). Nothing to do for most
 * tensors; a model's logits and probs are computed when first read (head.h),
 * so every reader of their data asks for its rows first. Returns 0, or -1 out
 * of memory (the rows then read 0). */
int attn_tensor_fill(const attn_tensor *t, size_t row0, size_t n);

/* The same for every row of t. */
int attn_tensor_fill_all(const attn_tensor *t);

/* t, its numbers there if it is a stage made from others when first read
 * (attention/derived.h); for a tensor reached by its index in tr->tensors, as the
 * lookups below do it themselves. NULL for NULL. */
const attn_tensor *attn_tensor_filled(const attn_tensor *t);

/* Bytes of tr's tensors (4 a number): what it holds in memory or maps. */
double attn_trace_bytes(const attn_trace *tr);

/* Bytes of tr's arena: its tensors, each padded to ATTN_TENSOR_ALIGN floats
 * (what attn_trace_alloc_arena allocates, and what loading widens into). */
double attn_trace_arena_bytes(const attn_trace *tr);

/* A trace that shows src's tensors without copying their data: everything
 * else (settings, tokens, tensor table) is dst's own, the data stays src's,
 * so src must outlive dst. Free dst with attn_trace_free as usual: it frees
 * no data. */
attn_status attn_trace_borrow(const attn_trace *src, attn_trace *dst, attn_error *err);

/* Places every tensor of tr (name, shape and count already set) in one arena,
 * each ATTN_TENSOR_ALIGN-float aligned, and points its data there. The arena
 * is a block of tr->store's when set (arena.h): a block freed by an earlier
 * trace, its numbers stale until the run writes them. */
attn_status attn_trace_alloc_arena(attn_trace *tr, attn_error *err);

/* Fills masked_rows with the (batch row, query) pairs whose every key is
 * masked, read from the first mask the trace keeps (nothing if it has none). */
attn_status attn_trace_find_masked_rows(attn_trace *tr, attn_error *err);

/* Adds (b, q) to tr's masked_rows when every one of the T keys of its mask
 * row is masked (no 0 in row); *cap is the array's room, grown as needed. */
attn_status attn_trace_note_masked_row(attn_trace *tr, const float *row, int64_t T, int b, int q, int *cap,
                                       attn_error *err);

/* The tensor after prev (the first if prev is NULL), or NULL at the end. */
const attn_tensor *attn_trace_next(const attn_trace *tr, const attn_tensor *prev);

/* The tensor whose full name is name ("weights", "layers.2.weights"), or
 * NULL. In a single-layer trace that is layer 0's stage of that name. */
const attn_tensor *attn_trace_find(const attn_trace *tr, const char *name);

/* Layer `layer`'s tensor for stage `id`, or NULL. */
const attn_tensor *attn_trace_stage(const attn_trace *tr, int layer, attn_stage_id id);

/* The same for the pass that writes it: its numbers as they are, a derived
 * stage (attention/derived.h) not made. */
attn_tensor *attn_trace_slot(attn_trace *tr, int layer, attn_stage_id id);

/* Layer `layer`'s tensor called name without its "layers.N." prefix
 * (attn_trace_get(tr, 2, "weights") is "layers.2.weights"), or NULL. */
const attn_tensor *attn_trace_get(const attn_trace *tr, int layer, const char *name);

/* The name a tensor of layer `layer` (−1: model-level) has in a trace of
 * n_layers layers: `stage` itself in a single-layer trace or at model level
 * (also for a model-level stage such as "logits" whatever the layer), else
 * "layers.N.<stage>". Returns buf. */
const char *attn_tensor_name(int layer, int n_layers, const char *stage, char *buf, size_t size);

/* The layer a tensor name gives: "layers.2.weights" → 2 with *rest =
 * "weights"; a name without the "layers." prefix → −1 with *rest = name;
 * −2 for a malformed one: N not a whole number in [0, ATTN_MAX_LAYERS)
 * written without leading zeros, or nothing after it. */
int attn_tensor_name_layer(const char *name, const char **rest);

/* True for a trained model's trace (--model): it has logits over a vocabulary. */
static inline bool attn_trace_is_model(const attn_trace *tr) { return tr->dims.V > 0; }

/* What the stage texts of tr depend on: its settings and its model's architecture. */
attn_stage_text attn_trace_stage_text(const attn_trace *tr);
/* The same for tensor t of tr: what holds in t's layer (a SmolLM3 layer without RoPE, a Gemma layer's own
 * window: arch.h's local). */
attn_stage_text attn_trace_tensor_text(const attn_trace *tr, const attn_tensor *t);

/* The stage id of a tensor (ATTN_STAGE_NONE outside the contract). */
static inline attn_stage_id attn_tensor_stage(const attn_tensor *t)
{
    return t && t->info ? t->info->id : ATTN_STAGE_NONE;
}

/* The 2-D picture of a tensor for one (batch row, query head): the leading
 * axes are fixed, the last two become rows × cols (a 1-D tensor is one row).
 * A kv-head axis (g) is indexed by the kv head that `head` reads, a broadcast
 * axis (1) by 0; out-of-range indices are clamped. */
typedef struct {
    const float *data; /* rows × cols, row-major */
    int rows, cols;
    int batch;         /* batch row taken, -1: no batch axis */
    int head;          /* query head (h axis or g axis), -1: no head axis */
    int kv_head;       /* kv head read, -1: none */
    int head_axis;     /* 'h', 'g', '1' or 0 */
    char axes[ATTN_MAX_NDIM][8]; /* axis names ("b", "s", "g*k"); "" for tensors outside the contract */
} attn_matrix;

/* The picture of tensor t (one of tr's). Returns 0, or -1 if t is NULL or has
 * no axis. A tensor with a size 0 on any axis (another program's trace with
 * b = 0, h = 0 or s = 0) is a picture of 0 × 0 cells. */
int attn_trace_matrix_of(const attn_trace *tr, const attn_tensor *t, int batch, int head, attn_matrix *m);

/* The same for the tensor called name (attn_trace_find); -1 if there is none. */
int attn_trace_matrix(const attn_trace *tr, const char *name, int batch, int head, attn_matrix *m);

/* "(b=2, h=8, s=6, t=6)" for contract tensors, "(2, 8, 6, 6)" otherwise. */
const char *attn_tensor_shape_str(const attn_tensor *t, char *buf, size_t size);

/* Element (i0, i1, ...) of a tensor by flat row-major index helpers. */
static inline float attn_tensor_at4(const attn_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return t->data[((a * t->shape[1] + b) * t->shape[2] + c) * t->shape[3] + d];
}

#endif
