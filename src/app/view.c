/* view.c — the 2-D slice, colour scale, labels and explanation of a stage. */
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/trace/explain.h"
#include "i18n.h"

#define MASK_FILL_LIMIT (-1e8f) /* finite values below this are mask fills, not data */

int app_view_kv_head(const attn_dims *d, int head)
{
    return attn_kv_head(d, head);
}

/* What an axis of a contract stage runs over, from its dimension name; a
 * weight matrix x·W maps input features (rows) to output features (columns). */
static app_axis axis_of(const char *name, const attn_stage_info *info, bool cols)
{
    if (!strcmp(name, "s")) return APP_AXIS_QUERY;
    if (!strcmp(name, "t")) return APP_AXIS_KEY;
    if (!strcmp(name, "n")) return APP_AXIS_NEW;
    if (!strcmp(name, "P")) return APP_AXIS_PAST;
    if (!strcmp(name, "V")) return APP_AXIS_VOCAB;
    if (!strcmp(name, "E")) return APP_AXIS_EXPERT;
    if (!strcmp(name, "h") || !strcmp(name, "g")) return APP_AXIS_HEAD;
    if (info && (info->roles & ATTN_ROLE_WEIGHT)) return cols ? APP_AXIS_OUTPUT : APP_AXIS_INPUT;
    return APP_AXIS_FEATURE;
}

int app_view_make(const attn_trace *tr, const char *stage, int batch, int head, app_view_slice *v)
{
    return app_view_make_of(tr, attn_trace_find(tr, stage), batch, head, v);
}

int app_view_make_of(const attn_trace *tr, const attn_tensor *t, int batch, int head, app_view_slice *v)
{
    memset(v, 0, sizeof *v);
    v->batch = v->head = v->kv_head = -1;
    if (!t || t->ndim < 1) return -1;
    const attn_dims *d = &tr->dims;
    v->tensor = t;

    attn_matrix mx;
    attn_trace_matrix_of(tr, t, batch, head, &mx);
    char (*names)[8] = mx.axes;
    bool named = names[0][0] != '\0';
    v->batch = mx.batch;
    v->head = mx.head;
    v->kv_head = mx.kv_head;
    v->head_axis = mx.head_axis;

    int rows_axis = t->ndim >= 2 ? t->ndim - 2 : -1;
    int cols_axis = t->ndim - 1;
    v->slice.data = mx.data;
    v->slice.rows = mx.rows; /* 0 × 0 when any axis is 0: no cell to read */
    v->slice.cols = mx.cols;
    v->slice.row_stride = v->slice.cols;
    v->slice.col_stride = 1;
    if (named) {
        v->row_axis = rows_axis >= 0 ? axis_of(names[rows_axis], t->info, false) : APP_AXIS_NONE;
        v->col_axis = axis_of(names[cols_axis], t->info, true);
    } else {
        v->row_axis = rows_axis >= 0 ? APP_AXIS_FEATURE : APP_AXIS_NONE;
        v->col_axis = APP_AXIS_FEATURE;
    }

    /* stages after the mask: the cells it masks are drawn masked */
    const attn_tensor *m = attn_trace_stage(tr, t->layer, ATTN_STAGE_MASK);
    if (t->info && t->info->masked && m && m->ndim == 4 && t->ndim == 4 && m->shape[0] == t->shape[0] &&
        m->shape[2] == t->shape[2] && m->shape[3] == t->shape[3] && m->count && v->slice.rows > 0) {
        int b = v->batch < 0 ? 0 : v->batch;
        v->slice.mask = m->data + (size_t)b * m->shape[2] * m->shape[3];
        v->slice.mask_row_stride = m->shape[3];
        v->slice.mask_col_stride = 1;
    }

    /* q/k/v and the projections: outline the per-head blocks */
    if (named && d->k > 0 && t->info->blocks != ATTN_BLOCKS_NONE) {
        v->block = d->k + (t->dims && d->mode == ATTN_MODE_MLA ? d->rope_dim : 0); /* MLA's q: k + D a head */
        v->head = head;
        if (t->info->blocks == ATTN_BLOCKS_HEAD_ROWS) {
            v->block_on_rows = true;
            v->block_current = head;
        } else {
            v->kv_head = app_view_kv_head(d, head);
            v->block_current = t->info->blocks == ATTN_BLOCKS_KV_COLS ? v->kv_head : head;
        }
    }
    return 0;
}

/* The scale of t's stage for values from lo to hi (the finite, unmasked ones). */
static app_scale scale_of(const attn_tensor *t, float lo, float hi)
{
    app_scale sc = {APP_CMAP_DIVERGING, -1.0f, 1.0f};
    attn_stage_cmap kind = t->info ? t->info->cmap : ATTN_CMAP_DIVERGING;
    if (kind == ATTN_CMAP_MASK) return sc; /* 0 is neutral; fills are −∞ (hatched) or clamp to the blue end */
    if (lo > hi) lo = hi = 0.0f; /* nothing finite */
    if (attn_tensor_stage(t) == ATTN_STAGE_BIAS) { /* ALiBi: 0 on the diagonal, down to −m_h·(t − 1): viridis from it to 0 */
        sc.cmap = APP_CMAP_SEQUENTIAL;
        sc.lo = lo < 0.0f ? lo : -1.0f;
        sc.hi = 0.0f;
        return sc;
    }
    if (kind == ATTN_CMAP_SEQUENTIAL) {
        sc.cmap = APP_CMAP_SEQUENTIAL;
        sc.lo = 0.0f;
        sc.hi = hi > 1.0f ? hi : 1.0f;
        return sc;
    }
    float m = fmaxf(fabsf(lo), fabsf(hi));
    if (!(m > 0.0f)) m = 1.0f;
    sc.lo = -m;
    sc.hi = m;
    return sc;
}

static inline void widen(float x, float *lo, float *hi)
{
    if (!isfinite(x) || x <= MASK_FILL_LIMIT) return;
    if (x < *lo) *lo = x;
    if (x > *hi) *hi = x;
}

app_scale app_view_scale(const attn_tensor *t)
{
    float lo = INFINITY, hi = -INFINITY;
    attn_tensor_fill_all(t); /* the scale is the whole stage's, logits' every row */
    for (size_t i = 0; i < t->count; i++) widen(t->data[i], &lo, &hi);
    return scale_of(t, lo, hi);
}

app_scale app_view_slice_scale(const attn_tensor *t, const app_slice *s)
{
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) widen(app_slice_at(s, i, j), &lo, &hi);
    return scale_of(t, lo, hi);
}

static const char *token_of(const attn_trace *tr, app_axis axis, int batch, int i)
{
    const attn_dims *d = &tr->dims;
    const attn_tokens *tk = &tr->tokens;
    int pos = i;
    switch (axis) {
    case APP_AXIS_QUERY: pos = d->P + i; break;
    case APP_AXIS_KEY:
        if (d->cross) tk = &tr->source;
        break;
    case APP_AXIS_NEW:
        if (d->cross) tk = &tr->source;
        else pos = d->P + i;
        break;
    case APP_AXIS_PAST: break;
    default: return NULL;
    }
    if (batch < 0) batch = 0;
    if (!tk->rows || batch >= tk->rows || pos < 0 || pos >= tk->len) return NULL;
    return attn_tokens_at(tk, batch, pos);
}

static const char *label(const attn_trace *tr, const app_view_slice *v, app_axis axis, int i, char *buf,
                         size_t size)
{
    const char *tok = token_of(tr, axis, v->batch, i);
    if (tok) snprintf(buf, size, "%s", tok);
    else if (axis == APP_AXIS_INPUT) snprintf(buf, size, "m%d", i);
    else if (axis == APP_AXIS_OUTPUT) snprintf(buf, size, "c%d", i);
    else if (axis == APP_AXIS_NONE) snprintf(buf, size, "%s", "");
    else if (axis == APP_AXIS_FEATURE) snprintf(buf, size, "c%d", i);
    else if (axis == APP_AXIS_VOCAB) snprintf(buf, size, "v%d", i);
    else if (axis == APP_AXIS_HEAD) snprintf(buf, size, "h%d", i);
    else if (axis == APP_AXIS_EXPERT) snprintf(buf, size, "e%d", i);
    else snprintf(buf, size, "%d", i);
    return buf;
}

const char *app_view_row_label(const attn_trace *tr, const app_view_slice *v, int i, char *buf, size_t size)
{
    return label(tr, v, v->row_axis, v->row0 + i, buf, size);
}

const char *app_view_col_label(const attn_trace *tr, const app_view_slice *v, int j, char *buf, size_t size)
{
    return label(tr, v, v->col_axis, v->col0 + j, buf, size);
}

void app_view_window(app_view_slice *v, int row0, int col0, int rows, int cols)
{
    app_slice *s = &v->slice;
    if (s->rows <= 0 || s->cols <= 0) return; /* no cells: no window inside them */
    row0 = row0 < 0 ? 0 : row0 >= s->rows ? s->rows - 1 : row0;
    col0 = col0 < 0 ? 0 : col0 >= s->cols ? s->cols - 1 : col0;
    rows = rows < 1 ? 1 : rows > s->rows - row0 ? s->rows - row0 : rows;
    cols = cols < 1 ? 1 : cols > s->cols - col0 ? s->cols - col0 : cols;
    s->data += row0 * s->row_stride + col0 * s->col_stride;
    if (s->mask) s->mask += row0 * s->mask_row_stride + col0 * s->mask_col_stride;
    s->rows = rows;
    s->cols = cols;
    v->row0 += row0;
    v->col0 += col0;
}

const char *app_view_format(float x, char *buf, size_t size)
{
    if (isnan(x)) snprintf(buf, size, "NaN");
    else if (isinf(x)) snprintf(buf, size, x < 0 ? "−∞" : "+∞");
    else if (x <= MASK_FILL_LIMIT || fabsf(x) >= 1000.0f) snprintf(buf, size, "%.0e", (double)x);
    else if (fabsf(x) >= 100.0f) snprintf(buf, size, "%.0f", (double)x);
    else if (fabsf(x) >= 10.0f) snprintf(buf, size, "%.1f", (double)x);
    else snprintf(buf, size, "%.2f", (double)x);
    /* "-0.00" reads as a sign error; the cell is zero to two places */
    if (!strcmp(buf, "-0.00")) snprintf(buf, size, "0.00");
    return buf;
}

/* ---- explanations: the engine's, in the interface language ---- */

static const char *translate(const char *msgid)
{
    return _(msgid);
}

const char *app_view_explain(const attn_trace *tr, const app_view_slice *v, int i, int j, char *buf, size_t size)
{
    char lb[80];
    attn_explain_cell c = {tr, v->tensor, v->batch < 0 ? 0 : v->batch, v->head < 0 ? 0 : v->head, i, j, NULL,
                           translate};
    if (i >= 0 && i < v->slice.rows) c.row_label = label(tr, v, v->row_axis, i, lb, sizeof lb);
    return attn_explain(&c, buf, size);
}

bool app_view_first_of(const attn_trace *tr, int layer, const attn_stage_id *ids, int n, int batch, int head,
                       app_view_slice *v)
{
    for (int i = 0; i < n; i++) {
        const attn_tensor *t = attn_trace_stage(tr, layer, ids[i]);
        if (t && !app_view_make_of(tr, t, batch, head, v)) return true;
    }
    return false;
}
