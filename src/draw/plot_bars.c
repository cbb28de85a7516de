/* plot_bars.c — the selected query row's weights as bars over its keys,
 * and as one stacked bar reaching 1. */
#include "plot.h"

#include <math.h>
#include <stdio.h>

#include "i18n.h"

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
    /* wrapped, never cut; unless its lines would leave no room for the bars (a phone): then one line, cut */
    int title = draw_text_wrap_lines(dl, buf, box.w - u);
    if (box.h - (title + 5) * u < u) title = 1, draw_text_fit(dl, buf, box.x + u / 2, box.y + u / 4, box.w - u, DRAW_TEXT);
    else draw_text_wrap(dl, buf, box.x + u / 2, box.y + u / 4, box.w - u, DRAW_TEXT);

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
