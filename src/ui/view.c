/* view.c — the 2-D slice, colour scale, labels and explanation of a stage. */
#include "view.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"

#define MASK_FILL_LIMIT (-1e8f) /* finite values below this are mask fills, not data */

int ui_view_kv_head(const attn_dims *d, int head)
{
    return attn_kv_head(d, head);
}

static ui_axis axis_of(const char *name, const char *stage)
{
    if (!strcmp(name, "s")) return UI_AXIS_QUERY;
    if (!strcmp(name, "t")) return UI_AXIS_KEY;
    if (!strcmp(name, "n")) return UI_AXIS_NEW;
    if (!strcmp(name, "P")) return UI_AXIS_PAST;
    if (!strcmp(name, "d") && stage[0] == 'w') return UI_AXIS_INPUT;
    return UI_AXIS_FEATURE;
}

int ui_view_make(const attn_trace *tr, const char *stage, int batch, int head, ui_view_slice *v)
{
    const attn_tensor *t = attn_trace_find(tr, stage);
    memset(v, 0, sizeof *v);
    v->batch = v->head = v->kv_head = -1;
    if (!t || t->ndim < 1) return -1;
    const attn_dims *d = &tr->dims;
    v->tensor = t;

    attn_matrix mx;
    attn_trace_matrix(tr, stage, batch, head, &mx);
    char (*names)[8] = mx.axes;
    bool named = names[0][0] != '\0';
    v->batch = mx.batch;
    v->head = mx.head;
    v->kv_head = mx.kv_head;
    v->head_axis = mx.head_axis;

    int rows_axis = t->ndim >= 2 ? t->ndim - 2 : -1;
    int cols_axis = t->ndim - 1;
    v->slice.data = mx.data;
    v->slice.rows = rows_axis >= 0 ? (int)t->shape[rows_axis] : 1;
    v->slice.cols = (int)t->shape[cols_axis];
    v->slice.row_stride = v->slice.cols;
    v->slice.col_stride = 1;
    if (named) {
        v->row_axis = rows_axis >= 0 ? axis_of(names[rows_axis], stage) : UI_AXIS_NONE;
        v->col_axis = axis_of(names[cols_axis], stage);
    } else {
        v->row_axis = rows_axis >= 0 ? UI_AXIS_FEATURE : UI_AXIS_NONE;
        v->col_axis = UI_AXIS_FEATURE;
    }

    /* stages after the mask: the cells it masks are drawn masked */
    const attn_tensor *m = attn_trace_find(tr, "mask");
    if ((!strcmp(stage, "weights") || !strcmp(stage, "weights_dropout") || !strcmp(stage, "masked_scores") ||
         !strcmp(stage, "mask")) &&
        m && m->ndim == 4 && t->ndim == 4 && m->shape[0] == t->shape[0] && m->shape[2] == t->shape[2] &&
        m->shape[3] == t->shape[3]) {
        int b = v->batch < 0 ? 0 : v->batch;
        v->slice.mask = m->data + (size_t)b * m->shape[2] * m->shape[3];
        v->slice.mask_row_stride = m->shape[3];
        v->slice.mask_col_stride = 1;
    }

    /* q/k/v and the projections: outline the per-head column blocks */
    if (named && d->k > 0) {
        const char *cn = names[cols_axis];
        if (!strcmp(cn, "g*k") || (!strcmp(cn, "d") && strcmp(stage, "x") && strcmp(stage, "x_past") &&
                                   strcmp(stage, "memory") && strcmp(stage, "w_o"))) {
            v->block = d->k;
            bool kv = !strcmp(cn, "g*k");
            v->head = head;
            v->kv_head = ui_view_kv_head(d, head);
            v->block_current = kv ? v->kv_head : head;
        } else if (!strcmp(stage, "w_o")) {
            v->block = d->k;
            v->block_on_rows = true;
            v->head = head;
            v->block_current = head;
        }
    }
    return 0;
}

ui_scale ui_view_scale(const attn_tensor *t)
{
    ui_scale sc = {UI_CMAP_DIVERGING, -1.0f, 1.0f};
    const char *nm = t->name;
    bool weights = !strcmp(nm, "weights") || !strcmp(nm, "weights_dropout");
    if (!strcmp(nm, "mask")) return sc; /* 0 is neutral; fills are −∞ (hatched) or clamp to the blue end */
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < t->count; i++) {
        float x = t->data[i];
        if (!isfinite(x) || x <= MASK_FILL_LIMIT) continue;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    if (lo > hi) lo = hi = 0.0f; /* nothing finite */
    if (weights) {
        sc.cmap = UI_CMAP_SEQUENTIAL;
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

static const char *token_of(const attn_trace *tr, ui_axis axis, int batch, int i)
{
    const attn_dims *d = &tr->dims;
    const attn_tokens *tk = &tr->tokens;
    int pos = i;
    switch (axis) {
    case UI_AXIS_QUERY: pos = d->P + i; break;
    case UI_AXIS_KEY:
        if (d->cross) tk = &tr->source;
        break;
    case UI_AXIS_NEW:
        if (d->cross) tk = &tr->source;
        else pos = d->P + i;
        break;
    case UI_AXIS_PAST: break;
    default: return NULL;
    }
    if (batch < 0) batch = 0;
    if (!tk->rows || batch >= tk->rows || pos < 0 || pos >= tk->len) return NULL;
    return attn_tokens_at(tk, batch, pos);
}

static const char *label(const attn_trace *tr, const ui_view_slice *v, ui_axis axis, int i, char *buf,
                         size_t size)
{
    const char *tok = token_of(tr, axis, v->batch, i);
    if (tok) snprintf(buf, size, "%s", tok);
    else if (axis == UI_AXIS_INPUT) snprintf(buf, size, "m%d", i);
    else if (axis == UI_AXIS_NONE) snprintf(buf, size, "%s", "");
    else if (axis == UI_AXIS_FEATURE) snprintf(buf, size, "c%d", i);
    else snprintf(buf, size, "%d", i);
    return buf;
}

const char *ui_view_row_label(const attn_trace *tr, const ui_view_slice *v, int i, char *buf, size_t size)
{
    return label(tr, v, v->row_axis, i, buf, size);
}

const char *ui_view_col_label(const attn_trace *tr, const ui_view_slice *v, int j, char *buf, size_t size)
{
    return label(tr, v, v->col_axis, j, buf, size);
}

const char *ui_view_format(float x, char *buf, size_t size)
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

/* ---- explanations ------------------------------------------------------ */

typedef struct {
    char *p;
    size_t left;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    if (b->left <= 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p, b->left, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= b->left) n = (int)b->left - 1;
    b->p += n;
    b->left -= (size_t)n;
}

/* n as Unicode subscript digits: 12 → "₁₂" */
static const char *sub(int n, char *buf, size_t size)
{
    static const char *const D[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
    char digits[16];
    snprintf(digits, sizeof digits, "%d", n < 0 ? -n : n);
    buf[0] = '\0';
    size_t used = 0;
    for (const char *c = digits; *c && used + 4 < size; c++) {
        memcpy(buf + used, D[*c - '0'], 3);
        used += 3;
        buf[used] = '\0';
    }
    return buf;
}

static const char *num(float x, char *buf, size_t size)
{
    if (isnan(x)) snprintf(buf, size, "NaN");
    else if (isinf(x)) snprintf(buf, size, x < 0 ? "−∞" : "+∞");
    else if (x != 0.0f && (fabsf(x) >= 1e5f || fabsf(x) < 1e-3f)) snprintf(buf, size, "%.3g", (double)x);
    else snprintf(buf, size, "%.3f", (double)x);
    return buf;
}

/* Row `row` (length k) of a (b, heads, n, k) tensor, or NULL if the shape does not fit. */
static const float *row4(const attn_tensor *t, int b, int hh, int row, int k)
{
    if (!t || t->ndim != 4 || b >= t->shape[0] || hh >= t->shape[1] || row >= t->shape[2] || t->shape[3] != k)
        return NULL;
    return t->data + (((size_t)b * t->shape[1] + hh) * t->shape[2] + row) * t->shape[3];
}

static bool mask_reason(const attn_trace *tr, int b, int i, int j, sbuf *o)
{
    const attn_dims *d = &tr->dims;
    const attn_tokens *keys = d->cross ? &tr->source : &tr->tokens;
    bool pad = keys->rows && b < keys->rows && j < keys->len && attn_tokens_is_pad(keys, b, j) && tr->cfg.pad_mask;
    bool reversed = tr->cfg.causal == ATTN_CAUSAL_REVERSED && !d->cross;
    bool future = !reversed && tr->cfg.causal && !d->cross && j > d->P + i;
    bool past = reversed && j < d->P + i;
    /* the prose after "mask[i, j] = value" */
    if (past && pad) put(o, _(": key %d is in the past of query %d, and padding"), j, d->P + i);
    else if (future && pad) put(o, _(": key %d is in the future of query %d, and padding"), j, d->P + i);
    else if (future) put(o, _(": key %d is in the future of query %d (causal)"), j, d->P + i);
    else if (past) put(o, _(": key %d is in the past of query %d (reversed causal mask)"), j, d->P + i);
    else if (pad) put(o, _(": key %d is <pad> (padding mask)"), j);
    return future || past || pad;
}

const char *ui_view_explain(const attn_trace *tr, const ui_view_slice *v, int i, int j, char *buf, size_t size)
{
    sbuf o = {buf, size};
    buf[0] = '\0';
    const attn_tensor *t = v->tensor;
    if (!t || i < 0 || j < 0 || i >= v->slice.rows || j >= v->slice.cols) return buf;
    const attn_dims *d = &tr->dims;
    const char *nm = t->name;
    float x = ui_slice_at(&v->slice, i, j);
    char a[32], b2[32], c[32], si[16], sj[16];
    int b = v->batch < 0 ? 0 : v->batch;
    int h = v->head < 0 ? 0 : v->head;
    int g = v->kv_head < 0 ? 0 : v->kv_head;
    int k = d->k;

    /* indices, in the tensor's own names */
    if (!strcmp(nm, "scores") || !strcmp(nm, "masked_scores") || !strcmp(nm, "weights") ||
        !strcmp(nm, "weights_dropout"))
        put(&o, "%s[h=%d, i=%d, j=%d] = ", nm, h, i, j);
    else if (!strcmp(nm, "mask"))
        put(&o, "mask[i=%d, j=%d] = ", i, j);
    else if (v->head_axis == 'h')
        put(&o, "%s[h=%d, %s=%d, c=%d] = ", nm, h, v->row_axis == UI_AXIS_KEY ? "j" : "i", i, j);
    else if (v->head_axis == 'g')
        put(&o, "%s[g=%d, %s=%d, c=%d] = ", nm, g, v->row_axis == UI_AXIS_KEY ? "j" : "i", i, j);
    else if (t->ndim == 2)
        put(&o, "%s[m=%d, c=%d] = ", nm, i, j);
    else
        put(&o, "%s[i=%d, c=%d] = ", nm, i, j);

    if (!strcmp(nm, "scores")) {
        const attn_tensor *q = attn_trace_find(tr, "q_rope") ? attn_trace_find(tr, "q_rope") : attn_trace_find(tr, "q_heads");
        const float *qi = row4(q, b, h, i, k), *kj = row4(attn_trace_find(tr, "k_expanded"), b, h, j, k);
        if (qi && kj) {
            double dot = 0;
            for (int c2 = 0; c2 < k; c2++) dot += (double)qi[c2] * kj[c2];
            if (!tr->cfg.scale) /* the no-scale pitfall: the plain dot product */
                put(&o, _("q%s·k%s = %s (not divided by √%d)"), sub(i, si, sizeof si), sub(j, sj, sizeof sj),
                    num(x, c, sizeof c), k);
            else
                put(&o, "q%s·k%s / √%d = %s / %s = %s", sub(i, si, sizeof si), sub(j, sj, sizeof sj), k,
                    num((float)dot, a, sizeof a), num(sqrtf((float)k), b2, sizeof b2), num(x, c, sizeof c));
            return buf;
        }
    } else if (!strcmp(nm, "mask")) {
        put(&o, "%s", num(x, a, sizeof a));
        if (!mask_reason(tr, b, i, j, &o)) put(&o, _(": query %d may look at key %d"), d->P + i, j);
        return buf;
    } else if (!strcmp(nm, "masked_scores")) {
        const attn_tensor *s = attn_trace_find(tr, "scores"), *m = attn_trace_find(tr, "mask");
        if (s && m && s->ndim == 4 && m->ndim == 4) {
            float sv = attn_tensor_at4(s, b, h, i, j), mv = attn_tensor_at4(m, b, 0, i, j);
            put(&o, "scores + mask = %s + ", num(sv, a, sizeof a));
            put(&o, mv < 0 ? "(%s)" : "%s", num(mv, b2, sizeof b2));
            put(&o, " = %s", num(x, c, sizeof c));
            return buf;
        }
    } else if (!strcmp(nm, "weights")) {
        const attn_tensor *ms = attn_trace_find(tr, "masked_scores");
        if (ms && ms->ndim == 4 && ms->shape[3] == v->slice.cols) {
            const float *row = ms->data + (((size_t)b * ms->shape[1] + h) * ms->shape[2] + i) * ms->shape[3];
            float mx = -INFINITY;
            for (int jj = 0; jj < v->slice.cols; jj++) mx = fmaxf(mx, row[jj]);
            if (mx == -INFINITY) {
                put(&o, _("0: query %d has no key it may look at, so its row is all zeros"), d->P + i);
                return buf;
            }
            double sum = 0;
            for (int jj = 0; jj < v->slice.cols; jj++) sum += exp((double)row[jj] - mx);
            double e = exp((double)row[j] - mx);
            put(&o, "exp(%s − %s) / Σⱼ exp(…) = %s / %s = %s", num(row[j], a, sizeof a), num(mx, b2, sizeof b2),
                num((float)e, c, sizeof c), num((float)sum, si, sizeof si), num(x, sj, sizeof sj));
            return buf;
        }
    } else if (!strcmp(nm, "weights_dropout")) {
        const attn_tensor *w = attn_trace_find(tr, "weights");
        if (w && w->ndim == 4) {
            float wv = attn_tensor_at4(w, b, h, i, j);
            float p = tr->cfg.dropout;
            if (x == 0.0f && wv != 0.0f) put(&o, _("0: dropped (weights was %s, p = %g)"), num(wv, a, sizeof a), p);
            else put(&o, "weights / (1 − p) = %s / %g = %s", num(wv, a, sizeof a), 1.0 - p, num(x, c, sizeof c));
            return buf;
        }
    } else if (!strcmp(nm, "context")) {
        const attn_tensor *w = attn_trace_find(tr, "weights_dropout") ? attn_trace_find(tr, "weights_dropout") : attn_trace_find(tr, "weights");
        const attn_tensor *ve = attn_trace_find(tr, "v_expanded");
        if (w && ve && w->ndim == 4 && ve->ndim == 4 && ve->shape[3] == k) {
            double acc = 0;
            int tt = (int)w->shape[3];
            for (int jj = 0; jj < tt; jj++) acc += (double)attn_tensor_at4(w, b, h, i, jj) * attn_tensor_at4(ve, b, h, jj, j);
            put(&o, "Σⱼ weights[i=%d, j]·v[j, c=%d] = %s", i, j, num((float)acc, a, sizeof a));
            return buf;
        }
    } else if (!strcmp(nm, "q_heads") || !strcmp(nm, "k_heads") || !strcmp(nm, "v_heads")) {
        int hh = nm[0] == 'q' ? h : g;
        put(&o, "%c[i=%d, c=%d·%d+%d=%d] = %s", nm[0], i, hh, k, j, hh * k + j,
            num(x, a, sizeof a));
        return buf;
    } else if (!strcmp(nm, "q_rope") || !strcmp(nm, "k_rope")) {
        int pos = (nm[0] == 'q' || !d->cross) ? d->P + i : i;
        int m = j / 2;
        double ang = pos * pow(tr->cfg.rope_theta, -2.0 * m / k);
        put(&o, _("pair (%d, %d) of %s_heads rotated by %d·θ^(−%d/%d) = %.3f rad → %s"), 2 * m, 2 * m + 1,
            nm[0] == 'q' ? "q" : "k", pos, 2 * m, k, ang, num(x, a, sizeof a));
        return buf;
    } else if (!strcmp(nm, "k_cache") || !strcmp(nm, "v_cache")) {
        if (i < d->P) put(&o, _("%s: cached at an earlier step (position %d)"), num(x, a, sizeof a), i);
        else put(&o, _("%s: new this step (position %d)"), num(x, a, sizeof a), i);
        return buf;
    } else if (!strcmp(nm, "k_expanded") || !strcmp(nm, "v_expanded")) {
        put(&o, _("%s of kv head %d = %d / (%d/%d) (repeat_kv)"), num(x, a, sizeof a), g, h, d->h, d->g);
        return buf;
    } else if (!strcmp(nm, "merged")) {
        put(&o, "context[h=%d, i=%d, c=%d] = %s", k ? j / k : 0, i, k ? j % k : j, num(x, a, sizeof a));
        return buf;
    } else if (!strcmp(nm, "q") || !strcmp(nm, "k") || !strcmp(nm, "v") || !strcmp(nm, "out")) {
        const char *src = !strcmp(nm, "out") ? "merged" : (d->cross && nm[0] != 'q') ? "memory" : "x";
        const char *w = nm[0] == 'q' ? "W_Q" : nm[0] == 'k' ? "W_K" : nm[0] == 'v' ? "W_V" : "W_O";
        put(&o, "%s%s · %s[:, %d] = %s", src, sub(i, si, sizeof si), w, j, num(x, a, sizeof a));
        if (k && strcmp(nm, "out")) put(&o, nm[0] == 'q' ? _("  (query head %d)") : _("  (kv head %d)"), j / k);
        if (!strcmp(nm, "out") && tr->cfg.train && tr->cfg.dropout > 0) put(&o, "%s", _(", after dropout"));
        return buf;
    } else if (!strcmp(nm, "x") || !strcmp(nm, "x_past") || !strcmp(nm, "memory")) {
        char tb[80];
        put(&o, "embed(“%s”)[%d] = %s", label(tr, v, v->row_axis, i, tb, sizeof tb), j, num(x, a, sizeof a));
        return buf;
    } else if (nm[0] == 'w' && nm[1] == '_' && t->ndim == 2) {
        put(&o, "%s", num(x, a, sizeof a));
        if (k) put(&o, v->block_on_rows ? _("  (input from head %d)") : nm[2] == 'q' ? _("  (feeds head %d)") : _("  (feeds kv head %d)"),
                   (v->block_on_rows ? i : j) / k);
        return buf;
    }
    put(&o, "%s", num(x, a, sizeof a));
    return buf;
}
