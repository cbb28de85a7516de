/* plot.c — labelled heatmaps, the all-heads grid, the compare view, bar charts. */
#include "plot.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "i18n.h"

static const float NAN_CELL[1] = {NAN};


static int add_area(app_layout *l, app_rect r, const app_view_slice *v, int head, int pane, const char *stage)
{
    if (l->n_areas >= APP_MAX_AREAS) return -1;
    app_heat_area *a = &l->areas[l->n_areas];
    *a = (app_heat_area){r, v->slice.rows, v->slice.cols, head, pane, "", v->row0, v->col0};
    snprintf(a->stage, sizeof a->stage, "%s", stage);
    return l->n_areas++;
}

/* A cell drawn as masked: −∞, or covered by the slice's mask. */
static bool masked_at(const app_slice *s, int i, int j)
{
    float v = app_slice_at(s, i, j);
    return (isinf(v) && v < 0) || (s->mask && s->mask[i * s->mask_row_stride + j * s->mask_col_stride] != 0);
}

enum { HAS_MASKED = 1, HAS_NAN = 2, HAS_DROPPED = 4 };

/* Which special cells the slice has, for the colour bar's legend. */
/* Whether s has NaN or masked cells: a scan of every cell (16 million at
 * s = 4096), done once per slice of a trace and remembered in the draw list.
 * A slice computed for the frame (a difference) is scanned every time: its
 * numbers change with the head while its memory stays the same. */
static int specials(draw_list *dl, unsigned generation, const app_view_slice *v, const app_slice *s)
{
    int f = 0;
    const attn_tensor *t = v->tensor;
    bool traced = t && s->data >= t->data && s->data < t->data + t->count;
    if (traced && draw_list_memo(dl, generation, s, &f)) return f;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) {
            if (isnan(app_slice_at(s, i, j))) f |= HAS_NAN;
            else if (masked_at(s, i, j)) f |= HAS_MASKED;
        }
    if (traced) draw_list_memo_put(dl, generation, s, f);
    return f;
}

static int colorbar_width(draw_list *dl)
{
    return draw_line_h(dl) + draw_text_w(dl, "−0.00") + draw_line_h(dl);
}

/* A frame inside cell c: a weight dropout set to 0, told apart from a small one. */
static void dropped_mark(draw_list *dl, app_rect c)
{
    int m = draw_imax(1, draw_imin(c.w, c.h) / 6), t = draw_imin(c.w, c.h) >= 12 ? 2 : 1;
    draw_outline(dl, c.x + m, c.y + m, c.w - 2 * m, c.h - 2 * m, t, DRAW_ERROR);
}

/* A vertical colour bar of sc at (x, y, h), labelled with its range; a hatch
 * swatch underneath when the picture has masked cells, a checkerboard one when
 * it has NaN cells (flags: HAS_MASKED, HAS_NAN). The bar is shortened so that
 * the swatches end above bottom. */
static void colorbar(draw_list *dl, const app_scale *sc, int x, int y, int h, int flags, int bottom)
{
    int u = draw_line_h(dl), bw = u * 3 / 4;
    int legend = u / 2 + (flags & HAS_MASKED ? 2 * u + u / 2 : 0) + (flags & HAS_NAN ? 2 * u + u / 2 : 0) +
                 (flags & HAS_DROPPED ? 2 * u : 0);
    h = draw_imin(h, bottom - y - legend);
    if (h < 3 * u) h = 3 * u;
    int steps = draw_imin(h, 96);
    for (int k = 0; k < steps; k++) {
        int y0 = y + k * h / steps, y1 = y + (k + 1) * h / steps;
        float v = sc->hi - (sc->hi - sc->lo) * (k + 0.5f) / steps;
        draw_fill(dl, x, y0, bw, y1 - y0, app_heat_color(sc, v));
    }
    draw_outline(dl, x - 1, y - 1, bw + 2, h + 2, 1, DRAW_TEXT_DIM);
    char buf[32];
    draw_text(dl, app_view_format(sc->hi, buf, sizeof buf), x + bw + 4, y - u / 4, DRAW_TEXT);
    draw_text(dl, app_view_format(sc->lo, buf, sizeof buf), x + bw + 4, y + h - u + u / 4, DRAW_TEXT);
    if (sc->cmap == APP_CMAP_DIVERGING && h >= 5 * u) draw_text(dl, "0", x + bw + 4, y + h / 2 - u / 2, DRAW_TEXT_DIM);
    y += h + u / 2;
    if (flags & HAS_MASKED) {
        draw_hatch(dl, x, y, bw, u);
        draw_text(dl, "−∞", x + bw + 4, y, DRAW_TEXT);
        /* TRANSLATORS: legend under the hatched −∞ swatch of the colour bar; keep it short */
        draw_text(dl, _("masked"), x, y + u, DRAW_TEXT_DIM);
        y += 2 * u + u / 2;
    }
    if (flags & HAS_NAN) {
        app_slice one = {NAN_CELL, 1, 1, 1, 1, NULL, 0, 0};
        draw_heatmap(dl, 1, &one, sc, x, y, bw, u, 0);
        draw_text(dl, "NaN", x + bw + 4, y, DRAW_TEXT);
        draw_text(dl, "0/0", x, y + u, DRAW_TEXT_DIM); /* where softmax's NaN comes from */
        y += 2 * u + u / 2;
    }
    if (flags & HAS_DROPPED) {
        draw_fill(dl, x, y, bw, u, app_heat_color(sc, 0.0f));
        dropped_mark(dl, (app_rect){x, y, bw, u});
        draw_text(dl, "0", x + bw + 4, y, DRAW_TEXT);
        /* TRANSLATORS: legend of the crossed cells of weights_dropout: weights that dropout set to 0 */
        draw_text(dl, _("dropped"), x, y + u, DRAW_TEXT_DIM);
    }
}

/* The mask's legend instead of a colour bar: the mask holds two values, 0
 * where a query may look and the fill where it may not (−∞ or a finite fill
 * such as −1e9, hatched either way). */
static void mask_legend(draw_list *dl, const app_scale *sc, const app_slice *s, int x, int y)
{
    int u = draw_line_h(dl), bw = u * 3 / 4;
    float fill = 0.0f;
    for (int i = 0; i < s->rows && fill == 0.0f; i++)
        for (int j = 0; j < s->cols; j++)
            if (app_slice_at(s, i, j) != 0.0f) {
                fill = app_slice_at(s, i, j);
                break;
            }
    draw_fill(dl, x, y, bw, u, app_heat_color(sc, 0.0f));
    draw_outline(dl, x - 1, y - 1, bw + 2, u + 2, 1, DRAW_TEXT_DIM);
    draw_text(dl, "0", x + bw + 4, y, DRAW_TEXT);
    /* TRANSLATORS: the mask's legend: 0 lets a query look at a key */
    draw_text(dl, _("may look"), x, y + u, DRAW_TEXT_DIM);
    y += 2 * u + u / 2;
    char buf[32];
    draw_hatch(dl, x, y, bw, u); /* the picture hatches every cell the mask hides, whatever the fill */
    draw_text(dl, isinf(fill) || fill == 0.0f ? "−∞" : app_view_format(fill, buf, sizeof buf), x + bw + 4, y, DRAW_TEXT);
    draw_text(dl, _("masked"), x, y + u, DRAW_TEXT_DIM);
}

static int label_need(draw_list *dl, const char *lab);
static int col_turned_room(draw_list *dl, const attn_trace *tr, const app_view_slice *v, int *whole);

/* The room a heatmap of v gets in box: row label width *lw, column label
 * height *lh, and the largest square cell that fits (*avail_w, *avail_h: the
 * space for the cells). Column labels too wide for their cells, where a line
 * fits across a column, are turned to read upwards (*turned) before any is
 * left out: their band is then as tall as the longest. Returns the cell size,
 * or -1 when nothing fits. */
static double layout(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box, const draw_plot_opts *o,
                     int *lw, int *lh, int *avail_w, int *avail_h, bool *turned)
{
    const app_slice *s = &v->slice;
    int u = draw_line_h(dl);
    char buf[96];
    *lw = *lh = 0;
    *turned = false;
    if (s->rows <= 0 || s->cols <= 0 || box.w <= 0 || box.h <= 0) return -1;
    if (o->labels && !o->no_row_labels) {
        int step = draw_imax(1, s->rows / 64);
        for (int i = 0; i < s->rows; i += step)
            *lw = draw_imax(*lw, draw_text_w(dl, app_view_row_label(tr, v, i, buf, sizeof buf)));
        *lw = draw_imin(*lw, draw_imax(box.w / 5, 3 * u)) + u / 2; /* a fifth of the box, but room for <pad> */
    }
    if (o->labels) *lh = u + u / 4;
    int cbw = o->colorbar ? colorbar_width(dl) : 0;
    *avail_w = box.w - *lw - cbw;
    *avail_h = box.h - *lh - (o->colorbar ? 2 * u : 0);
    if (*avail_w < 8 || *avail_h < 8) return -1;
    double cell = fmin((double)*avail_w / s->cols, (double)*avail_h / s->rows);
    int whole = 0, longest = o->labels && s->cols <= 256 ? col_turned_room(dl, tr, v, &whole) : 0;
    if (longest && whole > *avail_w / (double)s->cols) {
        int band = draw_imin(longest, 6 * u) + u / 4;
        double turned_cell = fmin((double)*avail_w / s->cols, (double)(*avail_h - band + *lh) / s->rows);
        if (band > *lh && turned_cell >= 0.9 * u) {
            *avail_h -= band - *lh;
            *lh = band;
            *turned = true;
            cell = turned_cell;
        }
    }
    return cell;
}

/* A heatmap placed in the window: its slice over the pixels r, cells gap apart. */
typedef struct {
    const app_slice *s;
    app_rect r;
    int gap;
    int lh;      /* the column labels' band above the cells */
    bool turned; /* its labels too wide for a column read upwards */
} placed;

/* Cell (i, j) of p in window pixels (its gap included). */
static app_rect cell_px(const placed *p, int i, int j)
{
    app_rect c;
    app_heat_cell_rect(p->r.w, p->r.h, p->s->rows, p->s->cols, i, j, &c.x, &c.y, &c.w, &c.h);
    c.x += p->r.x;
    c.y += p->r.y;
    return c;
}

/* Where v goes in box: square cells when there is a pixel or more for each,
 * at most 4.5 lines, right of the row labels (*lw) and below the column
 * labels; with more columns than pixels, rows up to 1.5 lines tall. Returns
 * false when nothing fits. */
static bool place(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box, const draw_plot_opts *o,
                  placed *p, int *lw)
{
    const app_slice *s = &v->slice;
    int u = draw_line_h(dl), lh, avail_w, avail_h, w, h;
    bool turned;
    double cell = layout(dl, tr, v, box, o, lw, &lh, &avail_w, &avail_h, &turned);
    if (cell < 0) return false;
    if (o->max_cell > 0) cell = fmin(cell, o->max_cell);
    if (cell >= 1.0) {
        cell = fmin(cell, 4.5 * u);
        /* fill the free area: a wide matrix (q at 4 × 32, a model's x at 25 × 128)
         * gets taller cells, a tall one wider cells up to twice as long as wide; near-square ones
         * (attention weights) and panes drawn side by side (max_cell) keep square cells */
        double cw = o->cell_w > 0 ? fmin(o->cell_w, (double)avail_w / s->cols) : cell, ch = cell;
        if (o->max_cell <= 0 && s->cols >= 2 * s->rows) /* a row of features: as tall as the area lets it */
            ch = fmin((double)avail_h / s->rows, fmax(cell, 4.5 * u));
        if (o->max_cell <= 0 && s->rows >= 2 * s->cols)
            cw = fmin(fmin((double)avail_w / s->cols, 2.0 * cell), fmax(cell, 4.5 * u));
        w = (int)(cw * s->cols);
        h = (int)(ch * s->rows);
    } else { /* more columns than pixels (a vocabulary of logits): rows stay a line tall, to be read */
        w = draw_imin(avail_w, s->cols);
        double row_h = fmin((double)avail_h / s->rows, 1.5 * u);
        h = row_h >= 1.0 ? (int)(row_h * s->rows) : draw_imin(avail_h, s->rows);
    }
    if (w < 1 || h < 1) return false;
    int cw = w / s->cols, ch = h / s->rows;
    *p = (placed){s, {box.x + *lw, box.y + lh, w, h}, cw >= 40 && ch >= 40 ? 2 : (cw >= 12 && ch >= 12 ? 1 : 0), lh,
                  turned};
    return true;
}

/* Numbers inside the cells, or at least the −∞ glyph on masked cells, when they fit:
 * at the frame's text size, else smaller, down to the size of unenlarged text
 * (base_px): larger text, `+` or presenting, must not take the numbers away
 * from cells that held them. */
static void cell_numbers(draw_list *dl, const placed *p, const app_scale *sc, int base_px)
{
    const app_slice *s = p->s;
    int frame_px = dl->px, least = draw_imax(10, draw_imin(base_px, frame_px)), cw = p->r.w / s->cols, ch = p->r.h / s->rows;
    bool numbers = false;
    for (; !numbers && dl->px >= least; dl->px--)
        numbers = cw >= draw_text_w(dl, "−0.00") + 6 && ch >= draw_line_h(dl) + 2;
    if (numbers) dl->px++; /* the loop stepped once past the size that fits */
    else dl->px = frame_px;
    int u = draw_line_h(dl);
    bool glyphs = !numbers && cw >= draw_text_w(dl, "−∞") + 4 && ch >= u;
    if (!numbers && !glyphs) return;
    char buf[32];
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) {
            float x = app_slice_at(s, i, j);
            if (!numbers && !(isinf(x) && x < 0)) continue; /* too small for numbers: only the −∞ glyph */
            app_rect c = cell_px(p, i, j);
            app_view_format(x, buf, sizeof buf);
            int tw = draw_text_w(dl, buf);
            int tx = c.x + (c.w - p->gap - tw) / 2, ty = c.y + (c.h - p->gap - u) / 2;
            if (masked_at(s, i, j) || isnan(x)) {
                draw_fill(dl, tx - 2, ty, tw + 4, u, APP_HATCH_LIGHT);
                draw_text(dl, buf, tx, ty, DRAW_BLACK);
            } else {
                uint32_t bg = app_heat_color(sc, x);
                draw_text(dl, buf, tx, ty, app_argb_luminance(bg) > 0.35f ? DRAW_BLACK : DRAW_WHITE);
            }
        }
    dl->px = frame_px;
}

/* The per-head blocks of q/k/v and the projections, the current one bold. */
static void head_blocks(draw_list *dl, const placed *p, const app_view_slice *v)
{
    const app_slice *s = p->s;
    int nb = (v->block_on_rows ? s->rows : s->cols) / v->block;
    for (int b = 0; b < nb; b++) {
        int first = b * v->block, last = (b + 1) * v->block - 1;
        app_rect a = v->block_on_rows ? cell_px(p, first, 0) : cell_px(p, 0, first);
        app_rect z = v->block_on_rows ? cell_px(p, last, s->cols - 1) : cell_px(p, s->rows - 1, last);
        int m = b == v->block_current ? 2 : 0;
        draw_outline(dl, a.x - m, a.y - m, z.x + z.w - a.x + 2 * m, z.y + z.h - a.y + 2 * m, m ? 3 : 1,
                     m ? DRAW_WHITE : DRAW_TEXT_DIM);
    }
}

/* The selected query row, and the hovered cell when p is the hovered area. */
static void marks(draw_list *dl, const app_state *app, const placed *p, const app_view_slice *v, int area)
{
    const app_slice *s = p->s;
    int row = app->view.row - v->row0, hi = app->hover_i - v->row0, hj = app->hover_j - v->col0; /* in the window */
    if (app->view.row >= 0 && row >= 0 && row < s->rows && v->row_axis == APP_AXIS_QUERY) {
        app_rect c = cell_px(p, row, 0);
        draw_outline(dl, p->r.x - 2, c.y - 2, p->r.w + 4, c.h + 4 - p->gap, 2, DRAW_ACCENT);
    }
    if (area >= 0 && area == app->hover_area && app->hover_i >= 0 && hi >= 0 && hi < s->rows && hj >= 0 &&
        hj < s->cols) {
        app_rect c = cell_px(p, hi, hj);
        if (c.w >= 4 && c.h >= 4) draw_outline(dl, c.x - 1, c.y - 1, c.w + 2 - p->gap, c.h + 2 - p->gap, 2, DRAW_WHITE);
        else draw_outline(dl, c.x - 3, c.y - 3, c.w + 6, c.h + 6, 1, DRAW_WHITE);
    }
}

/* Row labels right-aligned in the lw pixels left of the cells: every row when
 * they fit, else every n-th. Returns n. */
static int row_label_step(draw_list *dl, const placed *p)
{
    return draw_imax(1, (int)ceil((draw_line_h(dl) * 0.95) / fmax(p->r.h / (double)p->s->rows, 0.01)));
}

/* Row labels drawn every step-th row (row_label_step). */
static void row_labels(draw_list *dl, const app_state *app, const attn_trace *tr, const app_view_slice *v,
                       const placed *p, int lw, int step)
{
    const app_slice *s = p->s;
    int u = draw_line_h(dl);
    char buf[96];
    for (int i = 0; i < s->rows; i += step) {
        app_rect c = cell_px(p, i, 0);
        const char *lab = app_view_row_label(tr, v, i, buf, sizeof buf);
        int tw = draw_imin(draw_text_w(dl, lab), lw - u / 2);
        uint32_t col = i == app->view.row && v->row_axis == APP_AXIS_QUERY ? DRAW_ACCENT : DRAW_TEXT;
        draw_text_fit(dl, lab, p->r.x - u / 3 - tw, c.y + (c.h - u) / 2, lw - u / 2, col);
    }
}

/* Punctuation and the marks token labels use (‹pad›, a visible space ␣ or ▁). */
static bool mark_char(uint32_t cp)
{
    return (cp < 128 && !isalnum((int)cp)) || (cp >= 0x2000 && cp <= 0x206F) || (cp >= 0x2400 && cp <= 0x243F) ||
           (cp >= 0x2580 && cp <= 0x259F);
}

/* The width a column label needs, the largest over the columns: its own, or,
 * for a token, that of its start up to its first letter and "…" ("‹p…" for
 * ‹pad›) when that is less. Numbered labels (c12, a vocabulary's ids) are
 * never cut: "c…" would not say which. */
/* The width a label needs upright over its column: its own and a gap, two
 * pixels for one character (a Chinese character fills its cell). */
static int label_gap(draw_list *dl, const char *lab)
{
    size_t n = strlen(lab);
    bool one = n > 0 && attn_utf8_next(lab, n, 0) >= n;
    return one ? 2 : draw_line_h(dl) / 2;
}

static int label_need(draw_list *dl, const char *lab)
{
    return draw_text_w(dl, lab) + label_gap(dl, lab);
}

/* The widest column label (returned) and the most any needs upright (*whole). */
static int col_turned_room(draw_list *dl, const attn_trace *tr, const app_view_slice *v, int *whole)
{
    char buf[96];
    int longest = 0;
    *whole = 0;
    for (int j = 0; j < v->slice.cols; j++) {
        const char *lab = app_view_col_label(tr, v, j, buf, sizeof buf);
        int w = draw_text_w(dl, lab);
        longest = draw_imax(longest, w);
        *whole = draw_imax(*whole, w + label_gap(dl, lab));
    }
    return longest;
}

static int col_label_room(draw_list *dl, const attn_trace *tr, const app_view_slice *v)
{
    bool numbered = v->col_axis == APP_AXIS_FEATURE || v->col_axis == APP_AXIS_INPUT ||
                    v->col_axis == APP_AXIS_OUTPUT || v->col_axis == APP_AXIS_VOCAB;
    int room = 0, probe = draw_imax(1, v->slice.cols / 64);
    char buf[96], cut[40];
    for (int j = 0; j < v->slice.cols; j += probe) {
        const char *lab = app_view_col_label(tr, v, j, buf, sizeof buf);
        int whole = label_need(dl, lab);
        if (numbered) {
            room = draw_imax(room, whole);
            continue;
        }
        size_t n = strlen(lab), end = 0;
        uint32_t cp = 0;
        do { /* through the first letter, digit or Chinese character: past ‹, <, ␣ and ▁ */
            size_t next = attn_utf8_next(lab, n, end);
            attn_utf8_decode(lab + end, n - end, &cp);
            end = next;
        } while (end < n && end < 24 && mark_char(cp));
        snprintf(cut, sizeof cut, "%.*s…", (int)end, lab);
        room = draw_imax(room, end >= n ? whole : draw_imin(whole, draw_text_w(dl, cut) + 2));
    }
    return room;
}

/* Every how many columns a label goes: every one when each has the room its
 * label needs (col_label_room), cut or whole; turned, a line across. */
static int col_label_step(draw_list *dl, const placed *p, int room)
{
    if (p->turned) room = (int)ceil(0.9 * draw_line_h(dl));
    return draw_imax(1, (int)ceil(room / fmax(p->r.w / (double)p->s->cols, 0.01)));
}

/* Column labels over the cells in the band above them, every step-th: a label
 * too long for its cell cut with "…" (the tooltip shows it whole), or, when
 * the band is turned, every word read upwards from the cells (cut only past 6
 * lines) and single characters level. */
static void col_labels(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const placed *p, int y, int step)
{
    const app_slice *s = p->s;
    int u = draw_line_h(dl);
    char buf[96], cut[120];
    double cw = p->r.w / (double)s->cols;
    for (int j = 0; j < s->cols; j += step) {
        app_rect c = cell_px(p, 0, j);
        const char *lab = app_view_col_label(tr, v, j, buf, sizeof buf);
        size_t n = strlen(lab);
        bool word = n > 0 && attn_utf8_next(lab, n, 0) < n; /* more than one character */
        if (p->turned && (word || label_need(dl, lab) > cw * step)) { /* words all turn alike; a character stays level */
            const char *t = draw_text_cut(dl, lab, p->lh - u / 4, cut, sizeof cut);
            int tw = draw_text_w(dl, t);
            draw_text_turned(dl, t, c.x + (c.w - p->gap - u) / 2, p->r.y - u / 4 - tw, DRAW_TEXT);
            continue;
        }
        int span = (int)(cw * step) - (p->turned ? 0 : 2), tw = draw_imin(draw_text_w(dl, lab), span);
        int ly = p->turned ? p->r.y - u - u / 4 : y;
        draw_text_fit(dl, lab, c.x + (c.w - p->gap - tw) / 2, ly, span, DRAW_TEXT);
    }
}

/* Under the picture, when labels were left out: which are shown, and where
 * the rest are; only where the line fits whole under the picture. */
static void hidden_labels_note(draw_list *dl, const placed *p, int row_step, int col_step, int bottom)
{
    int u = draw_line_h(dl), y = p->r.y + p->r.h + u / 4;
    char buf[200];
    if ((row_step <= 1 && col_step <= 1) || y + u > bottom) return;
    if (row_step > 1 && col_step > 1)
        /* TRANSLATORS: the heatmap's axes have too many labels to draw them all */
        snprintf(buf, sizeof buf, _("labels: 1 row in %d and 1 column in %d, of %d × %d; hover a cell for its tokens"),
                 row_step, col_step, p->s->rows, p->s->cols);
    else if (row_step > 1)
        snprintf(buf, sizeof buf, _("labels: 1 row in %d, of %d; hover a cell for its token"), row_step, p->s->rows);
    else
        snprintf(buf, sizeof buf, _("labels: 1 column in %d, of %d; hover a cell for its token"), col_step,
                 p->s->cols);
    if (draw_text_w(dl, buf) <= p->r.w) {
        draw_text(dl, buf, p->r.x, y, DRAW_TEXT_DIM);
        return;
    }
    /* two lines: what is shown; then, if there is room, the hint after the semicolon */
    char *semi = strstr(buf, "; "), *wide = strstr(buf, "；");
    char *cut = semi ? semi : wide;
    if (cut) {
        const char *rest = cut + (semi ? 2 : strlen("；"));
        *cut = '\0';
        if (draw_text_w(dl, buf) <= p->r.w) {
            draw_text(dl, buf, p->r.x, y, DRAW_TEXT_DIM);
            if (y + 2 * u <= bottom && draw_text_w(dl, rest) <= p->r.w) draw_text(dl, rest, p->r.x, y + u, DRAW_TEXT_DIM);
            return;
        }
    }
    /* a small pane: the shortest form that fits */
    int n = row_step > col_step ? row_step : col_step;
    /* TRANSLATORS: under a small heatmap whose axes show only every n-th label */
    snprintf(buf, sizeof buf, _("labels 1/%d (hover)"), n);
    if (draw_text_w(dl, buf) > p->r.w) snprintf(buf, sizeof buf, _("labels 1/%d"), n);
    if (draw_text_w(dl, buf) > p->r.w) snprintf(buf, sizeof buf, "1/%d", n);
    draw_text_fit(dl, buf, p->r.x, y, p->r.w, DRAW_TEXT_DIM);
}

/* weights_dropout: a mark on each weight that dropout set to 0 (the weight before
 * it was not 0 and not masked). Returns whether there was any. */
static bool dropped_cells(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const placed *p)
{
    app_view_slice w;
    const attn_tensor *before = attn_trace_stage(tr, v->tensor->layer, ATTN_STAGE_WEIGHTS);
    if (!before || app_view_make_of(tr, before, v->batch, v->head, &w)) return false;
    if (v->row0 || v->col0 || w.slice.rows != p->s->rows || w.slice.cols != p->s->cols)
        app_view_window(&w, v->row0, v->col0, p->s->rows, p->s->cols);
    if (w.slice.rows != p->s->rows || w.slice.cols != p->s->cols) return false;
    bool any = false;
    for (int i = 0; i < p->s->rows; i++)
        for (int j = 0; j < p->s->cols; j++)
            if (app_slice_at(p->s, i, j) == 0.0f && app_slice_at(&w.slice, i, j) > 0.0f && !masked_at(p->s, i, j)) {
                any = true;
                app_rect c = cell_px(p, i, j);
                if (c.w - p->gap >= 4 && c.h - p->gap >= 4) dropped_mark(dl, (app_rect){c.x, c.y, c.w - p->gap, c.h - p->gap});
            }
    return any;
}

/* Each row's root mean square, √(Σⱼ x²ᵢⱼ / n), in a column right of the
 * cells: what RMSNorm divides by, so resid_in's rows differ and x's are
 * about the norm's gain. Drawn every row_step-th row, like the labels. */
static int rms_width(draw_list *dl)
{
    return draw_text_w(dl, "00.00") + 2 * draw_line_h(dl);
}

static void rms_column(draw_list *dl, const placed *p, const draw_plot_opts *o, int row_step)
{
    int u = draw_line_h(dl), x = p->r.x + p->r.w + u;
    char buf[32];
    draw_text(dl, "RMS", x, p->r.y - u - u / 4, DRAW_TEXT_DIM);
    for (int i = 0; i < p->s->rows; i += row_step) {
        int r = o->rms_row0 + i;
        if (r >= o->rms->rows) break;
        double sum = 0;
        for (int j = 0; j < o->rms->cols; j++) {
            double x2 = app_slice_at(o->rms, r, j);
            sum += x2 * x2;
        }
        snprintf(buf, sizeof buf, "%.2f", sqrt(sum / draw_imax(o->rms->cols, 1)));
        app_rect c = cell_px(p, i, 0);
        draw_text(dl, buf, x, c.y + (c.h - u) / 2, DRAW_TEXT);
    }
}

int draw_plot_heatmap(draw_list *dl, const app_state *app, const attn_trace *tr, const app_view_slice *v, const app_scale *sc,
                      app_rect box, const draw_plot_opts *o)
{
    placed p;
    int lw, u = draw_line_h(dl), rms_w = o->rms ? rms_width(dl) : 0;
    box.w -= rms_w;
    if (!place(dl, tr, v, box, o, &p, &lw)) return -1;
    bool rows = o->labels && !o->no_row_labels;
    int room = o->labels ? col_label_room(dl, tr, v) : 0;
    /* labels left out need their note under the picture: make room for it there */
    bool thinned = o->labels && ((rows && row_label_step(dl, &p) > 1) || col_label_step(dl, &p, room) > 1);
    if (thinned && p.r.y + p.r.h + u / 4 + u > box.y + box.h) {
        app_rect smaller = {box.x, box.y, box.w, box.h - u - u / 4};
        placed q;
        int qlw;
        if (smaller.h > 2 * u && place(dl, tr, v, smaller, o, &q, &qlw)) p = q, lw = qlw;
    }
    draw_heatmap(dl, o->generation, p.s, sc, p.r.x, p.r.y, p.r.w, p.r.h, p.gap);
    int area = add_area(dl->layout, p.r, v, v->head < 0 ? app->view.head : v->head, o->pane, v->tensor->name);
    cell_numbers(dl, &p, sc, (int)lroundf((float)dl->px / fmaxf(1.0f, app->font_scale)));
    if (v->block > 0) head_blocks(dl, &p, v);
    marks(dl, app, &p, v, area);
    if (o->labels) {
        int row_step = rows ? row_label_step(dl, &p) : 1, col_step = col_label_step(dl, &p, room);
        if (rows) row_labels(dl, app, tr, v, &p, lw, row_step);
        col_labels(dl, tr, v, &p, box.y, col_step);
        hidden_labels_note(dl, &p, row_step, col_step, box.y + box.h);
        if (o->rms) rms_column(dl, &p, o, row_step);
    }
    int flags = specials(dl, o->generation, v, p.s);
    if (attn_tensor_stage(v->tensor) == ATTN_STAGE_WEIGHTS_DROPOUT && dropped_cells(dl, tr, v, &p)) flags |= HAS_DROPPED;
    if (o->colorbar && attn_tensor_stage(v->tensor) == ATTN_STAGE_MASK)
        mask_legend(dl, sc, p.s, p.r.x + p.r.w + draw_line_h(dl), p.r.y);
    else if (o->colorbar)
        colorbar(dl, sc, p.r.x + p.r.w + rms_w + draw_line_h(dl), p.r.y, p.r.h, flags, box.y + box.h);
    return area;
}

/* ---- single view ---------------------------------------------------------- */

/* The whole slice small in the top-right corner of a zoomed picture r, with
 * a frame around the window shown. */
static void minimap(draw_list *dl, const app_state *app, const app_view_slice *whole, const app_view_slice *win,
                    const app_scale *sc, app_rect r)
{
    int u = draw_line_h(dl), side = draw_imin(draw_imax(4 * u, r.w / 4), r.w / 2);
    int mw = side, mh = side;
    if (whole->slice.rows > whole->slice.cols) mw = draw_imax(u, side * whole->slice.cols / whole->slice.rows);
    else mh = draw_imax(u, side * whole->slice.rows / whole->slice.cols);
    int x = r.x + r.w - mw - u / 2, y = r.y + u / 2;
    draw_fill(dl, x - 3, y - 3, mw + 6, mh + 6, DRAW_BG);
    draw_heatmap(dl, app->generation, &whole->slice, sc, x, y, mw, mh, 0);
    int fx = x + win->col0 * mw / whole->slice.cols, fy = y + win->row0 * mh / whole->slice.rows;
    int fw = draw_imax(3, win->slice.cols * mw / whole->slice.cols), fh = draw_imax(3, win->slice.rows * mh / whole->slice.rows);
    draw_outline(dl, fx, fy, fw, fh, 2, DRAW_WHITE);
    draw_outline(dl, x - 1, y - 1, mw + 2, mh + 2, 1, DRAW_TEXT_DIM);
}

/* The residual stream and what RMSNorm makes of it: rows of a model's width,
 * shown with each row's RMS. */
static bool rms_stage(const attn_tensor *t)
{
    switch (attn_tensor_stage(t)) {
    case ATTN_STAGE_EMBEDDINGS:
    case ATTN_STAGE_RESID_IN:
    case ATTN_STAGE_X:
    case ATTN_STAGE_RESID_MID:
    case ATTN_STAGE_MLP_NORM:
    case ATTN_STAGE_RESID_OUT:
    case ATTN_STAGE_FINAL_NORM: return true;
    default: return false;
    }
}

/* The single view's bar chart of the selected query row takes the bottom of box. */
static bool bars_shown(const app_state *app, const app_view_slice *v)
{
    return app->view.row >= 0 && v->row_axis == APP_AXIS_QUERY &&
           attn_trace_stage(&app->trace, app->view.layer, ATTN_STAGE_WEIGHTS);
}

/* What the single view draws in box, worked out once for drawing it and for
 * measuring it (draw_plot_single_cell): the slice shown, zoomed to a window of
 * whole; the box left to the heatmap under the bar chart of the selected
 * row (bars_h); the heatmap's options, with the RMS column for a model's
 * residual stream when every column is shown. */
typedef struct {
    const attn_tensor *t;
    app_view_slice v, whole;
    bool ranked, zoomed;
    int bars_h;
    app_rect box;
    draw_plot_opts o;
} single_view;

static bool single_view_make(draw_list *dl, const app_state *app, app_rect box, single_view *s)
{
    s->t = app_tensor(app);
    if (!s->t || app_view_make(&app->trace, s->t->name, app->view.batch, app->view.head, &s->v)) return false;
    s->ranked = draw_plot_ranked_wanted(app, &s->v);
    s->bars_h = bars_shown(app, &s->v) ? draw_imin(draw_plot_bars_height(dl), box.h / 2) : 0;
    if (s->bars_h) box.h -= s->bars_h + draw_line_h(dl) / 2;
    s->box = box;
    s->whole = s->v;
    int i0, j0, wr, wc;
    s->zoomed = app_zoom_window(app, s->v.slice.rows, s->v.slice.cols, &i0, &j0, &wr, &wc);
    if (s->zoomed) app_view_window(&s->v, i0, j0, wr, wc); /* the colours stay the whole slice's */
    s->o = (draw_plot_opts){true, false, true, 0, app->generation, 0, 0, NULL, 0};
    if (rms_stage(s->t) && attn_trace_is_model(&app->trace) && s->v.slice.cols == s->whole.slice.cols)
        s->o.rms = &s->whole.slice, s->o.rms_row0 = s->v.row0;
    return true;
}

double draw_plot_single_cell(draw_list *dl, const app_state *app, app_rect box)
{
    single_view s;
    if (!single_view_make(dl, app, box, &s)) return 0;
    if (s.ranked) return sqrt(fmax(0.0, (double)box.w * box.h)); /* its rows and columns fill the box */
    if (s.o.rms) s.box.w -= rms_width(dl); /* as draw_plot_heatmap leaves it */
    placed p;
    int lw;
    if (!place(dl, &app->trace, &s.v, s.box, &s.o, &p, &lw)) return 0;
    return fmin(p.r.w / (double)p.s->cols, p.r.h / (double)p.s->rows);
}

void draw_plot_single(draw_list *dl, const app_state *app, app_rect box)
{
    single_view s;
    if (!single_view_make(dl, app, box, &s)) return;
    if (s.ranked) { /* logits, probs: each row's top tokens (y: this heatmap), of the whole row, zoomed or not */
        draw_plot_ranked(dl, app, &s.whole, box);
        return;
    }
    if (s.bars_h) draw_plot_bars(dl, app, (app_rect){box.x, box.y + box.h - s.bars_h, box.w, s.bars_h});
    const attn_tensor *t = s.t;
    const app_view_slice v = s.v, whole = s.whole;
    bool zoomed = s.zoomed;
    box = s.box;
    app_scale sc = app->scale_head && v.head_axis ? app_view_slice_scale(t, &whole.slice) : app_scale_of(app, t);
    int area = draw_plot_heatmap(dl, app, &app->trace, &v, &sc, box, &s.o);
    /* a lesson's region (zoom.rows) keeps every cell of the quiz in view: no minimap over them */
    if (area >= 0 && zoomed && !app->zoom.rows) minimap(dl, app, &whole, &v, &sc, dl->layout->areas[area].r);
    char buf[160];
    if (area >= 0 && zoomed) { /* which part of the picture this is, by position, as lessons name it */
        const app_rect r = dl->layout->areas[area].r;
        int u = draw_line_h(dl), y = r.y + r.h + u / 4;
        /* TRANSLATORS: under a zoomed heatmap: its first and last row, first and last column, the whole size */
        snprintf(buf, sizeof buf, _("rows %d–%d, columns %d–%d of %d × %d · z: the whole picture"), v.row0,
                 v.row0 + v.slice.rows - 1, v.col0, v.col0 + v.slice.cols - 1, whole.slice.rows, whole.slice.cols);
        if (y + u <= box.y + box.h && draw_text_w(dl, buf) <= box.x + box.w - r.x) draw_text(dl, buf, r.x, y, DRAW_TEXT_DIM);
    }
    /* the KV cache: a line between the cached rows and the ones computed now */
    attn_stage_id id = attn_tensor_stage(t);
    int P = app->trace.dims.P;
    if (area >= 0 && !zoomed && (id == ATTN_STAGE_K_CACHE || id == ATTN_STAGE_V_CACHE) && P > 0 && P < v.slice.rows) {
        const app_heat_area *a = &dl->layout->areas[area];
        int x, y, cw, ch;
        app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, P, 0, &x, &y, &cw, &ch);
        int u = draw_line_h(dl);
        draw_fill(dl, a->r.x - u / 4, a->r.y + y - 1, a->r.w + u / 2, 3, DRAW_WHITE);
        snprintf(buf, sizeof buf, _("white line: the %d cached positions above it, the %d computed now below"), P,
                 v.slice.rows - P);
        draw_text_fit(dl, buf, a->r.x, a->r.y + a->r.h + u / 2, box.x + box.w - a->r.x, DRAW_TEXT);
    }
}

/* ---- all-heads grid ------------------------------------------------------- */

/* What the grid shows: MHA, GQA or MQA in words, and the mask's broadcast
 * (broadcast_mask), at the top of box; returns the height used. */
static int grid_caption(draw_list *dl, const attn_dims *d, bool broadcast_mask, app_rect box)
{
    int u = draw_line_h(dl);
    char buf[160];
    if (d->g <= 0 || d->h <= 0) /* a trace another program wrote, without K/V heads */
        snprintf(buf, sizeof buf, _("%d heads; this trace says nothing of their K/V heads"), d->h);
    else if (d->g == d->h) snprintf(buf, sizeof buf, _("MHA: each of the %d heads has its own K/V head (g = h = %d)"), d->h, d->g);
    else if (d->g == 1) snprintf(buf, sizeof buf, _("MQA: all %d heads share one K/V head (g = 1)"), d->h);
    else snprintf(buf, sizeof buf, _("GQA: %d groups of %d heads, each group shares one K/V head (g = %d)"), d->g,
                  d->h / d->g, d->g);
    draw_text_fit(dl, buf, box.x, box.y, box.w, DRAW_TEXT);
    if (broadcast_mask)
        draw_text_fit(dl, _("the mask has one copy for all heads: it is broadcast over h"), box.x, box.y + u, box.w,
                      DRAW_TEXT_DIM);
    return (broadcast_mask ? u : 0) + u * 3 / 2;
}

/* The number of columns that gives n pictures of rows × cols cells the
 * largest cells in w × h pixels (u: a line, the room for captions). */
static int grid_columns(int n, int w, int h, int rows, int cols, int u)
{
    int best = 1;
    double best_cell = 0;
    for (int nc = 1; nc <= n; nc++) {
        int nr = (n + nc - 1) / nc;
        double pw = w / (double)nc - u, ph = h / (double)nr - 2 * u;
        double cell = fmin(pw / cols, ph / rows);
        if (cell > best_cell) { best_cell = cell; best = nc; }
    }
    return best;
}

/* Whether a thumbnail in r can carry labels: with a label column of about
 * four characters, its cells would still be at least a line tall. */
static bool thumb_labels(app_rect r, const app_view_slice *v, int u)
{
    return v->slice.rows > 0 && v->slice.cols > 0 && (r.w - 3 * u) / v->slice.cols >= u &&
           (r.h - 2 * u) / v->slice.rows >= u;
}

void draw_plot_grid(draw_list *dl, const app_state *app, app_rect box)
{
    const attn_tensor *t = app_tensor(app);
    app_view_slice v;
    int u = draw_line_h(dl);
    if (!t || app_view_make(&app->trace, t->name, app->view.batch, app->view.head, &v)) return;
    const attn_dims *d = &app->trace.dims;
    if (!v.head_axis) {
        draw_text_fit(dl, _("this stage has no head axis: the grid shows the stages from split heads to context"),
                      box.x, box.y, box.w, DRAW_TEXT_DIM);
        box.y += u * 3 / 2;
        box.h -= u * 3 / 2;
        draw_plot_single(dl, app, box);
        return;
    }
    if (d->h <= 0 || v.slice.rows <= 0 || v.slice.cols <= 0) { /* another program's trace, with a size 0 */
        char none[160];
        /* TRANSLATORS: the grid of a trace with no heads, or heads of no cells */
        snprintf(none, sizeof none, _("nothing to draw: %d heads of %d × %d cells"), d->h, v.slice.rows, v.slice.cols);
        draw_text_fit(dl, none, box.x, box.y, box.w, DRAW_TEXT_DIM);
        return;
    }
    int cap = grid_caption(dl, d, v.head_axis == '1', box);
    box.y += cap;
    box.h -= cap;

    app_scale sc = app_scale_of(app, t);
    int gw = box.w - colorbar_width(dl);
    int nc = grid_columns(d->h, gw, box.h, v.slice.rows, v.slice.cols, u), nr = (d->h + nc - 1) / nc;
    char buf[160];
    int pw = gw / nc, ph = box.h / nr;
    if (!thumb_labels((app_rect){0, 0, pw - u, ph - u * 3 / 2 - u / 2}, &v, u)) {
        /* no thumbnail has room for its tokens: say so under them, and where they are */
        box.h -= u + u / 4;
        ph = box.h / nr;
        draw_text_fit(dl, _("the thumbnails are too small for token labels: hover a cell for its tokens, or g for one head"),
                      box.x, box.y + box.h + u / 4, box.w, DRAW_TEXT_DIM);
    }
    for (int hh = 0; hh < d->h; hh++) {
        app_view_slice hv;
        app_view_make(&app->trace, t->name, app->view.batch, hh, &hv);
        int kv = app_view_kv_head(d, hh);
        uint32_t gc = app_group_argb(kv);
        int px = box.x + (hh % nc) * pw, py = box.y + (hh / nc) * ph;
        app_rect inner = {px + u / 2, py + u + u / 4, pw - u, ph - u * 3 / 2 - u / 2};
        bool cur = hh == app->view.head;
        snprintf(buf, sizeof buf, _("head %d · kv %d%s"), hh, kv, cur ? " ◀" : "");
        draw_text_fit(dl, buf, px + u / 2, py, pw - u, gc);
        /* token labels where a thumbnail has room for them (its cells a line tall) */
        draw_plot_opts o = {thumb_labels(inner, &hv, u), false, false, 0, app->generation, 0, 0, NULL, 0};
        int a = draw_plot_heatmap(dl, app, &app->trace, &hv, &sc, inner, &o);
        if (a >= 0) {
            app_rect r = dl->layout->areas[a].r;
            draw_outline(dl, r.x - 4, r.y - 4, r.w + 8, r.h + 8, 3, gc);
            if (cur) draw_outline(dl, r.x - 7, r.y - 7, r.w + 14, r.h + 14, 2, DRAW_WHITE);
        }
    }
    if (attn_tensor_stage(t) == ATTN_STAGE_MASK) /* the mask's two values: a legend, not a colour scale */
        mask_legend(dl, &sc, &v.slice, box.x + gw + u / 2, box.y + u + u / 4);
    else
        colorbar(dl, &sc, box.x + gw + u / 2, box.y + u + u / 4, draw_imin(box.h - 4 * u, 12 * u), specials(dl, app->generation, &v, &v.slice),
                 box.y + box.h);
}

/* ---- compare view --------------------------------------------------------- */

/* The chips that choose which mask the compare view toggles, from (x, y),
 * wrapping to x0 at right; returns the y of the last line. */
static int toggle_chips(draw_list *dl, const app_state *app, int x, int y, int x0, int right)
{
    int u = draw_line_h(dl);
    for (int t = 0; t < attn_compare_count(); t++) {
        const char *nm = app_compare_name(t);
        int tw = draw_text_w(dl, nm) + u;
        bool on = app->view.compare == t;
        if (x + tw > right && x > x0) x = x0, y += u + u / 2;
        draw_fill(dl, x, y - 2, tw, u + 4, on ? DRAW_PANEL_HI : DRAW_PANEL);
        if (on) draw_outline(dl, x, y - 2, tw, u + 4, 1, DRAW_ACCENT);
        draw_text(dl, nm, x + u / 2, y, on ? DRAW_WHITE : DRAW_TEXT);
        app_layout_hit(dl->layout, (app_rect){x, y - 2, tw, u + 4}, APP_ACT_COMPARE_WITH, t);
        x += tw + u / 3;
    }
    return y;
}

/* b − a into *d (the frame's floats), on its own symmetric scale *sc.
 *
 * Two traces computed with a toggle that changes nothing here (padding on a
 * text without pads) still differ in the last bits where their sums were
 * added in another order; divided by its own largest |Δ| that rounding would
 * fill the pane with full red and blue. So |Δ| ≤ 1e-6 · max|x| over both
 * panes (float's ε is 1.2e-7) counts as no change and is drawn as exactly 0.
 * Returns 1 if anything changed (a NaN on one side only counts), 0 if not,
 * -1 when out of memory; *rounded: cells set to 0 that were not. */
static int difference(draw_list *dl, const app_slice *a, const app_slice *b, app_slice *d, app_scale *sc, int *rounded)
{
    float *diff = draw_list_floats(dl, (size_t)a->rows * a->cols);
    if (!diff) return -1;
    float m = 0, x = 0;
    bool nan_moved = false;
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++) {
            float va = app_slice_at(a, i, j), vb = app_slice_at(b, i, j);
            if (isfinite(va)) x = fmaxf(x, fabsf(va));
            if (isfinite(vb)) x = fmaxf(x, fabsf(vb));
        }
    float tiny = 1e-6f * x;
    *rounded = 0;
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++) {
            float va = app_slice_at(a, i, j), vb = app_slice_at(b, i, j), dv = vb - va;
            if (fabsf(dv) <= tiny) { /* rounding, not a change: exactly 0 (never −0) */
                *rounded += dv != 0;
                dv = 0;
            }
            diff[(size_t)i * a->cols + j] = dv;
            if (isfinite(dv)) m = fmaxf(m, fabsf(dv));
            nan_moved |= isnan(va) != isnan(vb);
        }
    *d = (app_slice){diff, a->rows, a->cols, a->cols, 1, NULL, 0, 0};
    *sc = (app_scale){APP_CMAP_DIVERGING, -(m > 0 ? m : 1), m > 0 ? m : 1};
    return m > 0 || nan_moved;
}

/* Where the compare view's panes go: each pane's box (title included) and
 * picture box, and its options, all three at one cell size. */
typedef struct {
    app_rect pane[3], p[3];
    draw_plot_opts opts[3];
} compare_layout;

enum { SIDE_BY_SIDE, STACKED, TWO_OVER_ONE, N_ARRANGEMENTS };

/* The layout of one arrangement; returns its cell height (-1: nothing fits)
 * and *cw, its cell width. */
static double arrangement(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box, int kind,
                          compare_layout *L, double *cw)
{
    int u = draw_line_h(dl), hh = box.h / 2, lw = 0, lh, aw, ah;
    bool turned;
    /* two over one: the upper panes split the width as they need it, the
     * first its row labels, the second its colour bar, for cells of one width */
    layout(dl, &app->trace, a, (app_rect){0, 0, box.w, box.h}, &(draw_plot_opts){.labels = true}, &lw, &lh, &aw, &ah, &turned);
    int cbw = colorbar_width(dl), cells = draw_imax(0, (box.w - lw - cbw - 2 * u) / 2);
    int w0 = lw + cells + u;
    for (int k = 0; k < 3; k++) {
        app_rect r = kind == SIDE_BY_SIDE ? (app_rect){box.x + k * (box.w / 3), box.y, box.w / 3, box.h}
                  : kind == STACKED      ? (app_rect){box.x, box.y + k * (box.h / 3), box.w, box.h / 3}
                  : k == 0               ? (app_rect){box.x, box.y, w0, hh}
                  : k == 1               ? (app_rect){box.x + w0, box.y, box.w - w0, hh}
                                         : (app_rect){box.x, box.y + hh, box.w, hh};
        L->pane[k] = r;
        L->p[k] = (app_rect){r.x, r.y + u * 3 / 2, r.w - u, r.h - u * 3 / 2 - (kind == SIDE_BY_SIDE ? 0 : u / 2)};
        /* row labels on the panes at the left edge; a colour bar on the toggled and the difference */
        bool left = kind == STACKED || k == 0 || (kind == TWO_OVER_ONE && k == 2);
        L->opts[k] = (draw_plot_opts){true, !left, k > 0, k, 0, 0, 0, NULL, 0};
    }
    double cell = -1;
    *cw = 1e9;
    for (int k = 0; k < 3; k++) {
        double c = layout(dl, &app->trace, a, L->p[k], &L->opts[k], &lw, &lh, &aw, &ah, &turned);
        if (c <= 0) return -1;
        cell = cell < 0 ? c : fmin(cell, c);
        *cw = fmin(*cw, (double)aw / a->slice.cols);
    }
    cell = fmin(cell, 4.5 * u);
    *cw = fmin(*cw, 3 * cell); /* cells up to three times as wide as tall, for the numbers */
    return cell;
}

static void arrange(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box, compare_layout *best)
{
    int u = draw_line_h(dl), numbers_w = draw_text_w(dl, "−0.00") + 6;
    double best_score = -1;
    for (int kind = 0; kind < N_ARRANGEMENTS; kind++) {
        compare_layout L;
        double cw, ch = arrangement(dl, app, a, box, kind, &L, &cw);
        if (ch <= 0) continue;
        bool numbers = ch >= u + 2 && cw >= numbers_w;
        if (!numbers) cw = ch; /* square cells unless wider ones show the numbers */
        double score = (numbers ? 1e9 : 0) + ch * cw;
        if (score > best_score) {
            best_score = score;
            *best = L;
            for (int k = 0; k < 3; k++) {
                best->opts[k].max_cell = ch;
                best->opts[k].cell_w = cw;
            }
        }
    }
    if (best_score < 0) arrangement(dl, app, a, box, SIDE_BY_SIDE, best, &(double){0});
}

void draw_plot_compare(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    char buf[200], name[ATTN_MAX_NAME];
    const char *stage = app_compare_stage(app, name, sizeof name);
    app_view_slice a, b;
    if (app_view_make(&app->trace, stage, app->view.batch, app->view.head, &a)) return;
    if (a.head_axis)
        /* TRANSLATORS: a stage name (weights, context), a head number, a mask name ("causal mask") */
        snprintf(buf, sizeof buf, _("compare %s of head %d with the %s toggled:"), stage, app->view.head,
                 app_compare_name(app->view.compare));
    else /* TRANSLATORS: a stage without heads (probs, logits), a mask name ("causal mask") */
        snprintf(buf, sizeof buf, _("compare %s with the %s toggled:"), stage, app_compare_name(app->view.compare));
    int tw = draw_text_w(dl, buf) + u / 2, last;
    if (tw < box.w / 2) { /* the chips fit beside the title */
        draw_text(dl, buf, box.x, box.y, DRAW_TEXT);
        last = toggle_chips(dl, app, box.x + tw, box.y, box.x, box.x + box.w);
    } else {
        draw_text_fit(dl, buf, box.x, box.y, box.w, DRAW_TEXT);
        last = toggle_chips(dl, app, box.x, box.y + u + u / 2, box.x, box.x + box.w);
    }
    box.h -= last - box.y + u * 2;
    box.y = last + u * 2;
    if (draw_plot_ranked_wanted(app, &a)) { /* logits, probs: three ranked panes */
        draw_plot_ranked_compare(dl, app, &a, box);
        return;
    }
    /* the three panes side by side, stacked, or two above the difference:
     * whichever lets numbers fit in the cells, else gives the largest cells */
    compare_layout L;
    arrange(dl, app, &a, box, &L);
    app_rect *pane = L.pane, *p = L.p;
    app_scale sc = app->scale_head && a.head_axis ? app_view_slice_scale(a.tensor, &a.slice) : app_scale_of(app, a.tensor);
    draw_plot_opts o = L.opts[0];
    o.generation = app->generation;
    draw_text_fit(dl, _("as configured"), pane[0].x, pane[0].y, pane[0].w - u, DRAW_TEXT_DIM);
    draw_plot_heatmap(dl, app, &app->trace, &a, &sc, p[0], &o);
    if (!app->has_alt || app_view_make(&app->alt, stage, app->view.batch, app->view.head, &b) ||
        b.slice.rows != a.slice.rows || b.slice.cols != a.slice.cols) {
        draw_text_fit(dl, app_busy(app, NULL, NULL, NULL) ? _("computing the toggled version…")
                                                           : _("no toggled version to show (see the status line)"),
                    pane[1].x, pane[1].y, box.x + box.w - pane[1].x, DRAW_TEXT_DIM);
        return;
    }
    snprintf(buf, sizeof buf, _("%s toggled"), app_compare_name(app->view.compare));
    draw_text_fit(dl, buf, pane[1].x, pane[1].y, pane[1].w - u, DRAW_TEXT_DIM);
    o = L.opts[1];
    o.generation = app->generation;
    draw_plot_heatmap(dl, app, &app->alt, &b, &sc, p[1], &o);

    app_view_slice dview = a;
    app_scale dsc;
    int rounded, changed = difference(dl, &a.slice, &b.slice, &dview.slice, &dsc, &rounded);
    if (changed < 0) return;
    const char *title = changed   ? _("difference (toggled − configured)")
                        : rounded ? _("difference: no change (|Δ| ≤ 1e-6 · max|x|, float rounding, drawn as 0)")
                                  : _("difference: no change, the toggle changes nothing here");
    if (draw_text_w(dl, title) > pane[2].w - u) /* a narrow pane: a shorter title, never a cut one */
        title = changed ? _("toggled − configured") : _("difference: no change");
    draw_text_fit(dl, title, pane[2].x, pane[2].y, pane[2].w - u, DRAW_TEXT_DIM);
    o = L.opts[2];
    /* the scratch buffer's contents change with the head: never reuse its picture */
    o.generation = app->generation ^ 0x80000000u ^ (unsigned)(app->view.head * 7919 + app->view.batch * 104729 + app->view.compare);
    draw_plot_heatmap(dl, app, &app->trace, &dview, &dsc, p[2], &o);
}

/* ---- a query row's weights ------------------------------------------------ */

int draw_plot_bars_height(draw_list *dl)
{
    return draw_line_h(dl) * 10;
}

/* The bar chart's title: row i of v (named name), its sum, and why the sum is
 * not 1 when every key is masked (mask: the trace's, NULL if it has none of
 * this row's width) or dropout removed everything. */
static void bars_title(const app_state *app, const app_view_slice *v, const char *name, const attn_tensor *mask,
                       char *buf, size_t size)
{
    int i = app->view.row, t = v->slice.cols;
    double sum = 0;
    int n_masked = 0;
    for (int j = 0; j < t; j++) {
        sum += app_slice_at(&v->slice, i, j);
        n_masked += mask && attn_tensor_at4(mask, v->batch, 0, i, j) != 0;
    }
    const char *why = "";
    if (n_masked == t && isnan(sum))
        why = _(" — every key is masked, unguarded softmax: 0/0 = NaN");
    else if (n_masked == t && sum == 0)
        why = _(" — every key is masked, nothing to attend to");
    else if (n_masked == t)
        why = _(" — every key is masked, but a finite fill spreads the weight over all of them");
    else if (sum == 0)
        why = _(" — dropout removed every weight of this row");
    else if (isnan(sum))
        why = _(" — a NaN or ∞ in the data upstream reached this row");
    char sum_s[32], tok[80];
    snprintf(sum_s, sizeof sum_s, isnan(sum) ? "NaN" : "%.3f", sum);
    snprintf(buf, size, _("%s of query i=%d “%s”, head %d: Σⱼ = %s%s   (click the row again or Esc to close)"), name,
             i, app_view_row_label(&app->trace, v, i, tok, sizeof tok), app->view.head, sum_s, why);
}

/* Row i of s stacked end to end in one bar from (x, y): the weights reach the
 * mark at 1 (plot_w pixels). A sum past 2 or below 0 (another program's
 * weights) stops at that edge; NaN and ±∞ have no length. */
static void stacked(draw_list *dl, const app_slice *s, int i, int x, int y, int plot_w)
{
    int u = draw_line_h(dl), h = u;
    double acc = 0;
    for (int j = 0; j < s->cols; j++) {
        float w = app_slice_at(s, i, j);
        if (!isfinite(w)) continue;
        int xa = x + (int)lround(fmin(fmax(acc, 0.0), 2.0) * plot_w);
        acc += w;
        int xb = x + (int)lround(fmin(fmax(acc, 0.0), 2.0) * plot_w);
        draw_fill(dl, xa, y, xb - xa, h, j % 2 ? app_cmap_argb(APP_CMAP_SEQUENTIAL, 0.8f) : app_cmap_argb(APP_CMAP_SEQUENTIAL, 0.45f));
    }
    draw_outline(dl, x - 1, y - 1, plot_w + 2, h + 2, 1, DRAW_TEXT_DIM);
    draw_line_to(dl, x + plot_w, y - u / 3, x + plot_w, y - u / 3 + h + 2 * u / 3, 2, DRAW_WHITE);
    draw_text(dl, "1", x + plot_w + 4, y, DRAW_TEXT);
    draw_text(dl, "0", x - draw_text_w(dl, "0") - 4, y, DRAW_TEXT);
}

void draw_plot_bars(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    const attn_tensor *cur = app_tensor(app);
    attn_stage_id id = attn_tensor_stage(cur) == ATTN_STAGE_WEIGHTS_DROPOUT ? ATTN_STAGE_WEIGHTS_DROPOUT : ATTN_STAGE_WEIGHTS;
    const char *name = attn_stage_get(id)->name;
    const attn_tensor *wt = attn_trace_stage(&app->trace, app->view.layer, id); /* a model's: layers.N.weights */
    app_view_slice v;
    if (!wt || app_view_make_of(&app->trace, wt, app->view.batch, app->view.head, &v) || app->view.row >= v.slice.rows)
        return;
    int i = app->view.row, t = v.slice.cols;
    char buf[300], tok[80], lab[80];
    const attn_tensor *mask = attn_trace_stage(&app->trace, 0, ATTN_STAGE_MASK);
    bool mask_ok = mask && mask->ndim == 4 && mask->shape[3] == t;
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    bars_title(app, &v, name, mask_ok ? mask : NULL, buf, sizeof buf);
    int title = draw_text_wrap(dl, buf, box.x + u / 2, box.y + u / 4, box.w - u, DRAW_TEXT); /* wrapped, never cut */

    int bw = draw_imin(3 * u, draw_imax(1, (box.w - 2 * u) / draw_imax(t, 1)));
    int plot_w = bw * t;
    int bx = box.x + u, top = box.y + (title + 1) * u, bottom = box.y + box.h - 4 * u;
    int ph = bottom - top;
    if (ph < u) return;
    float vmax = 1.0f;
    for (int j = 0; j < t; j++)
        if (isfinite(app_slice_at(&v.slice, i, j))) vmax = fmaxf(vmax, app_slice_at(&v.slice, i, j));
    draw_line_to(dl, bx, bottom, bx + plot_w, bottom, 1, DRAW_TEXT_DIM);
    bool show_vals = bw >= draw_text_w(dl, "0.00") + 4;
    for (int j = 0; j < t; j++) {
        float w = app_slice_at(&v.slice, i, j);
        /* a NaN weight has no bar, only its label; +∞ a full one */
        int hh = isnan(w) ? 0 : (int)lroundf(fminf(fmaxf(w / vmax, 0.0f), 1.0f) * (float)ph);
        float m = mask_ok ? attn_tensor_at4(mask, v.batch, 0, i, j) : 0.0f;
        if (m != 0) draw_hatch(dl, bx + j * bw + 1, bottom - u / 2, bw - 2, u / 2);
        draw_fill(dl, bx + j * bw + 1, bottom - hh, bw - 2, hh, app_cmap_argb(APP_CMAP_SEQUENTIAL, w / vmax));
        if (show_vals) {
            snprintf(lab, sizeof lab, isnan(w) ? "NaN" : "%.2f", (double)w);
            draw_text(dl, lab, bx + j * bw + (bw - draw_text_w(dl, lab)) / 2, bottom - hh - u, DRAW_TEXT);
        }
        const char *kl = app_view_col_label(&app->trace, &v, j, tok, sizeof tok);
        if (bw >= draw_text_w(dl, kl) + 2 || t <= 16)
            draw_text_fit(dl, kl, bx + j * bw + draw_imax(0, (bw - draw_text_w(dl, kl)) / 2), bottom + 2, bw, DRAW_TEXT);
    }
    stacked(dl, &v.slice, i, bx, bottom + u + u / 2, plot_w);
}
