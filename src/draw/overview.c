/* overview.c — a model's every layer × every head of the current stage, as
 * thumbnails framed by K/V group; a click opens one (app_input.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "i18n.h"
#include "plot.h"
#include "plot_heatmap.h"
#include "view.h"

/* Shared axes: the thumbnails of a layer row read the same tokens on their
 * rows, those of a head column on their columns, so the first of each row
 * carries the row labels (lw wide) and the top row the column labels (a band
 * lh tall), all at one label size (3/4 of the text) and one cell size, where
 * every label fits. */
typedef struct {
    bool on;
    int lw, lh, label_px;
    double cell;
} axes_plan;

static axes_plan shared_axes(draw_list *dl, const app_state *app, const app_view_slice *v, app_rect grid, int nh, int L)
{
    axes_plan a = {.label_px = draw_imax(10, dl->px * 3 / 4)};
    int u = draw_line_h(dl), aw, ah, frame_px = dl->px;
    bool turned;
    if (v->slice.rows > 32 || v->slice.cols > 32 || v->slice.rows <= 0 || v->slice.cols <= 0) return a;
    draw_plot_opts o = {.labels = true, .label_px = a.label_px};
    app_rect one = {0, 0, grid.w / nh - 8, grid.h / L - u / 4 - 8};
    for (int pass = 0; pass < 2; pass++) /* the labels' room in a thumbnail that has them, then with that room added */
        draw_plot_layout(dl, &app->trace, v, (app_rect){0, 0, one.w + a.lw, one.h + a.lh}, &o, &a.lw, &a.lh, &aw, &ah, &turned);
    int pw = (grid.w - a.lw) / nh, ph = (grid.h - a.lh) / L - u / 4;
    a.cell = fmin((pw - 8) / (double)v->slice.cols, (ph - 8) / (double)v->slice.rows);
    dl->px = a.label_px;
    a.on = a.cell >= 0.95 * draw_line_h(dl); /* a line for each row's label, and across each column */
    dl->px = frame_px;
    return a;
}

/* Thumbnail (l, hh) of the overview in grid, with its labels' room when it has them (a). */
static app_rect thumb_box(app_rect grid, const axes_plan *a, int nh, int L, int l, int hh, int u)
{
    int lw = a->on ? a->lw : 0, lh = a->on ? a->lh : 0;
    int pw = (grid.w - lw) / nh, ph = (grid.h - lh) / L - u / 4;
    app_rect r = {grid.x + lw + hh * pw + 4, grid.y + lh + l * (ph + u / 4) + 4, pw - 8, ph - 8};
    if (hh == 0) r.x -= lw, r.w += lw;
    if (l == 0) r.y -= lh, r.h += lh;
    return r;
}

void draw_plot_overview(draw_list *dl, const app_state *app, app_rect box)
{
    const attn_trace *tr = &app->trace;
    const attn_dims *d = &tr->dims;
    const attn_tensor *shown = app_tensor(app);
    int u = draw_line_h(dl), L = tr->n_layers;
    char buf[160];
    if (!shown || d->h <= 0 || L <= 0) return; /* app_overview: never so */
    const char *stage = shown->name;
    attn_tensor_name_layer(stage, &stage);
    /* TRANSLATORS: the overview's caption: the stage shown in every layer and head */
    snprintf(buf, sizeof buf, _("%s of every layer (rows) and head (columns), framed by K/V group · click one to open it"),
             stage);
    int lines = draw_text_wrap_lines(dl, buf, box.w); /* wrapped, never cut: it says how to read the grid */
    draw_text_wrap(dl, buf, box.x, box.y, box.w, DRAW_TEXT_DIM);
    box.y += lines * u + u / 2;
    box.h -= lines * u + u / 2;
    int lab = draw_text_w(dl, "L00") + u / 2;
    app_rect grid = {box.x + lab, box.y + u, box.w - lab, box.h - u};
    app_view_slice first;
    const attn_tensor *t0 = attn_trace_get(tr, 0, stage);
    axes_plan axes = {0};
    int col_step[64] = {0}; /* the top thumbnail's of each head: the column labels of those under it */
    if (t0 && !app_view_make(tr, t0->name, app->view.batch, 0, &first)) axes = shared_axes(dl, app, &first, grid, d->h, L);
    for (int hh = 0; hh < d->h; hh++) {
        app_rect r = thumb_box(grid, &axes, d->h, L, 0, hh, u);
        int x = hh ? r.x - 4 : r.x + r.w - (grid.w - (axes.on ? axes.lw : 0)) / d->h + 4;
        snprintf(buf, sizeof buf, _("head %d · kv %d"), hh, app_view_kv_head(d, hh));
        draw_text_fit(dl, buf, x + u / 4, box.y, (grid.w - (axes.on ? axes.lw : 0)) / d->h - u / 2,
                      app_group_argb(app_view_kv_head(d, hh)));
    }
    for (int l = 0; l < L; l++) {
        const attn_tensor *t = attn_trace_get(tr, l, stage);
        app_rect r = thumb_box(grid, &axes, d->h, L, l, d->h - 1, u);
        snprintf(buf, sizeof buf, "L%d", l);
        draw_text(dl, buf, box.x, r.y + r.h - (r.h - (l == 0 && axes.on ? axes.lh : 0)) / 2 - u / 2,
                  l == app->view.layer ? DRAW_WHITE : DRAW_TEXT_DIM);
        if (!t) continue;
        app_scale sc = app_scale_of(app, t); /* one colour scale per layer, as in its grid */
        for (int hh = 0; hh < d->h; hh++) {
            app_view_slice hv;
            if (app_view_make(tr, t->name, app->view.batch, hh, &hv)) continue;
            draw_plot_opts o = {.labels = axes.on, .no_row_labels = hh > 0, .no_col_labels = l > 0,
                                .generation = app->generation, .max_cell = axes.on ? axes.cell : 0,
                                .label_px = axes.on ? axes.label_px : 0};
            int a = draw_plot_heatmap(dl, app, tr, &hv, &sc, thumb_box(grid, &axes, d->h, L, l, hh, u), &o);
            if (a < 0) continue;
            if (hh < 64 && axes.on) {
                if (l == 0) col_step[hh] = dl->layout->areas[a].col_label_step;
                else dl->layout->areas[a].col_label_step = col_step[hh];
            }
            app_rect ar = dl->layout->areas[a].r;
            draw_outline(dl, ar.x - 3, ar.y - 3, ar.w + 6, ar.h + 6, 2, app_group_argb(app_view_kv_head(d, hh)));
            if (l == app->view.layer && hh == app->view.head) draw_outline(dl, ar.x - 5, ar.y - 5, ar.w + 10, ar.h + 10, 1, DRAW_WHITE);
        }
    }
}
