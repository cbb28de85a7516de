/* plot_ranked.c — a vocabulary-wide stage (logits, probs) as a ranked view.
 *
 * A row of probs holds one number per token of the vocabulary (3,072 for
 * tang): as a heatmap that is a strip of noise. Here each query row lists its
 * top-k next tokens, best first, as labelled bars with their probability (or
 * logit), and the token that really comes next in the text is framed, or named
 * with its rank at the right when it is not among them:
 *
 *     after    #1          #2          #3           next in the text
 *   4 光     ，████ 92%  。█   3%   ；▏ 1%        ， #1 92%
 *
 * The compare view puts three such panes side by side on the same rows: as
 * configured, toggled, and the largest changes. Each row is a hit (APP_ACT_ROW),
 * so a click selects it; y switches to the full heatmap (draw_plot_single). */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "engine/model/model_run.h"
#include "engine/tokenizer/tokenizer.h"
#include "i18n.h"

#define RANK_MAX_K 10
#define RANK_MAX_ROWS 160 /* rows drawn at once, at most (a line each: more than any window holds) */

bool draw_plot_ranked_wanted(const app_state *app, const app_view_slice *v)
{
    return !app->vocab_heatmap && v->col_axis == APP_AXIS_VOCAB && v->slice.rows > 0 && v->slice.cols > 0;
}

const char *draw_plot_ranked_format(float x, bool percent, bool sign, char *buf, size_t size)
{
    char mag[32];
    float a = sign ? fabsf(x) : x;
    if (isnan(x)) return snprintf(buf, size, "NaN"), buf;
    if (!percent) app_view_format(a, mag, sizeof mag);
    else if (a >= 0.0995f) snprintf(mag, sizeof mag, "%.0f%%", 100.0 * a);
    else if (a >= 0.000995f) snprintf(mag, sizeof mag, "%.1f%%", 100.0 * a);
    else if (a > 0.0f && !sign) snprintf(mag, sizeof mag, "<0.1%%");
    else if (a > 0.0f) snprintf(mag, sizeof mag, "0.0%%"); /* a change too small to print: "−0.0%" keeps its direction */
    else snprintf(mag, sizeof mag, "0%%");
    /* a change keeps its sign, with a true minus: "+52%", "−3.1%" */
    snprintf(buf, size, "%s%s", !sign ? "" : x > 0 ? "+" : x < 0 ? "−" : "", mag);
    return buf;
}

/* What a pane ranks: a slice of logits or probs, or (base set) the change
 * from base to s, ranked by its size. */
/* The token ids of the text the rows read, position by position (−1: a pad). */
typedef struct {
    const int *ids;
    int len;
    int *owned;                 /* what text_ids allocated */
} text_ids;

typedef struct {
    const text_ids *text;       /* what comes next in the text */
    int P;                      /* the trace's cached positions: row i is position P + i */
    const app_view_slice *v;
    const app_slice *base;      /* NULL, or the configured slice: values are s − base */
    const attn_tokenizer *tok;  /* the model's: an id that is no token of it is never ranked; NULL: every id is */
    bool percent;               /* probs: shown as % */
    float bar_max;              /* the value a full bar stands for */
    uint32_t colour;            /* the bars' (a change: red up, blue down) */
} ranked_src;

typedef struct {
    int id;
    float x;
} ranked_tok;

static float value(const ranked_src *r, int i, int j)
{
    float x = app_slice_at(&r->v->slice, i, j);
    return r->base ? x - app_slice_at(r->base, i, j) : x;
}

/* How a value ranks: itself, or a change's size. NaN ranks last. */
static float key(const ranked_src *r, float x)
{
    float k = r->base ? fabsf(x) : x;
    return isnan(k) ? -INFINITY : k;
}

/* Whether column j is a token (a vocab_size larger than the tokenizer leaves ids that are none). */
static bool is_token(const ranked_src *r, int j) { return !r->tok || attn_tokenizer_token(r->tok, j); }

/* The k best tokens of row i, best first (by insertion: k is small). Returns how many. */
static int top_k(const ranked_src *r, int i, ranked_tok *out, int k)
{
    int n = 0, V = r->v->slice.cols;
    for (int j = 0; j < V; j++) {
        if (!is_token(r, j)) continue;
        float x = value(r, i, j), kx = key(r, x);
        if (n == k && !(kx > key(r, out[n - 1].x))) continue;
        int at = n < k ? n++ : k - 1;
        while (at > 0 && kx > key(r, out[at - 1].x)) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = (ranked_tok){j, x};
    }
    return n;
}

/* Rank (1 = best) of token id in row i: one more than the tokens ahead of it. */
static int rank_of(const ranked_src *r, int i, int id)
{
    float kx = key(r, value(r, i, id));
    int ahead = 0;
    for (int j = 0; j < r->v->slice.cols; j++) ahead += is_token(r, j) && key(r, value(r, i, j)) > kx;
    return ahead + 1;
}

/* The ids of the text batch row v->batch of tr reads: the trace's own, or in
 * decode mode (the trace holds the tokens up to the step) those of the whole
 * text, tokenized again, for a text of one row. Free with text_ids_free. */
static text_ids text_ids_of(const app_state *app, const attn_trace *tr, const app_view_slice *v)
{
    text_ids t = {NULL, 0, NULL};
    int b = v->batch < 0 ? 0 : v->batch;
    if (!tr->token_ids || b >= tr->tokens.rows) return t;
    t.ids = tr->token_ids + (size_t)b * tr->tokens.len;
    t.len = tr->tokens.len;
    if (tr->dims.P > 0 && app_decoding(app) && app->model && tr->tokens.rows == 1) {
        attn_tokens tk;
        attn_error e;
        int *ids = NULL;
        if (attn_model_tokenize(app->model, &app->cfg, &tk, &ids, &e) == ATTN_OK) {
            if (tk.rows == 1 && tk.len >= t.len) {
                t.ids = t.owned = ids;
                t.len = tk.len;
                ids = NULL;
            }
            attn_tokens_free(&tk);
        }
        free(ids);
    }
    return t;
}

static void text_ids_free(text_ids *t)
{
    free(t->owned);
    *t = (text_ids){NULL, 0, NULL};
}

/* The token id that follows query row i of r in the text, or -1 (the last token, a pad, no model). */
static int next_token(const ranked_src *r, int i)
{
    int pos = r->P + r->v->row0 + i + 1;
    if (!r->text || pos < 1 || pos >= r->text->len) return -1;
    return r->text->ids[pos];
}

/* Token id as the heatmap's tooltips name it: the tokenizer's label, else v123. */
static const char *token_label(const app_state *app, int id, char *buf, size_t size)
{
    if (!app->model || !app->model->tok || !*attn_tokenizer_label(app->model->tok, id, buf, size))
        snprintf(buf, size, "v%d", id);
    return buf;
}

/* ---- where things go ------------------------------------------------------ */

/* The rows on screen: r0 .. r0 + n − 1, rh pixels apart from top. */
typedef struct {
    int r0, n, rh, top;
    int hl;                     /* the highlighted row (the selected one, else the one the side panel reads) */
} row_window;

/* Rows that fit in h pixels from top, at least a line each (up to two
 * lines), around row keep; when they do not all fit, a line is kept
 * free under them for the note. */
static row_window window_rows(int rows, int keep, int top, int h, int u)
{
    int min_h = u + u / 8, max_h = 2 * u;
    row_window w = {0, rows, 0, top, keep};
    if (rows * min_h > h) {
        h -= u + u / 4;
        w.n = draw_imax(1, draw_imin(h / min_h, RANK_MAX_ROWS));
        w.r0 = draw_imax(0, draw_imin(keep - w.n / 2, rows - w.n));
    }
    w.n = draw_imin(w.n, RANK_MAX_ROWS);
    w.rh = draw_imax(min_h, draw_imin(max_h, h / draw_imax(w.n, 1)));
    return w;
}

/* One pane's columns: k cells of cw pixels from x, each a token label tokw
 * wide, a bar and a value valw wide; then the next-token column, nw wide (0: none). */
typedef struct {
    int x, k, cw, tokw, valw, nx, nw;
    int right;                  /* the pane's right edge (a header may reach it) */
} pane_geom;

static pane_geom fit_pane(draw_list *dl, int x, int w, int tokw, bool percent, bool sign, bool next_col, int vocab)
{
    int u = draw_line_h(dl);
    char rank[16];
    snprintf(rank, sizeof rank, "#%d", vocab); /* the longest a rank prints */
    pane_geom g = {x, 0, 0, tokw, 0, 0, 0, x + w};
    /* the widest a value prints (draw_plot_ranked_format) */
    static const char *const widest[2][2][3] = {{{"−0.00", "1e+03", "−100"}, {"+−0.00", "+1e+03", "+100"}},
                                                 {{"100%", "<0.1%", "9.9%"}, {"+100%", "−9.9%", "−0.0%"}}};
    for (int i = 0; i < 3; i++) g.valw = draw_imax(g.valw, draw_text_w(dl, widest[percent][sign][i]));
    int min_cell = tokw + u / 4 + 3 * u / 2 + u / 4 + g.valw + u / 2;
    g.nw = next_col ? tokw + u / 4 + draw_text_w(dl, rank) + u / 3 + g.valw : 0;
    g.k = (w - g.nw) / min_cell;
    if (g.k < 2 && g.nw) { /* a narrow pane: the cells before the next-token column */
        g.nw = 0;
        g.k = w / min_cell;
    }
    g.k = draw_imax(1, draw_imin(g.k, RANK_MAX_K));
    g.cw = draw_imin((w - g.nw) / g.k, tokw + g.valw + 12 * u);
    g.nx = x + g.k * g.cw + u / 4;
    return g;
}

/* ---- drawing -------------------------------------------------------------- */

/* One cell: token label, a bar of x (from the left, or for a change from the
 * middle: up to the right, down to the left) on its track, and the value. */
static void cell(draw_list *dl, const app_state *app, const ranked_src *r, const pane_geom *g, int x, int y, int rh,
                 ranked_tok t, bool is_next)
{
    int u = draw_line_h(dl), ty = y + (rh - u) / 2;
    char lab[80], num[32];
    draw_text_fit(dl, token_label(app, t.id, lab, sizeof lab), x, ty, g->tokw, DRAW_WHITE);
    int bx = x + g->tokw + u / 4, bw = g->cw - g->tokw - g->valw - u / 4 - u / 4 - u / 2, bh = u - u / 3, by = ty + u / 6;
    if (bw >= 4) {
        draw_fill(dl, bx, by, bw, bh, DRAW_PANEL_HI);
        float f = isnan(t.x) ? 0.0f : fminf(1.0f, fabsf(t.x) / r->bar_max);
        if (r->base) {
            int half = bw / 2, len = (int)lroundf(f * (float)half);
            uint32_t c = app_cmap_argb(APP_CMAP_DIVERGING, t.x > 0 ? 0.92f : 0.08f);
            if (t.x > 0) draw_fill(dl, bx + half, by, draw_imax(len, 1), bh, c);
            else draw_fill(dl, bx + half - draw_imax(len, 1), by, draw_imax(len, 1), bh, c);
            draw_line_to(dl, bx + half, by - 2, bx + half, by + bh + 2, 1, DRAW_TEXT_DIM);
        } else {
            if (!r->percent && t.x < 0) f = 0.0f; /* a negative logit: no bar, its number says it */
            draw_fill(dl, bx, by, draw_imax((int)lroundf(f * (float)bw), 1), bh, r->colour);
        }
    }
    draw_plot_ranked_format(t.x, r->percent, r->base != NULL, num, sizeof num);
    draw_text(dl, num, bx + draw_imax(bw, 0) + u / 4, ty, DRAW_TEXT);
    if (is_next) draw_outline(dl, x - u / 6, y + 1, g->cw - u / 6, rh - 2, 2, DRAW_WHITE);
}

/* The next-token column of row i: the token, its rank and value here. */
static void next_cell(draw_list *dl, const app_state *app, const ranked_src *r, const pane_geom *g, int i, int id, int y,
                      int rh)
{
    int u = draw_line_h(dl), ty = y + (rh - u) / 2, x = g->nx;
    char lab[80], buf[48], num[32];
    draw_text_fit(dl, token_label(app, id, lab, sizeof lab), x, ty, g->tokw, DRAW_WHITE);
    x += g->tokw + u / 4;
    if (!r->base) { /* ranked first: the model predicted the text; else the rank stands out */
        int rank = rank_of(r, i, id);
        snprintf(buf, sizeof buf, "#%d", rank);
        x += draw_text(dl, buf, x, ty, rank == 1 ? DRAW_TEXT_DIM : DRAW_ERROR) + u / 3;
    }
    draw_text(dl, draw_plot_ranked_format(value(r, i, id), r->percent, r->base != NULL, num, sizeof num), x, ty, DRAW_TEXT);
}

/* The rows of one pane: each row's top cells and its next-token column. */
static void pane_rows(draw_list *dl, const app_state *app, const ranked_src *r, const pane_geom *g, const row_window *w)
{
    ranked_tok top[RANK_MAX_K];
    for (int n = 0; n < w->n; n++) {
        int i = w->r0 + n, y = w->top + n * w->rh;
        int nk = top_k(r, i, top, g->k), next = next_token(r, i);
        for (int j = 0; j < nk; j++) cell(dl, app, r, g, g->x + j * g->cw, y, w->rh, top[j], top[j].id == next && !r->base);
        if (g->nw && next >= 0) next_cell(dl, app, r, g, i, next, y, w->rh);
    }
}

/* Column headers over a pane at y: #1 … #k and the next-token column's. */
static void pane_header(draw_list *dl, const pane_geom *g, int y, bool change)
{
    char buf[16];
    for (int j = 0; j < g->k; j++) {
        snprintf(buf, sizeof buf, "#%d", j + 1);
        draw_text(dl, buf, g->x + j * g->cw, y, DRAW_TEXT_DIM);
    }
    /* TRANSLATORS: header of the ranked view's column naming the token that really comes next in the text */
    const char *full = change ? _("next: its change") : _("next in the text");
    if (g->nw) /* TRANSLATORS: the next-token column's header, short */
        draw_text_fit(dl, draw_text_w(dl, full) <= g->right - g->nx ? full : _("next"), g->nx, y, g->right - g->nx,
                      DRAW_TEXT_DIM);
}

/* The row labels (position and query token) right-aligned in lw pixels from
 * x, the highlighted row's framed across `right`; each row a hit selecting it. */
static void row_labels(draw_list *dl, const app_state *app, const app_view_slice *v, const row_window *w, int x, int lw,
                       int right)
{
    int u = draw_line_h(dl);
    char tok[96], num[16];
    for (int n = 0; n < w->n; n++) {
        int i = w->r0 + n, y = w->top + n * w->rh, ty = y + (w->rh - u) / 2;
        bool hl = i == w->hl;
        if (hl) {
            draw_fill(dl, x, y, right - x, w->rh, DRAW_PANEL);
            draw_outline(dl, x, y, right - x, w->rh, 2, DRAW_ACCENT);
        }
        const char *lab = app_view_row_label(&app->trace, v, i, tok, sizeof tok);
        int tw = draw_imin(draw_text_w(dl, lab), lw - u);
        snprintf(num, sizeof num, "%d", app->trace.dims.P + v->row0 + i);
        int nw = draw_text_w(dl, num);
        draw_text_fit(dl, lab, x + lw - u / 2 - tw, ty, lw - u, hl ? DRAW_ACCENT : DRAW_TEXT);
        if (x + lw - u / 2 - tw - u / 3 - nw >= x + u / 4) draw_text(dl, num, x + lw - u / 2 - tw - u / 3 - nw, ty, DRAW_TEXT_DIM);
        app_layout_hit(dl->layout, (app_rect){x, y, right - x, w->rh}, APP_ACT_ROW, i);
    }
}

/* Width of the row label column: the widest position and token shown, at most a fifth of w. */
static int label_width(draw_list *dl, const app_state *app, const app_view_slice *v, const row_window *w, int box_w)
{
    int u = draw_line_h(dl), lw = 0;
    char tok[96];
    for (int n = 0; n < w->n; n++)
        lw = draw_imax(lw, draw_text_w(dl, app_view_row_label(&app->trace, v, w->r0 + n, tok, sizeof tok)));
    char num[16];
    snprintf(num, sizeof num, "%d", app->trace.dims.P + v->row0 + w->r0 + w->n - 1);
    lw = draw_imin(lw, draw_imax(box_w / 5, 3 * u)) + draw_text_w(dl, num) + u / 3 + u;
    return draw_imax(lw, draw_text_w(dl, _("after")) + u); /* room for the column's header */
}

/* The widest label among the tokens the rows show (at most RANK_MAX_K each), at most 5 lines' worth. */
static int token_width(draw_list *dl, const app_state *app, const ranked_src *r, const row_window *w)
{
    int u = draw_line_h(dl), tw = draw_text_w(dl, "<0>");
    ranked_tok top[RANK_MAX_K];
    char lab[80];
    for (int n = 0; n < w->n; n++) {
        int k = top_k(r, w->r0 + n, top, RANK_MAX_K), next = next_token(r, w->r0 + n);
        for (int j = 0; j < k; j++) tw = draw_imax(tw, draw_text_w(dl, token_label(app, top[j].id, lab, sizeof lab)));
        if (next >= 0) tw = draw_imax(tw, draw_text_w(dl, token_label(app, next, lab, sizeof lab)));
    }
    return draw_imin(tw, 5 * u);
}

/* Under windowed rows: which are shown, with ▲ ▼ that move the window (a click selects the row beyond it). */
static void window_note(draw_list *dl, const row_window *w, int rows, int x, int y, int right)
{
    if (w->n >= rows) return;
    int u = draw_line_h(dl);
    char buf[160];
    /* TRANSLATORS: under the ranked view when not every query row fits: the rows shown, of how many */
    snprintf(buf, sizeof buf, _("rows %d–%d of %d"), w->r0, w->r0 + w->n - 1, rows);
    x += draw_text_fit(dl, buf, x, y, right - x, DRAW_TEXT_DIM) + u / 2;
    const char *arrow[2] = {"▲", "▼"};
    int to[2] = {w->r0 - 1, w->r0 + w->n};
    for (int a = 0; a < 2; a++) {
        if (to[a] < 0 || to[a] >= rows) continue;
        int aw = draw_text_w(dl, arrow[a]) + u;
        draw_fill(dl, x, y - 2, aw, u + 4, DRAW_PANEL_HI);
        draw_text(dl, arrow[a], x + u / 2, y, DRAW_WHITE);
        app_layout_hit(dl->layout, (app_rect){x, y - 2, aw, u + 4}, APP_ACT_ROW, to[a]);
        x += aw + u / 3;
    }
    /* TRANSLATORS: after the ▲ ▼ buttons under the ranked view */
    draw_text_fit(dl, _("earlier / later rows (or click a row)"), x, y, right - x, DRAW_TEXT_DIM);
}

static ranked_src source(const app_state *app, const text_ids *text, const attn_trace *tr, const app_view_slice *v,
                         const app_slice *base, uint32_t colour)
{
    bool probs = attn_tensor_stage(v->tensor) == ATTN_STAGE_PROBS;
    ranked_src r = {text, tr->dims.P, v, base, app->model ? app->model->tok : NULL, probs, 1.0f, colour};
    if (!probs) { /* logits: a full bar is the largest logit of the slice */
        float m = 0.0f;
        for (int i = 0; i < v->slice.rows; i++)
            for (int j = 0; j < v->slice.cols; j++)
                if (is_token(&r, j)) m = fmaxf(m, app_slice_at(&v->slice, i, j)); /* skips NaN */
        r.bar_max = m > 0.0f && isfinite(m) ? m : 1.0f;
    }
    return r;
}

/* The highlighted row: the selected one, else the one the side panel reads. */
static int highlighted(const app_state *app, const app_view_slice *v)
{
    int row = app->view.row >= 0 ? app->view.row : app_query_row(app);
    return draw_imax(0, draw_imin(row - v->row0, v->slice.rows - 1));
}

/* Text s at (x, y) when it fits in w, else the shorter `brief` (cut if it must). */
static void text_or_brief(draw_list *dl, const char *s, const char *brief, int x, int y, int w, uint32_t argb)
{
    draw_text_fit(dl, draw_text_w(dl, s) <= w ? s : brief, x, y, w, argb);
}

void draw_plot_ranked(draw_list *dl, const app_state *app, const app_view_slice *v, app_rect box)
{
    int u = draw_line_h(dl), rows = v->slice.rows;
    text_ids text = text_ids_of(app, &app->trace, v);
    ranked_src r = source(app, &text, &app->trace, v, NULL, DRAW_ACCENT);
    if (r.percent)
        /* TRANSLATORS: the ranked view's caption over probs; the next string is its short form */
        text_or_brief(dl, _("each position's most likely next tokens, best first"), _("most likely next tokens"),
                      box.x, box.y, box.w, DRAW_TEXT);
    else
        text_or_brief(dl, _("each position's highest-scoring next tokens, best first"),
                      _("highest-scoring next tokens"), box.x, box.y, box.w, DRAW_TEXT);
    bool any_next = text.len > 0;
    /* TRANSLATORS: the ranked view's legend; the next string is its short form */
    text_or_brief(dl, any_next ? _("white frame: the text's next token · click a row · y: the full heatmap")
                               : _("click a row · y: the full heatmap"),
                  any_next ? _("white frame: next in the text · y: heatmap") : _("y: the full heatmap"), box.x,
                  box.y + u, box.w, DRAW_TEXT_DIM);
    int head_y = box.y + 2 * u + u / 2, top = head_y + u + u / 4;
    row_window w = window_rows(rows, highlighted(app, v), top, box.y + box.h - top, u);
    int lw = label_width(dl, app, v, &w, box.w);
    int tokw = token_width(dl, app, &r, &w);
    pane_geom g = fit_pane(dl, box.x + lw, box.w - lw, tokw, r.percent, false, any_next, v->slice.cols);
    int right = g.nw ? g.nx + g.nw : g.x + g.k * g.cw;
    /* TRANSLATORS: header of the ranked view's first column: the query token the predictions follow */
    draw_text_fit(dl, _("after"), box.x + u / 4, head_y, lw - u / 2, DRAW_TEXT_DIM);
    pane_header(dl, &g, head_y, false);
    row_labels(dl, app, v, &w, box.x, lw, right);
    pane_rows(dl, app, &r, &g, &w);
    window_note(dl, &w, rows, box.x, w.top + w.n * w.rh + u / 4, box.x + box.w);
    text_ids_free(&text);
}

void draw_plot_ranked_compare(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box)
{
    int u = draw_line_h(dl), rows = a->slice.rows;
    char buf[200];
    app_view_slice b;
    bool have_b = app->has_alt && !app_view_make(&app->alt, a->tensor->name, app->view.batch, app->view.head, &b) &&
                  b.slice.rows == rows && b.slice.cols == a->slice.cols;
    text_ids text = text_ids_of(app, &app->trace, a);
    ranked_src ra = source(app, &text, &app->trace, a, NULL, DRAW_ACCENT);
    ranked_src rb = have_b ? source(app, &text, &app->alt, &b, NULL, DRAW_ERROR) : ra;
    ranked_src rd = have_b ? source(app, &text, &app->alt, &b, &a->slice, 0) : ra;
    if (have_b && !rd.percent) { /* a change of logits: a full half-bar is the largest change on screen */
        float m = 0;
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < a->slice.cols; j++)
                if (is_token(&rd, j)) m = fmaxf(m, fabsf(value(&rd, i, j)));
        rd.bar_max = m > 0 ? m : 1.0f;
    }
    text_or_brief(dl, _("white frame: the text's next token · click a row · y: the full heatmap"),
                  _("white frame: next in the text · y: heatmap"), box.x, box.y, box.w, DRAW_TEXT_DIM);
    int title_y = box.y + u + u / 2, head_y = title_y + u + u / 4, top = head_y + u + u / 4;
    row_window w = window_rows(rows, highlighted(app, a), top, box.y + box.h - top, u);
    int lw = label_width(dl, app, a, &w, box.w);
    int tokw = token_width(dl, app, &ra, &w);
    if (have_b) tokw = draw_imax(tokw, draw_imax(token_width(dl, app, &rb, &w), token_width(dl, app, &rd, &w)));
    int pw = (box.w - lw) / 3;
    ranked_src *src[3] = {&ra, &rb, &rd};
    pane_geom g[3];
    for (int p = 0; p < 3; p++)
        g[p] = fit_pane(dl, box.x + lw + p * pw, pw - u, tokw, ra.percent, p == 2, true, a->slice.cols);
    /* every pane the same number of cells: the row reads across */
    int k = draw_imin(g[0].k, draw_imin(g[1].k, g[2].k));
    for (int p = 0; p < 3; p++) {
        g[p].k = k;
        g[p].cw = draw_imin((pw - u - g[p].nw) / k, tokw + g[p].valw + 12 * u);
        g[p].nx = g[p].x + k * g[p].cw + u / 4;
    }
    draw_text_fit(dl, _("after"), box.x + u / 4, head_y, lw - u / 2, DRAW_TEXT_DIM);
    draw_text_fit(dl, _("as configured"), g[0].x, title_y, pw - u, DRAW_TEXT_DIM);
    row_labels(dl, app, a, &w, box.x, lw, box.x + box.w);
    pane_header(dl, &g[0], head_y, false);
    pane_rows(dl, app, &ra, &g[0], &w);
    if (!have_b) {
        draw_text_fit(dl, app_busy(app, NULL, NULL, NULL) ? _("computing the toggled version…")
                                                           : _("no toggled version to show (see the status line)"),
                    g[1].x, title_y, box.x + box.w - g[1].x, DRAW_TEXT_DIM);
    } else {
        snprintf(buf, sizeof buf, _("%s toggled"), app_compare_name(app->view.compare));
        /* TRANSLATORS: the toggled pane's title when the longer one does not fit */
        draw_text_fit(dl, draw_text_w(dl, buf) <= pw - u ? buf : _("toggled"), g[1].x, title_y, pw - u, DRAW_TEXT_DIM);
        /* TRANSLATORS: title of the compare view's third ranked pane: the tokens whose value changed most */
        const char *ch = _("largest changes (toggled − configured)");
        /* TRANSLATORS: the same, short, for a narrow pane */
        draw_text_fit(dl, draw_text_w(dl, ch) <= pw - u ? ch : _("largest changes"), g[2].x, title_y, pw - u, DRAW_TEXT_DIM);
        for (int p = 1; p < 3; p++) {
            pane_header(dl, &g[p], head_y, p == 2);
            pane_rows(dl, app, src[p], &g[p], &w);
        }
        for (int p = 1; p < 3; p++) /* the panes apart */
            draw_line_to(dl, g[p].x - u / 2, title_y, g[p].x - u / 2, w.top + w.n * w.rh, 1, DRAW_PANEL_HI);
    }
    window_note(dl, &w, rows, box.x, w.top + w.n * w.rh + u / 4, box.x + box.w);
    text_ids_free(&text);
}
