/* plot_grid.c — the all-heads grid: every head of the current stage as a
 * thumbnail framed in its K/V group's colour, with what the heads share
 * (MHA, GQA, MQA, MLA's latent) said above them and one colour bar. */
#include "plot.h"

#include <math.h>
#include <stdio.h>

#include "i18n.h"
#include "plot_heatmap.h"

/* What the grid shows: MHA, GQA, MQA or MLA in words, and the mask's broadcast
 * (broadcast_mask), at the top of box; returns the height used. */
static int grid_caption(draw_list *dl, const attn_dims *d, bool broadcast_mask, app_rect box)
{
    int u = draw_line_h(dl);
    char buf[160];
    if (d->g <= 0 || d->h <= 0) /* a trace another program wrote, without K/V heads */
        snprintf(buf, sizeof buf, _("%d heads; this trace says nothing of their K/V heads"), d->h);
    else if (d->mode == ATTN_MODE_MLA) /* g = h inside, but nothing per head is cached */
        snprintf(buf, sizeof buf, _("MLA: each of the %d heads rebuilds its keys and values from one latent (R = %d)"),
                 d->h, d->kv_rank);
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

/* Whether a thumbnail in r can carry labels: with a label column of about
 * four characters, its cells would still be 3/4 of a line tall (labels the
 * line would thin out are set that much smaller: draw_plot_place). */
static bool thumb_labels(app_rect r, const app_view_slice *v, int u)
{
    return v->slice.rows > 0 && v->slice.cols > 0 && (r.w - 3 * u) / v->slice.cols >= u * 3 / 4 &&
           (r.h - 2 * u) / v->slice.rows >= u * 3 / 4;
}

/* The number of columns for n thumbnails of v's rows × cols cells in w × h
 * pixels (u: a line, the room for captions): a layout whose thumbnails can
 * carry their token labels when one can (thumb_labels), and among layouts
 * alike the one with the largest cells, counted after the labels' room. */
static int grid_columns(int n, int w, int h, const app_view_slice *v, int u)
{
    int best = 1, best_labels = -1;
    double best_cell = -1;
    for (int nc = 1; nc <= n; nc++) {
        int nr = (n + nc - 1) / nc;
        app_rect inner = {0, 0, w / nc - u, h / nr - u * 3 / 2 - u / 2}; /* as draw_plot_grid places it */
        int labels = thumb_labels(inner, v, u);
        double cw = inner.w - (labels ? 3 * u : 0), ch = inner.h - (labels ? 2 * u : 0);
        double cell = fmin(cw / v->slice.cols, ch / v->slice.rows);
        if (labels > best_labels || (labels == best_labels && cell > best_cell))
            best = nc, best_labels = labels, best_cell = cell;
    }
    return best;
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
    int gw = box.w - draw_plot_colorbar_width(dl);
    int nc = grid_columns(d->h, gw, box.h, &v, u), nr = (d->h + nc - 1) / nc;
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
        draw_plot_opts o = {thumb_labels(inner, &hv, u), false, false, 0, app->generation, 0, 0, NULL, 0, 0, false, NULL, 0, false};
        app_slice sink; /* each head's sink column beside its weights, where the thumbnail has room for labels */
        if (o.labels && draw_plot_sink_slice(&app->trace, &hv, &sink)) o.sink = &sink;
        int a = draw_plot_heatmap(dl, app, &app->trace, &hv, &sc, inner, &o);
        if (a >= 0) {
            app_rect r = dl->layout->areas[a].r;
            draw_outline(dl, r.x - 4, r.y - 4, r.w + 8, r.h + 8, 3, gc);
            if (cur) draw_outline(dl, r.x - 7, r.y - 7, r.w + 14, r.h + 14, 2, DRAW_WHITE);
        }
    }
    if (attn_tensor_stage(t) == ATTN_STAGE_MASK) /* the mask's two values: a legend, not a colour scale */
        draw_plot_mask_legend(dl, &sc, &v.slice, box.x + gw + u / 2, box.y + u + u / 4);
    else
        draw_plot_colorbar(dl, &sc, box.x + gw + u / 2, box.y + u + u / 4, draw_imin(box.h - 4 * u, 12 * u), draw_plot_specials(dl, app->generation, &v, &v.slice),
                 box.y + box.h);
}
