/* plot_heatmap.c — one labelled heatmap (draw_plot_heatmap): where it goes in
 * its box, its cells with their numbers, the row and column labels, the marks
 * of the selected row and hovered cell, the RMS column and the colour bar or
 * the mask's legend. The views drawn with it have files of their own
 * (plot.h). */
#include "plot_heatmap.h"

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
    *a = (app_heat_area){r, v->slice.rows, v->slice.cols, head, pane, "", v->row0, v->col0, 0, 0};
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
int draw_plot_specials(draw_list *dl, unsigned generation, const app_view_slice *v, const app_slice *s)
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

int draw_plot_colorbar_width(draw_list *dl)
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
void draw_plot_colorbar(draw_list *dl, const app_scale *sc, int x, int y, int h, int flags, int bottom)
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
void draw_plot_mask_legend(draw_list *dl, const app_scale *sc, const app_slice *s, int x, int y)
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
double draw_plot_layout(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box,
                        const draw_plot_opts *o, int *lw, int *lh, int *avail_w, int *avail_h, bool *turned)
{
    const app_slice *s = &v->slice;
    int frame_px = dl->px, cbw = o->colorbar ? draw_plot_colorbar_width(dl) : 0;
    int bar_h = 0; /* the colour bar shortens itself to keep its legend in the box (draw_plot_colorbar) */
    char buf[96];
    *lw = *lh = 0;
    *turned = false;
    if (s->rows <= 0 || s->cols <= 0 || box.w <= 0 || box.h <= 0) return -1;
    if (o->label_px > 0) dl->px = o->label_px;
    int u = draw_line_h(dl); /* the labels' line */
    if (o->labels && !o->no_row_labels) {
        int step = draw_imax(1, s->rows / 64);
        for (int i = 0; i < s->rows; i += step)
            *lw = draw_imax(*lw, draw_text_w(dl, app_view_row_label(tr, v, i, buf, sizeof buf)));
        *lw = draw_imin(*lw, draw_imax(box.w / 5, 3 * u)) + u / 2; /* a fifth of the box, but room for <pad> */
    }
    bool cols = o->labels && !o->no_col_labels;
    if (cols) *lh = u + u / 4;
    *avail_w = box.w - *lw - cbw;
    *avail_h = box.h - *lh - bar_h;
    double cell = -1;
    if (*avail_w >= 8 && *avail_h >= 8) {
        cell = fmin((double)*avail_w / s->cols, (double)*avail_h / s->rows);
        int whole = 0, longest = cols && s->cols <= 256 ? col_turned_room(dl, tr, v, &whole) : 0;
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
    }
    dl->px = frame_px;
    return cell;
}

/* Cell (i, j) of p in window pixels (its gap included). */
static app_rect cell_px(const draw_plot_placed *p, int i, int j)
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
static bool place_at(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box, const draw_plot_opts *o,
                     draw_plot_placed *p, int *lw)
{
    const app_slice *s = &v->slice;
    int u = draw_line_h(dl), lh, avail_w, avail_h, w, h;
    bool turned;
    double cell = draw_plot_layout(dl, tr, v, box, o, lw, &lh, &avail_w, &avail_h, &turned);
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
    *p = (draw_plot_placed){s, {box.x + *lw, box.y + lh, w, h}, cw >= 40 && ch >= 40 ? 2 : (cw >= 12 && ch >= 12 ? 1 : 0), lh,
                  turned, o->label_px > 0 ? o->label_px : dl->px};
    return true;
}

static int row_label_step(draw_list *dl, const draw_plot_placed *p);
static int col_label_room(draw_list *dl, const attn_trace *tr, const app_view_slice *v);
static int col_label_step(draw_list *dl, const draw_plot_placed *p, int room);

/* How often p's labels go, at p's label size: every *row_step-th row, every
 * *col_step-th column (row_label_step, col_label_step); *room, a column
 * label's need. A pane without row or column labels of its own counts those
 * of the neighbour that labels its rows or columns, cells as large. */
static void label_steps(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const draw_plot_opts *o,
                        const draw_plot_placed *p, int *row_step, int *col_step, int *room)
{
    int frame_px = dl->px;
    dl->px = p->label_px;
    *room = col_label_room(dl, tr, v);
    *row_step = row_label_step(dl, p); /* without labels of its own: those of the neighbour it is drawn beside */
    *col_step = col_label_step(dl, p, *room);
    if (o->no_col_labels) { /* the neighbour above may turn its labels: a line across */
        draw_plot_placed turned = *p;
        turned.turned = true;
        *col_step = draw_imin(*col_step, col_label_step(dl, &turned, *room));
    }
    dl->px = frame_px;
}

int draw_plot_label_step(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const draw_plot_opts *o,
                         const draw_plot_placed *p)
{
    int rs, cs, room;
    if (!o->labels) return 1;
    label_steps(dl, tr, v, o, p, &rs, &cs, &room);
    return draw_imax(rs, cs);
}

bool draw_plot_place(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box, const draw_plot_opts *o,
                     draw_plot_placed *p, int *lw)
{
    if (!place_at(dl, tr, v, box, o, p, lw)) return false;
    int rs, cs, room;
    if (!o->labels || o->label_px || v->slice.rows > 32 || v->slice.cols > 32) return true; /* a zoomed window: -1 */
    label_steps(dl, tr, v, o, p, &rs, &cs, &room);
    /* labels left out at the frame's size: smaller ones, down to 3/4 of it, if they label every row and column */
    for (int px = dl->px - 1; (rs > 1 || cs > 1) && px >= draw_imax(10, dl->px * 3 / 4); px--) {
        draw_plot_opts smaller = *o;
        draw_plot_placed q;
        int qlw;
        smaller.label_px = px;
        if (!place_at(dl, tr, v, box, &smaller, &q, &qlw)) continue;
        label_steps(dl, tr, v, &smaller, &q, &rs, &cs, &room);
        if (rs == 1 && cs == 1) *p = q, *lw = qlw;
    }
    return true;
}

/* Numbers inside the cells, or at least the −∞ glyph on masked cells, when they fit:
 * at the frame's text size, else smaller, down to the size of unenlarged text
 * (base_px): larger text, `+` or presenting, must not take the numbers away
 * from cells that held them. */
static void cell_numbers(draw_list *dl, const draw_plot_placed *p, const app_scale *sc, int base_px, bool blank_zero)
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
            if (blank_zero && x == 0.0f) continue;
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
static void head_blocks(draw_list *dl, const draw_plot_placed *p, const app_view_slice *v)
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
static void marks(draw_list *dl, const app_state *app, const draw_plot_placed *p, const app_view_slice *v, int area)
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
static int row_label_step(draw_list *dl, const draw_plot_placed *p)
{
    return draw_imax(1, (int)ceil((draw_line_h(dl) * 0.95) / fmax(p->r.h / (double)p->s->rows, 0.01)));
}

/* Row labels drawn every step-th row (row_label_step). */
static void row_labels(draw_list *dl, const app_state *app, const attn_trace *tr, const app_view_slice *v,
                       const draw_plot_placed *p, int lw, int step, int shift)
{
    const app_slice *s = p->s;
    int u = draw_line_h(dl);
    char buf[96];
    for (int i = 0; i < s->rows; i += step) {
        app_rect c = cell_px(p, i, 0);
        const char *lab = app_view_row_label(tr, v, i, buf, sizeof buf);
        int tw = draw_imin(draw_text_w(dl, lab), lw - u / 2);
        uint32_t col = i == app->view.row && v->row_axis == APP_AXIS_QUERY ? DRAW_ACCENT : DRAW_TEXT;
        draw_text_fit(dl, lab, p->r.x - shift - u / 3 - tw, c.y + (c.h - u) / 2, lw - u / 2, col);
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
/* Whether lab is a special token's label, <name> or ‹name›: its name's bytes
 * from *open to n − *close. */
static bool bracketed(const char *lab, size_t *open, size_t *close)
{
    size_t n = strlen(lab);
    if (n < 3 || n > 8 || (lab[0] != '<' && strncmp(lab, "‹", 3)) || (lab[n - 1] != '>' && strcmp(lab + n - 3, "›")))
        return false;
    *open = lab[0] == '<' ? 1 : 3;
    *close = lab[n - 1] == '>' ? 1 : 3;
    return *open + *close <= n;
}

/* The height lab asks of a turned band: its width, but a special token of a
 * longer name (<pad>, </s>) only its name's, which is what bracket_label
 * turns when the band cannot stack it, and one of a single character (<s>)
 * its width in the first column (drawn level there, over the row labels'
 * corner), else its characters stacked: it never turns. */
static int turned_need(draw_list *dl, const char *lab, bool first)
{
    size_t open, close, n = strlen(lab);
    if (!bracketed(lab, &open, &close)) return draw_text_w(dl, lab);
    if (n - open - close < 2) return first ? draw_text_w(dl, lab) : (int)(n - open - close + 2) * draw_line_h(dl) * 7 / 10;
    char name[8];
    snprintf(name, sizeof name, "%.*s", (int)(n - open - close), lab + open);
    return draw_text_w(dl, name);
}

static int col_turned_room(draw_list *dl, const attn_trace *tr, const app_view_slice *v, int *whole)
{
    char buf[96];
    int longest = 0;
    *whole = 0;
    for (int j = 0; j < v->slice.cols; j++) {
        const char *lab = app_view_col_label(tr, v, j, buf, sizeof buf);
        int w = draw_text_w(dl, lab);
        longest = draw_imax(longest, turned_need(dl, lab, j == 0));
        *whole = draw_imax(*whole, w + label_gap(dl, lab));
    }
    return longest;
}

static int col_label_room(draw_list *dl, const attn_trace *tr, const app_view_slice *v)
{
    bool numbered = v->col_axis == APP_AXIS_FEATURE || v->col_axis == APP_AXIS_INPUT ||
                    v->col_axis == APP_AXIS_OUTPUT || v->col_axis == APP_AXIS_VOCAB ||
                    v->col_axis == APP_AXIS_EXPERT; /* e0 … e255: cut to "e…", a label says nothing */
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
static int col_label_step(draw_list *dl, const draw_plot_placed *p, int room)
{
    if (p->turned) room = (int)ceil(0.9 * draw_line_h(dl));
    return draw_imax(1, (int)ceil(room / fmax(p->r.w / (double)p->s->cols, 0.01)));
}

/* A special token's label in a turned band ("<s>", "</s>"): turned, its
 * brackets would read "^s v" to anyone not tilting their head. Level instead
 * where it fits over its columns (span) and the free room left of them
 * (left: the row labels' corner, over the first column), right-aligned on its
 * column; else its characters stacked top-down where the band holds them;
 * else its name turned without the brackets, dimmed as special ("pad" for
 * <pad>: the row labels and the tooltip keep the whole token). */
static bool bracket_label(draw_list *dl, const char *lab, const draw_plot_placed *p, app_rect c, int span, int left)
{
    size_t n = strlen(lab), open, close;
    int u = draw_line_h(dl), tw = draw_text_w(dl, lab), right = c.x + c.w - p->gap;
    if (!bracketed(lab, &open, &close)) return false;
    if (tw <= span + left) {
        draw_text(dl, lab, draw_imin(right - tw, c.x + (c.w - p->gap - tw) / 2), p->r.y - u - u / 4, DRAW_TEXT);
        return true;
    }
    int chars = 0, pitch = u * 7 / 10;
    for (size_t i = 0; i < n; i = attn_utf8_next(lab, n, i)) chars++;
    if (chars * pitch + u / 4 > p->lh) {
        char name[8], cut[24];
        snprintf(name, sizeof name, "%.*s", (int)(n - open - close), lab + open);
        const char *t = draw_text_cut(dl, name, p->lh - u / 4, cut, sizeof cut);
        draw_text_turned(dl, t, c.x + (c.w - p->gap - u) / 2, p->r.y - u / 4 - draw_text_w(dl, t), DRAW_TEXT_DIM);
        return true;
    }
    int y = p->r.y - u / 4 - u - (chars - 1) * pitch;
    for (size_t i = 0; i < n; y += pitch) {
        char one[8];
        size_t next = attn_utf8_next(lab, n, i);
        snprintf(one, sizeof one, "%.*s", (int)(next - i), lab + i);
        draw_text(dl, one, c.x + (c.w - p->gap - draw_text_w(dl, one)) / 2, y, DRAW_TEXT);
        i = next;
    }
    return true;
}

/* Column labels over the cells in the band above them, every step-th: a label
 * too long for its cell cut with "…" (the tooltip shows it whole), or, when
 * the band is turned, every word read upwards from the cells (cut only past 6
 * lines), special tokens level or stacked (bracket_label) and single
 * characters level. lw: the row labels' width left of the cells (none: the first
 * column's special token may reach a line left, into the gap before it). */
static void col_labels(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const draw_plot_placed *p, int y, int step,
                       int lw)
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
        if (p->turned && word && bracket_label(dl, lab, p, c, (int)(cw * step), j == 0 ? (lw > 0 ? lw : u) : 0)) continue;
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
static void hidden_labels_note(draw_list *dl, const draw_plot_placed *p, int row_step, int col_step, int bottom)
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
static bool dropped_cells(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const draw_plot_placed *p)
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
int draw_plot_rms_width(draw_list *dl)
{
    return draw_text_w(dl, "00.00") + 2 * draw_line_h(dl);
}

static void rms_column(draw_list *dl, const draw_plot_placed *p, const draw_plot_opts *o, int row_step)
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

/* ---- the sink column ---- */

int draw_plot_sink_width(draw_list *dl)
{
    return draw_text_w(dl, "0.00") + draw_line_h(dl) + draw_line_h(dl) / 2;
}

bool draw_plot_sink_slice(const attn_trace *tr, const app_view_slice *v, app_slice *out)
{
    attn_stage_id id = v->tensor ? attn_tensor_stage(v->tensor) : ATTN_STAGE_NONE;
    if (id != ATTN_STAGE_WEIGHTS && id != ATTN_STAGE_WEIGHTS_DROPOUT) return false;
    const attn_tensor *t = attn_trace_stage(tr, v->tensor->layer, ATTN_STAGE_SINK_WEIGHT);
    app_view_slice sv; /* h × s: row `head` is the column */
    if (!t || v->head < 0 || app_view_make_of(tr, t, v->batch, v->head, &sv) || v->head >= sv.slice.rows) return false;
    *out = (app_slice){sv.slice.data + v->head * sv.slice.row_stride, sv.slice.cols, 1, sv.slice.col_stride, 1,
                       NULL, 0, 0};
    return out->rows > 0;
}

/* A dashed frame: what is drawn inside is not a cell of the matrix. */
static void dashed_frame(draw_list *dl, app_rect r, uint32_t c)
{
    int d = draw_imax(3, draw_line_h(dl) / 4);
    for (int x = r.x; x < r.x + r.w; x += 2 * d) {
        int w = draw_imin(d, r.x + r.w - x);
        draw_fill(dl, x, r.y - 2, w, 2, c);
        draw_fill(dl, x, r.y + r.h, w, 2, c);
    }
    for (int y = r.y; y < r.y + r.h; y += 2 * d) {
        int h = draw_imin(d, r.y + r.h - y);
        draw_fill(dl, r.x - 2, y, 2, h, c);
        draw_fill(dl, r.x + r.w, y, 2, h, c);
    }
}

/* Each row's p_sink in a column left of the keys, on the weights' colours,
 * in a dashed frame under the label "sink": not a key, the share of the sink
 * logit, so that a row with it sums to 1. */
static void sink_column(draw_list *dl, const draw_plot_placed *p, const draw_plot_opts *o, const app_scale *sc)
{
    int u = draw_line_h(dl), sw = draw_plot_sink_width(dl) - u / 2, x = p->r.x - draw_plot_sink_width(dl);
    char buf[32];
    int n = draw_imin(p->s->rows, o->sink->rows - o->sink_row0);
    for (int i = 0; i < n; i++) {
        app_rect c = cell_px(p, i, 0);
        float v = app_slice_at(o->sink, o->sink_row0 + i, 0);
        uint32_t bg = app_heat_color(sc, v);
        draw_fill(dl, x, c.y, sw, c.h - p->gap, bg);
        if (c.h - p->gap >= u + 2 && sw >= draw_text_w(dl, "0.00") + 4) {
            app_view_format(v, buf, sizeof buf);
            draw_text(dl, buf, x + (sw - draw_text_w(dl, buf)) / 2, c.y + (c.h - p->gap - u) / 2,
                      app_argb_luminance(bg) > 0.35f ? DRAW_BLACK : DRAW_WHITE);
        }
    }
    app_rect col = {x, p->r.y, sw, cell_px(p, n - 1, 0).y + cell_px(p, n - 1, 0).h - p->gap - p->r.y};
    dashed_frame(dl, col, DRAW_WHITE);
    /* TRANSLATORS: the label of the sink column left of the weights: the learned sink logit, not a key */
    const char *lab = _("sink");
    if (!o->no_col_labels) /* a pane under another reads that one's column labels, this one's too */
        draw_text(dl, lab, x + (sw - draw_text_w(dl, lab)) / 2, p->r.y - u - u / 4, DRAW_ACCENT);
    /* TRANSLATORS: the tooltip of the sink column */
    app_layout_hit_tip(dl->layout, col, APP_ACT_NONE, 0, _("sink: the share of the sink logit, not a key; "
                                                            "a row's weights and its sink sum to 1"));
}

int draw_plot_heatmap(draw_list *dl, const app_state *app, const attn_trace *tr, const app_view_slice *v, const app_scale *sc,
                      app_rect box, const draw_plot_opts *o)
{
    draw_plot_placed p;
    int lw, u = draw_line_h(dl), rms_w = o->rms ? draw_plot_rms_width(dl) : 0, frame_px = dl->px;
    int sink_w = o->sink ? draw_plot_sink_width(dl) : 0;
    box.w -= rms_w + sink_w;
    box.x += sink_w;
    if (!draw_plot_place(dl, tr, v, box, o, &p, &lw)) return -1;
    bool rows = o->labels && !o->no_row_labels;
    int row_step = 1, col_step = 1, room = 0;
    if (o->labels) label_steps(dl, tr, v, o, &p, &row_step, &col_step, &room);
    /* labels left out need their note under the picture: make room for it there */
    if (o->labels && ((rows && row_step > 1) || (col_step > 1 && !o->no_col_labels)) && p.r.y + p.r.h + u / 4 + u > box.y + box.h) {
        app_rect smaller = {box.x, box.y, box.w, box.h - u - u / 4};
        draw_plot_placed q;
        int qlw;
        if (smaller.h > 2 * u && draw_plot_place(dl, tr, v, smaller, o, &q, &qlw)) {
            p = q, lw = qlw;
            label_steps(dl, tr, v, o, &p, &row_step, &col_step, &room);
        }
    }
    draw_heatmap(dl, o->generation, p.s, sc, p.r.x, p.r.y, p.r.w, p.r.h, p.gap);
    int area = add_area(dl->layout, p.r, v, v->head < 0 ? app->view.head : v->head, o->pane, v->tensor->name);
    cell_numbers(dl, &p, sc, (int)lroundf((float)dl->px / fmaxf(1.0f, app->font_scale)), o->blank_zero);
    if (v->block > 0) head_blocks(dl, &p, v);
    marks(dl, app, &p, v, area);
    if (o->labels) {
        dl->px = p.label_px;
        if (rows) row_labels(dl, app, tr, v, &p, lw, row_step, sink_w);
        if (!o->no_col_labels) col_labels(dl, tr, v, &p, box.y, col_step, lw);
        if (o->rms) rms_column(dl, &p, o, row_step);
        /* a pane right of another (no_row_labels), a thumbnail under another (no_col_labels): the labels of that
         * one's rows or columns, cells as large */
        if (area >= 0) {
            dl->layout->areas[area].row_label_step = rows ? row_step : row_label_step(dl, &p);
            dl->layout->areas[area].col_label_step = col_step;
        }
        dl->px = frame_px;
        hidden_labels_note(dl, &p, rows ? row_step : 1, o->no_col_labels ? 1 : col_step, box.y + box.h);
    }
    if (o->sink) sink_column(dl, &p, o, sc);
    int flags = draw_plot_specials(dl, o->generation, v, p.s);
    if (attn_tensor_stage(v->tensor) == ATTN_STAGE_WEIGHTS_DROPOUT && dropped_cells(dl, tr, v, &p)) flags |= HAS_DROPPED;
    if (o->colorbar && attn_tensor_stage(v->tensor) == ATTN_STAGE_MASK)
        draw_plot_mask_legend(dl, sc, p.s, p.r.x + p.r.w + draw_line_h(dl), p.r.y);
    else if (o->colorbar)
        draw_plot_colorbar(dl, sc, p.r.x + p.r.w + rms_w + draw_line_h(dl), p.r.y, p.r.h, flags, box.y + box.h);
    return area;
}
