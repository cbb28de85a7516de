/* stages.h — the catalogue of traced stages, in pipeline order.
 *
 * One row per tensor name of the trace contract: its dimension names, a
 * one-line description and its formula. The engine, the trace reader, the
 * CLI and the visualizer all read names, shapes and texts from here. */
#ifndef ATTN_STAGES_H
#define ATTN_STAGES_H

#include <stdbool.h>

#include "config.h"

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

/* Whether a trace of config c (resolved to dims d) records stage name. */
bool attn_stage_present(const char *name, const attn_config *c, const attn_dims *d);

/* Bytes that all recorded stages of (c, d) take, in double so a huge config
 * cannot overflow; each tensor is counted with its alignment padding. */
double attn_trace_bytes(const attn_config *c, const attn_dims *d);

/* Axis names of a dims string ("b,h,s,t" → "b" "h" "s" "t"); returns how many. */
int attn_stage_axes(const char *dims, char names[][8], int max);

/* kv head that query head `head` reads: head / (h/g) (itself in MHA, 0 in MQA). */
int attn_kv_head(const attn_dims *d, int head);

#define ATTN_TENSOR_ALIGN 16 /* floats: every tensor starts 64-byte aligned */

#endif
