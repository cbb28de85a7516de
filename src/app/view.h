/* view.h — what the visualizer shows of one stage, as plain data. No SDL.
 *
 * A stage's tensor has up to four axes; the picture is a 2-D slice of it:
 * the batch row and the head (or the kv head that head reads) are fixed, the
 * last two axes become rows and columns. This module picks that slice, its
 * colour scale, its axis labels (tokens or feature indices), and explains a
 * cell in words with the actual numbers, e.g.
 *
 *     scores[h=2, i=3, j=1] = q₃·k₁ / √8 = 2.31 / 2.83 = 0.82
 */
#ifndef APP_VIEW_H
#define APP_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/trace/trace.h"
#include "heatmap.h"

typedef enum {
    APP_AXIS_NONE,   /* a single row */
    APP_AXIS_QUERY,  /* query positions P..L-1: tokens */
    APP_AXIS_KEY,    /* key positions 0..t-1: target tokens, or source tokens in cross-attention */
    APP_AXIS_NEW,    /* new key positions: query tokens (self) or source tokens (cross) */
    APP_AXIS_PAST,   /* cached positions 0..P-1 */
    APP_AXIS_FEATURE, /* feature index c (d, k or g·k wide) */
    APP_AXIS_INPUT,  /* input feature m of a weight matrix (its rows) */
    APP_AXIS_OUTPUT, /* output feature c of a weight matrix (its columns) */
    APP_AXIS_VOCAB,  /* token id v of a model's vocabulary (logits, probs) */
    APP_AXIS_HEAD,   /* query head h (or kv head g): sink_weight's rows, one per head */
    APP_AXIS_EXPERT  /* routed expert e of a mixture-of-experts layer (router_scores, expert_weights) */
} app_axis;

typedef struct {
    const attn_tensor *tensor;
    app_slice slice;      /* rows × cols */
    app_axis row_axis, col_axis;
    int batch;            /* batch row shown (-1: the tensor has none) */
    int head;             /* query head shown (-1: no head axis) */
    int kv_head;          /* kv head shown or read (-1: none) */
    int head_axis;        /* 'h', 'g', '1' or 0: what the second axis of a 4-D tensor is */
    int block;            /* width of one head's block along the blocked axis (0: none) */
    bool block_on_rows;   /* w_o: blocks are row blocks */
    int block_current;    /* index of the block of the current head (or its kv head) */
    int row0, col0;       /* a zoomed window (app_view_window): slice cell (i, j) is the stage's (row0 + i, col0 + j) */
} app_view_slice;

/* Narrows v to rows × cols cells from (row0, col0) of its slice (clamped to
 * it): what a zoomed picture shows. Labels follow the window. */
void app_view_window(app_view_slice *v, int row0, int col0, int rows, int cols);

/* Picks the slice of `stage` for (batch, head). head is a query head in
 * [0, h); for a tensor with a kv-head axis the slice is kv head head/(h/g).
 * Returns 0, or -1 if the trace has no such stage. */
int app_view_make(const attn_trace *tr, const char *stage, int batch, int head, app_view_slice *out);

/* The same for tensor t, one of tr's (NULL: -1). */
int app_view_make_of(const attn_trace *tr, const attn_tensor *t, int batch, int head, app_view_slice *out);

/* Colour scale for a whole tensor, so every head and batch row of one stage
 * shares colours; the stage's catalogue row picks the kind: weights on a
 * sequential map from 0, the mask and signed values on a diverging map
 * centred on 0. Masked cells (−∞) and finite mask fills (≤ −1e8) do not
 * stretch the range. */
app_scale app_view_scale(const attn_tensor *t);
/* The same rule over one slice only (a head's own colour scale). */
app_scale app_view_slice_scale(const attn_tensor *t, const app_slice *s);

/* Label of row i / column j: a token ("猫", "<pad>") or a feature index ("c5"). */
const char *app_view_row_label(const attn_trace *tr, const app_view_slice *v, int i, char *buf, size_t size);
const char *app_view_col_label(const attn_trace *tr, const app_view_slice *v, int j, char *buf, size_t size);

/* One line: the cell's indices, value and how it was computed with the actual
 * numbers (the engine's attn_explain, translated). Works for every contract
 * stage; other tensors get name[idx] = value. */
const char *app_view_explain(const attn_trace *tr, const app_view_slice *v, int i, int j, char *buf,
                             size_t size);

/* "12.3", "-0.58", "1.2e+03": the number as printed inside a cell. */
const char *app_view_format(float v, char *buf, size_t size);

/* kv head read by query head `head` under dims (g = h: itself; g = 1: 0). */
int app_view_kv_head(const attn_dims *d, int head);

/* The slice of the first stage of ids (n of them) this layer of tr has, for
 * this batch row and head; false when it has none of them. */
bool app_view_first_of(const attn_trace *tr, int layer, const attn_stage_id *ids, int n, int batch, int head,
                       app_view_slice *v);

#endif
