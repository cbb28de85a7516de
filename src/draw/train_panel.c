/* train_panel.c — the loss curve and the heads' measures over training (train_panel.h). */
#include "train_panel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "i18n.h"

#define DRAW_TRAIN_COLOUR   DRAW_ACCENT /* the training loss */
#define DRAW_HELDOUT_COLOUR 0xFFFFB74Du /* the held-out loss */
#define DRAW_MARK_COLOUR    0xC0FFFFFFu /* the step shown */
#define DRAW_ASKED_COLOUR   0x60FFFFFFu /* the step asked for, while it loads */

const char *draw_train_metric_name(int metric)
{
    switch (metric) {
    case ATTN_METRIC_INDUCTION: return _("induction score");
    case ATTN_METRIC_FIRST: return _("weight on <s>");
    default: return _("previous-token weight");
    }
}

int draw_train_panel_height(draw_list *dl, const app_state *app, int avail)
{
    if (!app->train.n || !app->train.metrics.n || app->from_file) return 0;
    int u = draw_line_h(dl), h = draw_imin(11 * u, avail * 36 / 100);
    return h >= 7 * u ? h : 0;
}

/* A plot's frame: steps on a log axis, log(1 + step / c) with c the first
 * step after 0, so that step 0 has a place; values y0 .. y1 upwards. */
typedef struct {
    app_rect r;
    double c, x0, x1, y0, y1;
} axes;

static double log_step(const axes *a, long step)
{
    return log1p((double)step / a->c);
}

static float at_x(const axes *a, long step)
{
    double f = a->x1 > a->x0 ? (log_step(a, step) - a->x0) / (a->x1 - a->x0) : 0.5;
    return (float)(a->r.x + f * (a->r.w - 1));
}

static float at_y(const axes *a, double v)
{
    double f = a->y1 > a->y0 ? (v - a->y0) / (a->y1 - a->y0) : 0.5;
    return (float)(a->r.y + (1.0 - f) * (a->r.h - 1));
}

static axes make_axes(const attn_metrics *m, app_rect r, double y0, double y1)
{
    axes a = {.r = r, .c = 1, .y0 = y0, .y1 = y1};
    for (int s = 0; s < m->n; s++)
        if (m->step[s] > 0) {
            a.c = (double)m->step[s];
            break;
        }
    a.x0 = log_step(&a, m->step[0]);
    a.x1 = log_step(&a, m->step[m->n - 1]);
    return a;
}

/* values[s · stride] over the snapshots as a line with a dot at each. */
static void curve(draw_list *dl, const axes *a, const attn_metrics *m, const double *values, int stride, float t,
                  uint32_t colour, bool dots)
{
    for (int s = 0; s < m->n; s++) {
        float x = at_x(a, m->step[s]), y = at_y(a, values[(size_t)s * stride]);
        if (s > 0)
            draw_segment(dl, at_x(a, m->step[s - 1]), at_y(a, values[(size_t)(s - 1) * stride]), x, y, t, colour);
        if (dots) draw_fill(dl, (int)lroundf(x - t), (int)lroundf(y - t), (int)lroundf(2 * t + 1), (int)lroundf(2 * t + 1), colour);
    }
}

/* The step shown (and the one asked for, while it loads) as vertical lines. */
static void marks(draw_list *dl, const app_state *app, const axes *a)
{
    const app_training *t = &app->train;
    int shown = app_training_position(t, app->cfg.model), asked = app_train_newest(app);
    if (asked >= 0 && asked != shown)
        draw_line_to(dl, (int)lroundf(at_x(a, app_training_step(t, asked))), a->r.y,
                     (int)lroundf(at_x(a, app_training_step(t, asked))), a->r.y + a->r.h, 1, DRAW_ASKED_COLOUR);
    if (shown >= 0)
        draw_line_to(dl, (int)lroundf(at_x(a, app_training_step(t, shown))), a->r.y,
                     (int)lroundf(at_x(a, app_training_step(t, shown))), a->r.y + a->r.h, 1, DRAW_MARK_COLOUR);
}

/* "step 400 of 4000 (j J)", or the final model's line. */
static void step_title(const app_state *app, char *buf, size_t size)
{
    const app_training *t = &app->train;
    int at = app_training_position(t, app->cfg.model);
    long last = t->steps[t->n - 1];
    if (at == t->n)
        /* TRANSLATORS: the training panel's title when the model shown is the one training ended with */
        snprintf(buf, size, _("final model (step %ld) · j J: training steps"), last);
    else
        /* TRANSLATORS: the training panel's title: the checkpoint shown, of the training's last step */
        snprintf(buf, size, _("training step %ld of %ld · j J"), app_training_step(t, at), last);
}

/* The x axis: the steps' labels where they do not overlap, under r, and,
 * when `caption` and there is room, what the axis is under them. */
static void step_labels(draw_list *dl, const axes *a, const attn_metrics *m, int y, bool caption)
{
    int u = draw_line_h(dl), end = a->r.x - u;
    for (int s = 0; s < m->n; s++) {
        char lab[24];
        snprintf(lab, sizeof lab, "%ld", m->step[s]);
        int w = draw_text_w(dl, lab), x = (int)lroundf(at_x(a, m->step[s])) - w / 2;
        if (x < end + u / 3 || x + w > a->r.x + a->r.w + w / 2) continue;
        draw_text(dl, lab, x, y, DRAW_TEXT);
        end = x + w;
    }
    /* TRANSLATORS: under the training plots' x axis: the saved steps are spaced like a logarithm of the step */
    if (caption) draw_text_fit(dl, _("training step (log scale)"), a->r.x, y + u, a->r.w, DRAW_TEXT_DIM);
}

/* The clicks of a plot: each snapshot's column opens its step. */
static void step_hits(draw_list *dl, const app_state *app, const axes *a, const attn_metrics *m)
{
    for (int s = 0; s < m->n; s++) {
        int at = -1;
        for (int p = 0; p < app->train.n; p++)
            if (app->train.steps[p] == m->step[s]) at = p;
        if (at < 0) continue;
        int l = s > 0 ? (int)lroundf((at_x(a, m->step[s - 1]) + at_x(a, m->step[s])) / 2) : a->r.x;
        int r = s + 1 < m->n ? (int)lroundf((at_x(a, m->step[s]) + at_x(a, m->step[s + 1])) / 2) : a->r.x + a->r.w;
        /* TRANSLATORS: the tooltip of the loss curve's columns */
        app_layout_hit_tip(dl->layout, (app_rect){l, a->r.y, r - l, a->r.h}, APP_ACT_TRAIN_AT, at,
                           _("show the model as it was at this training step"));
    }
}

/* "loss, nats/token:  — training text  — held-out text": its width, and
 * drawn at (x, y) when draw. */
static int legend(draw_list *dl, int x, int y, bool draw)
{
    int u = draw_line_h(dl), x0 = x;
    /* TRANSLATORS: the training panel's loss plot; then its legend */
    const char *what = _("loss, nats/token:"), *train = _("training text"), *held = _("held-out text");
    if (draw) draw_text(dl, what, x, y, DRAW_TEXT);
    x += draw_text_w(dl, what) + u / 2;
    if (draw) draw_fill(dl, x, y + u / 2 - 1, u, 3, DRAW_TRAIN_COLOUR);
    x += u + u / 4;
    if (draw) draw_text(dl, train, x, y, DRAW_TEXT);
    x += draw_text_w(dl, train) + u / 2;
    if (draw) draw_fill(dl, x, y + u / 2 - 1, u, 3, DRAW_HELDOUT_COLOUR);
    x += u + u / 4;
    if (draw) draw_text(dl, held, x, y, DRAW_TEXT);
    return x + draw_text_w(dl, held) - x0;
}

static void loss_plot(draw_list *dl, const app_state *app, app_rect box, bool caption)
{
    const attn_metrics *m = &app->train.metrics;
    int u = draw_line_h(dl), y = box.y;
    char buf[200];
    step_title(app, buf, sizeof buf);
    draw_text_fit(dl, buf, box.x, y, box.w, DRAW_WHITE);
    y += u + u / 8;
    draw_clip_push(dl, (app_rect){box.x, y, box.w, u}); /* a narrow panel cuts the legend, never the grid beside it */
    legend(dl, box.x, y, true);
    draw_clip_pop(dl);
    y += u + u / 4;
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < m->n; s++) {
        lo = fmin(lo, fmin(m->train_loss[s], m->heldout_loss[s]));
        hi = fmax(hi, fmax(m->train_loss[s], m->heldout_loss[s]));
    }
    double pad = fmax(0.05 * (hi - lo), 0.01);
    char top[16], bottom[16];
    snprintf(top, sizeof top, "%.2f", hi);
    snprintf(bottom, sizeof bottom, "%.2f", lo);
    int lw = draw_imax(draw_text_w(dl, top), draw_text_w(dl, bottom)) + u / 2;
    app_rect r = {box.x + lw, y, box.w - lw - u / 2, box.y + box.h - y - (caption ? 2 : 1) * u - u / 4};
    if (r.w < 4 * u || r.h < 2 * u) return;
    axes a = make_axes(m, r, lo - pad, hi + pad);
    draw_fill(dl, r.x, r.y, r.w, r.h, DRAW_BG);
    for (int s = 0; s < m->n; s++) { /* a faint line at each snapshot */
        int sx = (int)lroundf(at_x(&a, m->step[s]));
        draw_line_to(dl, sx, r.y, sx, r.y + r.h, 1, DRAW_PANEL_HI);
    }
    draw_text(dl, top, box.x, (int)lroundf(at_y(&a, hi)) - u / 2, DRAW_TEXT);
    draw_text(dl, bottom, box.x, (int)lroundf(at_y(&a, lo)) - u / 2, DRAW_TEXT);
    float t = fmaxf(1.5f, (float)u / 9);
    marks(dl, app, &a);
    curve(dl, &a, m, m->train_loss, 1, t, DRAW_TRAIN_COLOUR, true);
    curve(dl, &a, m, m->heldout_loss, 1, t, DRAW_HELDOUT_COLOUR, true);
    step_labels(dl, &a, m, r.y + r.h + u / 8, caption);
    step_hits(dl, app, &a, m);
}

/* One head's measure over training, in a cell of the small multiples, its
 * value at the step shown in its corner (text px tall). */
static void head_plot(draw_list *dl, const app_state *app, app_rect cell, int layer, int head, int snap, int px)
{
    const attn_metrics *m = &app->train.metrics;
    attn_metric k = (attn_metric)app->train_metric;
    bool shown = layer == app->view.layer && head == app->view.head;
    draw_fill(dl, cell.x, cell.y, cell.w, cell.h, DRAW_BG);
    app_rect r = {cell.x + 2, cell.y + 2, cell.w - 4, cell.h - 4};
    axes a = make_axes(m, r, 0.0, 1.0);
    marks(dl, app, &a);
    const double *v = m->head[k] + (size_t)layer * m->heads + head;
    float t = fmaxf(shown ? 2.0f : 1.5f, (float)draw_line_h(dl) / (shown ? 8 : 11));
    curve(dl, &a, m, v, m->layers * m->heads, t, shown ? DRAW_ACCENT : DRAW_TEXT, false);
    int frame_px = dl->px;
    dl->px = px;
    if (snap >= 0 && cell.h >= 2 * draw_line_h(dl)) {
        char val[16];
        snprintf(val, sizeof val, "%.2f", attn_metrics_head(m, k, snap, layer, head));
        draw_text(dl, val, cell.x + 3, cell.y + 1, DRAW_WHITE);
    }
    dl->px = frame_px;
    if (shown) draw_outline(dl, cell.x - 1, cell.y - 1, cell.w + 2, cell.h + 2, 2, DRAW_ACCENT);
    if (m->layers * m->heads <= 64) /* the hits of a larger grid would crowd out the lesson panel's */
        /* TRANSLATORS: the tooltip of a head's small plot in the training panel */
        app_layout_hit_tip(dl->layout, cell, APP_ACT_TRAIN_HEAD, layer << 16 | head, _("show this head"));
}

/* The small multiples' title: the measure (a click switches it) and what it is measured on. */
static int head_grid_title(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    char buf[300];
    if (app->train_metric == ATTN_METRIC_INDUCTION)
        /* TRANSLATORS: the small multiples' title: the measure (a click switches it), and the text it is measured on */
        snprintf(buf, sizeof buf, _("each head's %s over training, on random words said twice ▸"),
                 draw_train_metric_name(app->train_metric));
    else
        snprintf(buf, sizeof buf, _("each head's %s over training, on the held-out sentences ▸"),
                 draw_train_metric_name(app->train_metric));
    int lines = draw_imin(2, draw_text_wrap_lines(dl, buf, box.w - u / 2));
    int w = lines > 1 ? box.w : draw_imin(draw_text_w(dl, buf) + u / 2, box.w);
    draw_fill(dl, box.x, box.y - 1, w, lines * u + 2, DRAW_PANEL_HI);
    if (lines > 1) draw_text_wrap(dl, buf, box.x + u / 4, box.y, w - u / 2, DRAW_WHITE);
    else draw_text_fit(dl, buf, box.x + u / 4, box.y, w - u / 2, DRAW_WHITE);
    /* TRANSLATORS: the tooltip of the small multiples' title */
    app_layout_hit_tip(dl->layout, (app_rect){box.x, box.y - 1, w, lines * u + 2}, APP_ACT_TRAIN_METRIC, 0,
                       _("plot another measure: previous-token weight, induction score, weight on <s>"));
    return lines * u + u / 4;
}

static void head_grid(draw_list *dl, const app_state *app, app_rect box)
{
    const attn_metrics *m = &app->train.metrics;
    int y = box.y + head_grid_title(dl, app, box), u = draw_line_h(dl);
    char buf[64];
    /* the grid's own text at the frame's size where its cells hold three lines of it, else smaller */
    int frame_px = dl->px, px = frame_px;
    int gap = draw_imax(2, u / 5);
    if ((box.y + box.h - y - u) / m->layers - gap < 3 * u || (box.w - 2 * u) / m->heads < 4 * u) px = draw_imax(10, frame_px * 3 / 4);
    dl->px = px;
    snprintf(buf, sizeof buf, _("L%d"), m->layers - 1);
    int s = draw_line_h(dl), lab_w = draw_text_w(dl, buf) + s / 2;
    app_rect g = {box.x + lab_w, y + s, box.w - lab_w, box.y + box.h - y - s};
    int cw = (g.w + gap) / m->heads - gap, ch = (g.h + gap) / m->layers - gap;
    for (int h = 0; h < m->heads && cw >= 6; h++) {
        snprintf(buf, sizeof buf, _("h%d"), h);
        draw_text(dl, buf, g.x + h * (cw + gap) + (cw - draw_text_w(dl, buf)) / 2, y, DRAW_TEXT);
    }
    for (int l = 0; l < m->layers && ch >= 6; l++) {
        /* TRANSLATORS: a row of the small multiples: layer %d (short) */
        snprintf(buf, sizeof buf, _("L%d"), l);
        draw_text(dl, buf, box.x, g.y + l * (ch + gap) + (ch - s) / 2, DRAW_TEXT);
    }
    dl->px = frame_px;
    if (cw < 6 || ch < 6) return;
    int snap = app_training_snapshot(&app->train, app_training_position(&app->train, app->cfg.model));
    for (int l = 0; l < m->layers; l++)
        for (int h = 0; h < m->heads; h++)
            head_plot(dl, app, (app_rect){g.x + h * (cw + gap), g.y + l * (ch + gap), cw, ch}, l, h, snap, px);
}

/* The best head's induction score at each snapshot, into best (n). */
static void best_induction(const attn_metrics *m, double *best)
{
    for (int s = 0; s < m->n; s++) {
        best[s] = 0;
        for (int l = 0; l < m->layers; l++)
            for (int h = 0; h < m->heads; h++)
                best[s] = fmax(best[s], attn_metrics_head(m, ATTN_METRIC_INDUCTION, s, l, h));
    }
}

/* One series over training in box: its title with the value at the step
 * shown, the curve between y0 and y1 (their labels at the left), the steps
 * under it, a click on a column opening that step. */
static void series_plot(draw_list *dl, const app_state *app, app_rect box, const char *title, const double *v,
                        double y0, double y1, bool caption)
{
    const attn_metrics *m = &app->train.metrics;
    int u = draw_line_h(dl), snap = app_training_snapshot(&app->train, app_training_position(&app->train, app->cfg.model));
    char buf[300], lo[16], hi[16];
    if (snap >= 0 && isfinite(v[snap])) /* the value first: a narrow plot cuts its title, not the value */
        snprintf(buf, sizeof buf, "%s%.2f  %s", v[snap] < 0 ? "−" : "", fabs(v[snap]), title);
    else snprintf(buf, sizeof buf, "%s", title);
    draw_text_fit(dl, buf, box.x, box.y, box.w, DRAW_WHITE);
    snprintf(hi, sizeof hi, "%s%.1f", y1 < 0 ? "−" : "", fabs(y1));
    snprintf(lo, sizeof lo, "%s%.1f", y0 < 0 ? "−" : "", fabs(y0));
    int lw = draw_imax(draw_text_w(dl, hi), draw_text_w(dl, lo)) + u / 2;
    app_rect r = {box.x + lw, box.y + u + u / 4, box.w - lw - 3 * u / 2, box.h - (caption ? 3 : 2) * u - u / 2};
    if (r.w < 4 * u || r.h < u) return;
    axes a = make_axes(m, r, y0, y1);
    draw_fill(dl, r.x, r.y, r.w, r.h, DRAW_BG);
    if (y0 < 0 && y1 > 0) draw_line_to(dl, r.x, (int)lroundf(at_y(&a, 0)), r.x + r.w, (int)lroundf(at_y(&a, 0)), 1, DRAW_PANEL_HI);
    draw_text(dl, hi, box.x, r.y - u / 4, DRAW_TEXT);
    draw_text(dl, lo, box.x, r.y + r.h - u + u / 4, DRAW_TEXT);
    marks(dl, app, &a);
    curve(dl, &a, m, v, 1, fmaxf(1.5f, (float)u / 9), DRAW_TRAIN_COLOUR, true);
    step_labels(dl, &a, m, r.y + r.h + u / 8, caption);
    step_hits(dl, app, &a, m);
}

/* Olsson et al.'s two dates of the phase change, on random words said twice:
 * the best head's induction score and the second copy's loss minus the first's. */
static void phase_plots(draw_list *dl, const app_state *app, app_rect box)
{
    const attn_metrics *m = &app->train.metrics;
    double *best = malloc((size_t)m->n * sizeof *best);
    if (!best) return;
    best_induction(m, best);
    double lo = 0;
    bool drop = false;
    for (int s = 0; s < m->n; s++)
        if (isfinite(m->icl_drop[s])) lo = fmin(lo, m->icl_drop[s]), drop = true;
    int u = draw_line_h(dl);
    /* TRANSLATORS: above the two phase-change plots of the training view: the text they are measured on */
    draw_text_fit(dl, _("on random words said twice:"), box.x, box.y, box.w, DRAW_TEXT);
    box.y += u + u / 8;
    box.h -= u + u / 8;
    int h = drop ? box.h / 2 : box.h;
    /* TRANSLATORS: a training plot: the largest induction score of any head */
    series_plot(dl, app, (app_rect){box.x, box.y, box.w, h}, _("best head's induction score"), best, 0.0, 1.0, !drop);
    if (drop)
        /* TRANSLATORS: a training plot: loss on the second copy of the random words minus the loss on the first, nats/token */
        series_plot(dl, app, (app_rect){box.x, box.y + h, box.w, box.h - h}, _("loss, second copy − first (nats/token)"),
                    m->icl_drop, floor(lo * 2) / 2, 0.0, true);
    free(best);
}

void draw_train_panel(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    app_rect in = {box.x + u / 2, box.y + u / 3, box.w - u, box.h - u / 2};
    /* the loss plot as wide as its legend, the small multiples keeping at least 10 lines */
    int lw = draw_imax(in.w * 2 / 5, draw_imin(in.w, draw_imax(18 * u, legend(dl, 0, 0, false))));
    if (in.w - lw - u < 10 * u) lw = draw_imax(in.w * 2 / 5, in.w - 11 * u);
    loss_plot(dl, app, (app_rect){in.x, in.y, lw, in.h}, false);
    if (in.w - lw - u >= 8 * u) head_grid(dl, app, (app_rect){in.x + lw + u, in.y, in.w - lw - u, in.h});
}

bool draw_train_view_ok(const app_state *app)
{
    return app->train.n && app->train.metrics.n && !app->from_file;
}

void draw_train_view(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    /* the loss and the phase change's two measures side by side on top, the heads' small plots under them */
    int top = draw_imax(9 * u, box.h * 9 / 20), half = (box.w - u) / 2;
    loss_plot(dl, app, (app_rect){box.x, box.y, half, top}, true);
    phase_plots(dl, app, (app_rect){box.x + half + u, box.y, box.w - half - u, top});
    head_grid(dl, app, (app_rect){box.x, box.y + top + u / 2, box.w, box.h - top - u / 2});
}
