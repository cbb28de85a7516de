/* stages.h — the catalogue of traced stages, in pipeline order.
 *
 * One row per tensor name of the trace contract: its dimension names, a
 * one-line description and its formula. The engine, the trace reader, the
 * CLI and the visualizer all read names, shapes and texts from here.
 *
 * The bottom of the engine's line (stages ← config ← trace ← forward): this
 * header holds the sizes a stage's shape is made of (attn_dims) and includes
 * nothing of the engine. */
#ifndef ATTN_STAGES_H
#define ATTN_STAGES_H

#include <stdbool.h>
#include <stdint.h>

#define ATTN_MAX_NDIM 8       /* axes a tensor may have */
#define ATTN_TENSOR_ALIGN 16 /* floats: every tensor starts 64-byte aligned */

/* Multi-head attention variants, by how many K/V heads serve the query heads. */
typedef enum {
    ATTN_MODE_AUTO = 0, /* follow kv_heads (g = h when kv_heads is unset) */
    ATTN_MODE_MHA,      /* g = h: every query head has its own K/V head */
    ATTN_MODE_MQA,      /* g = 1: all query heads share one K/V head */
    ATTN_MODE_GQA       /* 1 < g < h: groups of h/g query heads share one */
} attn_mode;

/* Sizes of one resolved problem (names as in the trace contract). */
typedef struct {
    int b;      /* batch rows */
    int L;      /* padded target length, past included */
    int P;      /* cached (past) positions */
    int s;      /* query positions = L - P */
    int t;      /* key positions: P + s (self) or source length (cross) */
    int n;      /* new key positions: s (self) or t (cross) */
    int d;      /* d_model */
    int h;      /* query heads */
    int g;      /* kv heads */
    int k;      /* head dim = d / h */
    bool cross; /* cross-attention: keys/values from the source tokens */
    attn_mode mode; /* resolved: MHA, MQA or GQA */
} attn_dims;

typedef struct {
    const char *name;    /* "scores" */
    const char *dims;    /* comma-separated dimension names: "b,h,s,t" */
    const char *desc;    /* one line: what the tensor is */
    const char *formula; /* how it is computed, in plain Unicode */
} attn_stage_info;

/* All stages in pipeline order; *count receives their number. */
const attn_stage_info *attn_stages(int *count);

/* The stage called name, or NULL. */
const attn_stage_info *attn_stage_lookup(const char *name);

/* Pipeline position of name (0-based), or -1 for an unknown name. */
int attn_stage_index(const char *name);

/* What decides which stages a run records: its sizes and two switches of its
 * configuration (config.h fills one from a config: attn_config_stage_ctx). */
typedef struct {
    const attn_dims *dims;
    bool rope;    /* q_rope, k_rope */
    bool dropout; /* weights_dropout: training with dropout > 0 */
} attn_stage_ctx;

/* Whether a run described by ctx records stage name. */
bool attn_stage_present(const char *name, const attn_stage_ctx *ctx);

/* Expected shape of contract stage `info` under dims; returns ndim. */
int attn_stage_shape(const attn_stage_info *info, const attn_dims *dims, int64_t shape[ATTN_MAX_NDIM]);

/* Bytes that all recorded stages of ctx take, in double so a huge config
 * cannot overflow; each tensor is counted with its alignment padding. */
double attn_stages_bytes(const attn_stage_ctx *ctx);

/* Axis names of a dims string ("b,h,s,t" → "b" "h" "s" "t"); returns how many. */
int attn_stage_axes(const char *dims, char names[][8], int max);

/* kv head that query head `head` reads: head / (h/g) (itself in MHA, 0 in MQA). */
int attn_kv_head(const attn_dims *d, int head);

#endif
