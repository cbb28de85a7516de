/* plot_single.c — the single view: one stage of one head as a labelled
 * heatmap, zoomed with a minimap, the bar chart of the selected query row
 * under it, a model's residual stream with each row's RMS, the KV cache's
 * line between cached and new rows; a vocabulary-wide stage as the ranked
 * view (plot_ranked.c). */
#include "plot.h"

#include <math.h>
#include <stdio.h>

#include "i18n.h"
#include "plot_heatmap.h"

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
    app_slice sink; /* the weights' sink column (o.sink), when the trace has one */
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
    s->o = (draw_plot_opts){true, false, true, 0, app->generation, 0, 0, NULL, 0, 0, false, NULL, 0, false};
    if (s->zoomed) { /* labels as large as the whole picture's: the window stays where the wheel put it under the mouse */
        draw_plot_placed whole;
        int lw;
        s->o.label_px = draw_plot_place(dl, &app->trace, &s->whole, box, &s->o, &whole, &lw) ? whole.label_px : -1;
    }
    if (draw_plot_sink_slice(&app->trace, &s->whole, &s->sink)) s->o.sink = &s->sink, s->o.sink_row0 = s->v.row0;
    if (rms_stage(s->t) && attn_trace_is_model(&app->trace) && s->v.slice.cols == s->whole.slice.cols)
        s->o.rms = &s->whole.slice, s->o.rms_row0 = s->v.row0;
    return true;
}

double draw_plot_single_cell(draw_list *dl, const app_state *app, app_rect box)
{
    single_view s;
    if (!single_view_make(dl, app, box, &s)) return 0;
    if (s.ranked) return sqrt(fmax(0.0, (double)box.w * box.h)); /* its rows and columns fill the box */
    if (s.o.rms) s.box.w -= draw_plot_rms_width(dl); /* as draw_plot_heatmap leaves it */
    if (s.o.sink) s.box.w -= draw_plot_sink_width(dl);
    draw_plot_placed p;
    int lw;
    if (!draw_plot_place(dl, &app->trace, &s.v, s.box, &s.o, &p, &lw)) return 0;
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
    /* ALiBi's bias: always the head's own range, its slope's; the grid compares the slopes on one scale */
    bool own = app->scale_head || attn_tensor_stage(t) == ATTN_STAGE_BIAS;
    app_scale sc = own && v.head_axis ? app_view_slice_scale(t, &whole.slice) : app_scale_of(app, t);
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
