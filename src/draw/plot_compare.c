/* plot_compare.c — the compare view: the current stage as configured, with
 * a mask or setting toggled, and their difference, three panes at one cell
 * size, laid out side by side, stacked or two over one. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "plot_heatmap.h"

/* The chips that choose which mask the compare view toggles, from (x, y),
 * wrapping to x0 at right; returns the y of the last line. With draw false
 * only measures. */
static int toggle_chips(draw_list *dl, const app_state *app, int x, int y, int x0, int right, bool draw)
{
    int u = draw_line_h(dl);
    for (int t = 0; t < attn_compare_count(); t++) {
        if (!app_compare_offered(app, t)) continue; /* the others while in use, or by t */
        const char *nm = app_compare_name(t);
        int tw = draw_text_w(dl, nm) + u;
        bool on = app->view.compare == t;
        if (x + tw > right && x > x0) x = x0, y += u + u / 2;
        if (draw) {
            draw_fill(dl, x, y - 2, tw, u + 4, on ? DRAW_PANEL_HI : DRAW_PANEL);
            if (on) draw_outline(dl, x, y - 2, tw, u + 4, 1, DRAW_ACCENT);
            draw_text(dl, nm, x + u / 2, y, on ? DRAW_WHITE : DRAW_TEXT);
            app_layout_hit(dl->layout, (app_rect){x, y - 2, tw, u + 4}, APP_ACT_COMPARE_WITH, t);
        }
        x += tw + u / 3;
    }
    return y;
}

/* The view's title and the chips, beside it where they fit (with a short
 * title when only that fits: the header names the stage and the head), else
 * under it; returns the box left to the panes. With draw false only measures. */
static app_rect title(draw_list *dl, const app_state *app, const char *stage, bool heads, app_rect box, bool draw)
{
    int u = draw_line_h(dl), last, chips_w = 0;
    char buf[200];
    if (heads)
        /* TRANSLATORS: a stage name (weights, context), a head number, a mask name ("causal mask") */
        snprintf(buf, sizeof buf, _("compare %s of head %d with the %s toggled:"), stage, app->view.head,
                 app_compare_name(app->view.compare));
    else /* TRANSLATORS: a stage without heads (probs, logits), a mask name ("causal mask") */
        snprintf(buf, sizeof buf, _("compare %s with the %s toggled:"), stage, app_compare_name(app->view.compare));
    int tw = draw_text_w(dl, buf) + u / 2;
    for (int t = 0; t < attn_compare_count(); t++)
        if (app_compare_offered(app, t)) chips_w += draw_text_w(dl, app_compare_name(t)) + u + u / 3;
    /* TRANSLATORS: the compare view's title when the whole one and the mask chips after it do not fit on a line */
    const char *brief = _("toggle and compare:");
    if (tw + chips_w > box.w && draw_text_w(dl, brief) + u / 2 + chips_w <= box.w) {
        snprintf(buf, sizeof buf, "%s", brief);
        tw = draw_text_w(dl, buf) + u / 2;
    }
    if (tw + chips_w <= box.w || tw < box.w / 2) { /* the chips beside the title */
        if (draw) draw_text(dl, buf, box.x, box.y, DRAW_TEXT);
        last = toggle_chips(dl, app, box.x + tw, box.y, box.x, box.x + box.w, draw);
    } else {
        if (draw) draw_text_fit(dl, buf, box.x, box.y, box.w, DRAW_TEXT);
        last = toggle_chips(dl, app, box.x, box.y + u + u / 2, box.x, box.x + box.w, draw);
    }
    box.h -= last - box.y + u + u / 3; /* the chips' line and a gap under them */
    box.y = last + u + u / 3;
    return box;
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

/* Compare naive with absorbed MLA: the same output, said with the largest
 * |Δ| between the two traces' out (every row and feature). */
static bool mla_same_output(const app_state *app, char *buf, size_t size)
{
    const attn_setting *row = attn_compare_at(app->view.compare);
    if (!row || strcmp(row->compare.name, "mla_absorb") || !app->has_alt) return false;
    const attn_tensor *a = attn_trace_find(&app->trace, "out"), *b = attn_trace_find(&app->alt, "out");
    if (!a || !b || a->count != b->count) return false;
    double m = 0;
    for (size_t i = 0; i < a->count; i++) m = fmax(m, fabs((double)a->data[i] - b->data[i]));
    /* TRANSLATORS: %.1e is the largest difference, e.g. 2.4e-07 */
    snprintf(buf, size, _("naive and absorbed MLA give the same output: largest |Δ| over out = %.1e"), m);
    return true;
}

/* Where the compare view's panes go: each pane's box (title included) and
 * picture box, and its options, all three at one cell size. */
typedef struct {
    app_rect pane[3], p[3];
    draw_plot_opts opts[3];
    bool caption; /* the difference's title beside its picture, not above it */
} compare_layout;

enum { SIDE_BY_SIDE, STACKED, TWO_OVER_ONE, N_ARRANGEMENTS };

/* Pane k's labels and colour bar: row labels on the panes at the left edge,
 * column labels on the panes at the top (a pane right of another reads that
 * one's rows, a pane under another its columns, at the same cell size); a
 * colour bar on the toggled pane (the configured one shares its scale) and
 * on the difference. */
static draw_plot_opts pane_opts(int kind, int k)
{
    bool left = kind == STACKED || k == 0 || (kind == TWO_OVER_ONE && k == 2);
    bool top = kind == SIDE_BY_SIDE || k == 0 || (kind == TWO_OVER_ONE && k == 1);
    return (draw_plot_opts){.labels = true, .no_row_labels = !left, .colorbar = k > 0, .pane = k, .no_col_labels = !top};
}

/* The panes' boxes in box for an arrangement, given the pixels each pane
 * takes besides its cells across (ow) and down (oh): the rest shared out so
 * that the three get cells of one size (wide: two over one, cells as wide
 * as the width lets them, for the numbers). */
static void pane_boxes(draw_list *dl, app_rect box, int kind, bool wide, const int ow[3], const int oh[3], int rows, int cols,
                       compare_layout *L)
{
    int u = draw_line_h(dl);
    app_rect *r = L->pane;
    rows = draw_imax(rows, 1), cols = draw_imax(cols, 1); /* a trace of no queries or keys: boxes still placed */
    if (kind == SIDE_BY_SIDE) {
        double c = draw_imax(0, box.w - ow[0] - ow[1] - ow[2]) / (3.0 * cols);
        int w0 = ow[0] + (int)(c * cols), w1 = ow[1] + (int)(c * cols);
        r[0] = (app_rect){box.x, box.y, w0, box.h};
        r[1] = (app_rect){box.x + w0, box.y, w1, box.h};
        r[2] = (app_rect){box.x + w0 + w1, box.y, box.w - w0 - w1, box.h};
    } else if (kind == STACKED) {
        double c = draw_imax(0, box.h - oh[0] - oh[1] - oh[2]) / (3.0 * rows);
        int h0 = oh[0] + (int)(c * rows), h1 = oh[1] + (int)(c * rows);
        r[0] = (app_rect){box.x, box.y, box.w, h0};
        r[1] = (app_rect){box.x, box.y + h0, box.w, h1};
        r[2] = (app_rect){box.x, box.y + h0 + h1, box.w, box.h - h0 - h1};
    } else { /* the difference under the configured pane, on its columns */
        int top = draw_imax(oh[0], oh[1]);
        double cw = draw_imax(0, box.w - ow[0] - ow[1]) / (2.0 * cols), ch = draw_imax(0, box.h - top - oh[2]) / (2.0 * rows);
        /* room to spare across: shared by the two above for wider cells (wide), else the right's */
        int w0 = ow[0] + (int)((wide ? cw : fmin(cw, ch)) * cols), h0 = top + (int)(fmin(cw, ch) * rows);
        r[0] = (app_rect){box.x, box.y, w0, h0};
        r[1] = (app_rect){box.x + w0, box.y, box.w - w0, h0};
        r[2] = (app_rect){box.x, box.y + h0, box.w, box.h - h0};
    }
    /* two over one: the difference's title right of its colour bar, in the
     * room the toggled pane leaves empty under it */
    L->caption = kind == TWO_OVER_ONE;
    for (int k = 0; k < 3; k++) { /* under the title; a gap right of a pane with a neighbour there, and under one above another */
        bool right = kind == SIDE_BY_SIDE ? k < 2 : kind == TWO_OVER_ONE && k == 0;
        bool below = kind == STACKED ? k < 2 : kind == TWO_OVER_ONE && k < 2;
        int gw = right ? (k == 0 ? u / 2 : u / 4) : u / 4, gh = below ? u / 2 : 0, th = L->caption && k == 2 ? 0 : u + u / 4;
        L->p[k] = (app_rect){r[k].x, r[k].y + th, r[k].w - gw, r[k].h - th - gh};
        L->opts[k] = pane_opts(kind, k);
    }
}

/* One arrangement: its panes (*L), placed twice over, the room each takes
 * besides its cells measured and the rest shared out again. Returns its cell
 * height (-1: nothing fits), *cw its cell width (the room there is for wider
 * cells, for the numbers) and *labelled whether every pane labels every row
 * and column. */
static double arrangement(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box, int kind, bool wide,
                          const int sink_w[3], compare_layout *L, double *cw, bool *labelled)
{
    int u = draw_line_h(dl), cbw = draw_plot_colorbar_width(dl), ow[3] = {0, 0, 0}, oh[3] = {0, 0, 0};
    int rows = a->slice.rows, cols = a->slice.cols;
    double cell = -1;
    bool same = false;
    for (int pass = 0; pass < 3 && !same; pass++) { /* until the room measured is the room shared out */
        pane_boxes(dl, box, kind, wide, ow, oh, rows, cols, L);
        cell = -1;
        *cw = 1e9;
        *labelled = same = pass > 0;
        for (int k = 0; k < 3; k++) {
            draw_plot_opts o = L->opts[k];
            draw_plot_placed p;
            int lw;
            o.max_cell = 4.5 * u; /* square cells, as the panes are drawn */
            app_rect at = L->p[k]; /* right of a sink column, as draw_plot_heatmap places it */
            at.x += sink_w[k], at.w -= sink_w[k];
            if (!draw_plot_place(dl, &app->trace, a, at, &o, &p, &lw)) return -1;
            double c = fmin((double)p.r.w / cols, (double)p.r.h / rows);
            cell = cell < 0 ? c : fmin(cell, c);
            *labelled = *labelled && draw_plot_label_step(dl, &app->trace, a, &o, &p) == 1;
            int w = (p.r.x - L->pane[k].x) + (L->pane[k].w - L->p[k].w) + (o.colorbar ? cbw : 0);
            int h = (p.r.y - L->pane[k].y) + (L->pane[k].y + L->pane[k].h - L->p[k].y - L->p[k].h);
            same = same && w == ow[k] && h == oh[k];
            ow[k] = w, oh[k] = h;
            *cw = fmin(*cw, (double)(L->pane[k].w - w) / cols); /* the room across for its cells */
        }
    }
    *cw = fmin(*cw, 3 * cell); /* cells up to three times as wide as tall, for the numbers */
    return cell;
}

/* The arrangement to draw (*best): of those whose cells hold the numbers,
 * the one with the largest cells (their area: wider cells hold the numbers
 * better); else the one with the largest cells (a fraction of a pixel counts
 * as the same size, and then the one that labels every row and column wins).
 * Returns its cell's size, √(height · width), 0 when nothing fits. */
static double arrange(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box, const int sink_w[3],
                      compare_layout *best)
{
    double best_ch = 0;
    int u = draw_line_h(dl), numbers_w = draw_text_w(dl, "−0.00") + 6;
    double best_score = -1;
    for (int kind = 0; kind < N_ARRANGEMENTS; kind++) {
        compare_layout L;
        bool labelled;
        double cw, ch = arrangement(dl, app, a, box, kind, true, sink_w, &L, &cw, &labelled);
        if (ch <= 0) continue;
        bool numbers = ch >= u + 2 && cw >= numbers_w;
        if (!numbers && kind == TWO_OVER_ONE) /* square cells: the room to spare right of the toggled pane */
            ch = arrangement(dl, app, a, box, kind, false, sink_w, &L, &cw, &labelled);
        if (!numbers) cw = ch; /* square cells unless wider ones show the numbers */
        double score = numbers ? 1e9 + ch * cw : floor(ch) * 1e4 + (labelled ? 5e3 : 0) + fmin(ch * ch, 4999);
        if (score > best_score) {
            best_score = score;
            best_ch = sqrt(ch * cw);
            *best = L;
            for (int k = 0; k < 3; k++) {
                best->opts[k].max_cell = ch;
                best->opts[k].cell_w = cw;
            }
        }
    }
    if (best_score < 0) {
        bool labelled;
        arrangement(dl, app, a, box, SIDE_BY_SIDE, false, sink_w, best, &(double){0}, &labelled);
    }
    return best_ch;
}

/* The weights with a learned sink on one side or both: each pane's sink
 * column (none where that trace has no sink), and in the difference pane
 * where the weight went, toggled − configured (a missing sink counts 0), on
 * the difference's scale; every row of the difference, sink included, sums
 * to 0. */
typedef struct {
    app_slice col[3];
    int w[3]; /* each pane's sink column with its gap, 0 for none */
} compare_sinks;

static void sinks_make(draw_list *dl, const app_state *app, const app_view_slice *a, const app_view_slice *b,
                       compare_sinks *S)
{
    bool has[2] = {draw_plot_sink_slice(&app->trace, a, &S->col[0]), b && draw_plot_sink_slice(&app->alt, b, &S->col[1])};
    int sw = draw_plot_sink_width(dl);
    S->w[0] = has[0] ? sw : 0;
    S->w[1] = has[1] ? sw : 0;
    S->w[2] = has[0] || has[1] ? sw : 0;
    if (!S->w[2]) return;
    float *d = draw_list_floats(dl, (size_t)a->slice.rows);
    if (!d) {
        S->w[2] = 0;
        return;
    }
    for (int i = 0; i < a->slice.rows; i++) {
        float x = has[0] && i < S->col[0].rows ? app_slice_at(&S->col[0], i, 0) : 0.0f;
        float y = has[1] && i < S->col[1].rows ? app_slice_at(&S->col[1], i, 0) : 0.0f;
        d[i] = y - x;
    }
    S->col[2] = (app_slice){d, a->slice.rows, 1, 1, 1, NULL, 0, 0};
}

/* The toggled trace's picture of the stage, when there is one of the same size. */
static bool toggled_view(const app_state *app, const char *stage, const app_view_slice *a, app_view_slice *b)
{
    return app->has_alt && !app_view_make(&app->alt, stage, app->view.batch, app->view.head, b) &&
           b->slice.rows == a->slice.rows && b->slice.cols == a->slice.cols;
}

static void sink_opts(draw_plot_opts *o, const compare_sinks *S, int k)
{
    if (S->w[k]) o->sink = &S->col[k], o->sink_row0 = 0;
}

double draw_plot_compare_cell(draw_list *dl, const app_state *app, app_rect box)
{
    char name[ATTN_MAX_NAME];
    const char *stage = app_compare_stage(app, name, sizeof name);
    app_view_slice a;
    compare_layout L;
    if (app_view_make(&app->trace, stage, app->view.batch, app->view.head, &a)) return 0;
    box = title(dl, app, stage, a.head_axis, box, false);
    if (draw_plot_ranked_wanted(app, &a)) return sqrt(fmax(0.0, (double)box.w * box.h));
    app_view_slice b;
    compare_sinks S = {0};
    sinks_make(dl, app, &a, toggled_view(app, stage, &a, &b) ? &b : NULL, &S);
    return arrange(dl, app, &a, box, S.w, &L);
}

void draw_plot_compare(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    char buf[200], name[ATTN_MAX_NAME];
    const char *stage = app_compare_stage(app, name, sizeof name);
    app_view_slice a, b;
    if (app_view_make(&app->trace, stage, app->view.batch, app->view.head, &a)) return;
    box = title(dl, app, stage, a.head_axis, box, true);
    if (draw_plot_ranked_wanted(app, &a)) { /* logits, probs: three ranked panes */
        draw_plot_ranked_compare(dl, app, &a, box);
        return;
    }
    /* the three panes side by side, stacked, or two above the difference:
     * whichever lets numbers fit in the cells, else gives the largest cells */
    compare_layout L;
    compare_sinks S = {0};
    bool alt_ok = toggled_view(app, stage, &a, &b);
    sinks_make(dl, app, &a, alt_ok ? &b : NULL, &S);
    arrange(dl, app, &a, box, S.w, &L);
    app_rect *pane = L.pane, *p = L.p;
    app_scale sc = app->scale_head && a.head_axis ? app_view_slice_scale(a.tensor, &a.slice) : app_scale_of(app, a.tensor);
    draw_plot_opts o = L.opts[0];
    o.generation = app->generation;
    sink_opts(&o, &S, 0);
    draw_text_fit(dl, _("as configured"), pane[0].x, pane[0].y, pane[0].w - u, DRAW_TEXT_DIM);
    draw_plot_heatmap(dl, app, &app->trace, &a, &sc, p[0], &o);
    if (!alt_ok) {
        draw_text_fit(dl, app_busy(app, NULL, NULL, NULL) ? _("computing the toggled version…")
                                                           : _("no toggled version to show (see the status line)"),
                    pane[1].x, pane[1].y, box.x + box.w - pane[1].x, DRAW_TEXT_DIM);
        return;
    }
    snprintf(buf, sizeof buf, _("%s toggled"), app_compare_name(app->view.compare));
    draw_text_fit(dl, buf, pane[1].x, pane[1].y, pane[1].w - u, DRAW_TEXT_DIM);
    o = L.opts[1];
    o.generation = app->generation;
    sink_opts(&o, &S, 1);
    draw_plot_heatmap(dl, app, &app->alt, &b, &sc, p[1], &o);

    app_view_slice dview = a;
    app_scale dsc;
    int rounded, changed = difference(dl, &a.slice, &b.slice, &dview.slice, &dsc, &rounded);
    if (changed < 0) return;
    for (int i = 0; S.w[2] && i < S.col[2].rows; i++) { /* the sink's change on the same scale */
        float x = fabsf(app_slice_at(&S.col[2], i, 0));
        if (isfinite(x) && x > dsc.hi) dsc.hi = x, dsc.lo = -x;
    }
    const char *title = changed   ? _("difference (toggled − configured)")
                        : rounded ? _("difference: no change (|Δ| ≤ 1e-6 · max|x|, float rounding, drawn as 0)")
                                  : _("difference: no change, the toggle changes nothing here");
    char same[200];
    if (mla_same_output(app, same, sizeof same)) title = same;
    o = L.opts[2];
    sink_opts(&o, &S, 2);
    /* the scratch buffer's contents change with the head: never reuse its picture */
    o.generation = app->generation ^ 0x80000000u ^ (unsigned)(app->view.head * 7919 + app->view.batch * 104729 + app->view.compare);
    int area = draw_plot_heatmap(dl, app, &app->trace, &dview, &dsc, p[2], &o);
    app_rect at = pane[2];
    if (L.caption && area >= 0) { /* right of its colour bar, level with its first row */
        app_rect c = dl->layout->areas[area].r;
        at = (app_rect){c.x + c.w + draw_plot_colorbar_width(dl) + u / 2, c.y, 0, 0};
        at.w = box.x + box.w - at.x;
        if (at.w >= 8 * u) {
            draw_text_wrap(dl, title, at.x, at.y, at.w, DRAW_TEXT_DIM);
            return;
        }
    }
    if (draw_text_w(dl, title) > at.w - u) /* a narrow pane: a shorter title, never a cut one */
        title = changed ? _("toggled − configured") : _("difference: no change");
    draw_text_fit(dl, title, at.x, at.y, at.w - u, DRAW_TEXT_DIM);
}
