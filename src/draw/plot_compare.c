/* plot_compare.c — the compare view: the current stage as configured, with
 * a mask or setting toggled, and their difference, three panes at one cell
 * size, laid out side by side, stacked or two over one. */
#include "plot.h"

#include <math.h>
#include <stdio.h>

#include "i18n.h"
#include "plot_heatmap.h"

/* The chips that choose which mask the compare view toggles, from (x, y),
 * wrapping to x0 at right; returns the y of the last line. */
static int toggle_chips(draw_list *dl, const app_state *app, int x, int y, int x0, int right)
{
    int u = draw_line_h(dl);
    for (int t = 0; t < attn_compare_count(); t++) {
        if (!app_compare_offered(app, t)) continue; /* the others while in use, or by t */
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
                          compare_layout *L, double *cw, int sink_w)
{
    int u = draw_line_h(dl), hh = box.h / 2, lw = 0, lh, aw, ah;
    bool turned;
    /* two over one: the upper panes split the width as they need it, the
     * first its row labels, the second its colour bar, for cells of one width */
    draw_plot_layout(dl, &app->trace, a, (app_rect){0, 0, box.w, box.h}, &(draw_plot_opts){.labels = true}, &lw, &lh, &aw, &ah, &turned);
    int cbw = draw_plot_colorbar_width(dl), cells = draw_imax(0, (box.w - lw - cbw - 2 * u) / 2);
    int w0 = lw + cells + u;
    for (int k = 0; k < 3; k++) {
        app_rect r = kind == SIDE_BY_SIDE ? (app_rect){box.x + k * (box.w / 3), box.y, box.w / 3, box.h}
                  : kind == STACKED      ? (app_rect){box.x, box.y + k * (box.h / 3), box.w, box.h / 3}
                  : k == 0               ? (app_rect){box.x, box.y, w0, hh}
                  : k == 1               ? (app_rect){box.x + w0, box.y, box.w - w0, hh}
                                         : (app_rect){box.x, box.y + hh, box.w, hh};
        L->pane[k] = r;
        L->p[k] = (app_rect){r.x, r.y + u * 3 / 2, r.w - u, r.h - u * 3 / 2 - (kind == SIDE_BY_SIDE ? 0 : u / 2)};
        L->p[k].w -= sink_w; /* measured without the sink column draw_plot_heatmap takes off its box */
        /* row labels on the panes at the left edge; a colour bar on the toggled and the difference */
        bool left = kind == STACKED || k == 0 || (kind == TWO_OVER_ONE && k == 2);
        L->opts[k] = (draw_plot_opts){true, !left, k > 0, k, 0, 0, 0, NULL, 0, 0, false, NULL, 0};
    }
    double cell = -1;
    *cw = 1e9;
    for (int k = 0; k < 3; k++) {
        double c = draw_plot_layout(dl, &app->trace, a, L->p[k], &L->opts[k], &lw, &lh, &aw, &ah, &turned);
        if (c <= 0) return -1;
        cell = cell < 0 ? c : fmin(cell, c);
        *cw = fmin(*cw, (double)aw / a->slice.cols);
    }
    cell = fmin(cell, 4.5 * u);
    *cw = fmin(*cw, 3 * cell); /* cells up to three times as wide as tall, for the numbers */
    return cell;
}

static void arrange(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box, compare_layout *best,
                    int sink_w)
{
    int u = draw_line_h(dl), numbers_w = draw_text_w(dl, "−0.00") + 6;
    double best_score = -1;
    for (int kind = 0; kind < N_ARRANGEMENTS; kind++) {
        compare_layout L;
        double cw, ch = arrangement(dl, app, a, box, kind, &L, &cw, sink_w);
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
    if (best_score < 0) arrangement(dl, app, a, box, SIDE_BY_SIDE, best, &(double){0}, sink_w);
    for (int k = 0; k < 3; k++) best->p[k].w += sink_w; /* draw_plot_heatmap takes it off again */
}

/* The weights with a learned sink on one side or both: each pane's sink
 * column (a missing one is all 0: no sink, no share), and in the difference
 * pane where the weight went, toggled − configured, on the difference's
 * scale; every row of the difference, sink included, sums to 0. */
typedef struct {
    app_slice col[3];
    bool any;
} compare_sinks;

static void sinks_make(draw_list *dl, const app_state *app, const app_view_slice *a, const app_view_slice *b,
                       compare_sinks *S)
{
    bool has[2] = {draw_plot_sink_slice(&app->trace, a, &S->col[0]), b && draw_plot_sink_slice(&app->alt, b, &S->col[1])};
    S->any = has[0] || has[1];
    if (!S->any || !b) return;
    float *d = draw_list_floats(dl, (size_t)a->slice.rows);
    if (!d) return;
    for (int i = 0; i < a->slice.rows; i++) {
        float x = has[0] && i < S->col[0].rows ? app_slice_at(&S->col[0], i, 0) : 0.0f;
        float y = has[1] && i < S->col[1].rows ? app_slice_at(&S->col[1], i, 0) : 0.0f;
        d[i] = y - x;
    }
    for (int k = 0; k < 2; k++)
        if (!has[k]) S->col[k] = (app_slice){d, 0, 1, 1, 1, NULL, 0, 0}; /* rows 0: no column */
    S->col[2] = (app_slice){d, a->slice.rows, 1, 1, 1, NULL, 0, 0};
}

static void sink_opts(draw_plot_opts *o, const compare_sinks *S, int k)
{
    if (S->any && S->col[k].rows > 0) o->sink = &S->col[k], o->sink_row0 = 0;
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
    compare_sinks S = {0};
    bool alt_ok = app->has_alt && !app_view_make(&app->alt, stage, app->view.batch, app->view.head, &b) &&
                  b.slice.rows == a.slice.rows && b.slice.cols == a.slice.cols;
    sinks_make(dl, app, &a, alt_ok ? &b : NULL, &S);
    arrange(dl, app, &a, box, &L, S.any ? draw_plot_sink_width(dl) : 0);
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
    for (int i = 0; S.any && i < S.col[2].rows; i++) { /* the sink's change on the same scale */
        float x = fabsf(app_slice_at(&S.col[2], i, 0));
        if (isfinite(x) && x > dsc.hi) dsc.hi = x, dsc.lo = -x;
    }
    const char *title = changed   ? _("difference (toggled − configured)")
                        : rounded ? _("difference: no change (|Δ| ≤ 1e-6 · max|x|, float rounding, drawn as 0)")
                                  : _("difference: no change, the toggle changes nothing here");
    if (draw_text_w(dl, title) > pane[2].w - u) /* a narrow pane: a shorter title, never a cut one */
        title = changed ? _("toggled − configured") : _("difference: no change");
    draw_text_fit(dl, title, pane[2].x, pane[2].y, pane[2].w - u, DRAW_TEXT_DIM);
    o = L.opts[2];
    sink_opts(&o, &S, 2);
    /* the scratch buffer's contents change with the head: never reuse its picture */
    o.generation = app->generation ^ 0x80000000u ^ (unsigned)(app->view.head * 7919 + app->view.batch * 104729 + app->view.compare);
    draw_plot_heatmap(dl, app, &app->trace, &dview, &dsc, p[2], &o);
}
