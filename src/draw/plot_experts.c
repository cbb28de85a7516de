/* plot_experts.c — the token × expert view (key E, `view = experts`): the
 * layer's tokens as rows and its routed experts as columns, each cell the
 * weight the token gives the expert's output (0: not chosen), each token's
 * heaviest expert framed; a caption with top-k of E and the shared experts;
 * under the columns, how many tokens chose each expert. A dense layer, or a
 * trace without experts, says so instead. The numbers are experts_view.c's;
 * the cells are a labelled heatmap (plot_heatmap.h), so the hover explains a
 * cell as the expert_weights stage does: token, expert, weight and rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experts_view.h"
#include "i18n.h"
#include "plot.h"
#include "plot_heatmap.h"

/* The caption over the cells: the layer, top-k of E, the shared experts. */
static void caption(const app_experts *ex, char *buf, size_t size)
{
    int n;
    /* TRANSLATORS: the token × expert view's caption; the layer, experts per token (k), routed experts (E) */
    n = snprintf(buf, size, _("layer %d: each token goes to its top %d of %d routed experts, weighted as the "
                              "cells show (empty: not chosen; framed: the token's heaviest)."),
                 ex->layer, ex->top_k, ex->E);
    if (n < 0 || (size_t)n >= size) return;
    if (ex->shared > 0)
        /* TRANSLATORS: after the caption; %d: n_shared_experts */
        snprintf(buf + n, size - (size_t)n, _(" Shared experts: %d, which every token goes through besides (not drawn)."),
                 ex->shared);
}

/* Each token's heaviest expert framed in white (rank 1: the largest weight,
 * ties to the lower index), one pass over its row. */
static void frame_heaviest(draw_list *dl, const app_experts *ex, app_rect r)
{
    for (int i = 0; i < ex->s; i++) {
        int best = -1;
        for (int e = 0; e < ex->E; e++) {
            float x = app_slice_at(&ex->w.slice, i, e);
            if (x != 0.0f && (best < 0 || x > app_slice_at(&ex->w.slice, i, best))) best = e;
        }
        if (best < 0) continue; /* a pad: no expert */
        int x, y, w, h;
        app_heat_cell_rect(r.w, r.h, ex->s, ex->E, i, best, &x, &y, &w, &h);
        if (w >= 4 && h >= 4) draw_outline(dl, r.x + x, r.y + y, w, h, w >= 12 ? 2 : 1, DRAW_WHITE);
    }
}

/* Under the columns, the tokens that chose each expert: its number where
 * every number fits its column, else a bar a line tall at most, the busiest
 * expert's full. */
static void load_row(draw_list *dl, const app_experts *ex, app_rect r, int y)
{
    char buf[16];
    int u = draw_line_h(dl), most = 1, n = ex->E < APP_EXPERTS_MAX ? ex->E : APP_EXPERTS_MAX;
    bool numbers = true;
    for (int e = 0; e < n; e++) {
        int x, yy, w, h;
        app_heat_cell_rect(r.w, r.h, ex->s, ex->E, 0, e, &x, &yy, &w, &h);
        snprintf(buf, sizeof buf, "%d", ex->load[e]);
        numbers &= draw_text_w(dl, buf) + 2 <= w;
        most = draw_imax(most, ex->load[e]);
    }
    for (int e = 0; e < n; e++) {
        int x, yy, w, h;
        app_heat_cell_rect(r.w, r.h, ex->s, ex->E, 0, e, &x, &yy, &w, &h);
        if (!numbers) { /* a bar: as tall as a line for the busiest */
            int bh = (int)((long)ex->load[e] * (u - 2) / most);
            if (bh > 0) draw_fill(dl, r.x + x, y + u - 1 - bh, draw_imax(1, w - (w > 3)), bh, DRAW_ACCENT);
            continue;
        }
        snprintf(buf, sizeof buf, "%d", ex->load[e]);
        int tw = draw_text_w(dl, buf);
        draw_text(dl, buf, r.x + x + (w - tw) / 2, y, ex->load[e] ? DRAW_TEXT : DRAW_TEXT_DIM);
    }
}

/* The busiest expert and the experts no token chose, in a sentence. */
static void load_text(const app_experts *ex, char *buf, size_t size)
{
    int busiest = 0, idle = 0;
    for (int e = 0; e < ex->E && e < APP_EXPERTS_MAX; e++) {
        if (ex->load[e] > ex->load[busiest]) busiest = e;
        idle += ex->load[e] == 0;
    }
    /* TRANSLATORS: under the token × expert view; expert, its tokens, the row's tokens, experts no token chose */
    snprintf(buf, size, _("Under each column, the tokens that chose the expert. Busiest: e%d, chosen by %d of the %d "
                          "tokens; %d of the %d experts chosen by none. Hover a cell for the token, the expert, its "
                          "weight and its rank."),
             busiest, ex->load[busiest], ex->s, idle, ex->E);
}

void draw_plot_experts(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    app_experts *ex = malloc(sizeof *ex);
    char err[300], line[600];
    if (!ex) {
        draw_text_wrap(dl, _("out of memory"), box.x, box.y + u, box.w, DRAW_ERROR);
        return;
    }
    if (app_experts_make(app, ex, err, sizeof err)) { /* a dense layer says so plainly; no experts at all is an error */
        bool dense = app_experts_kind_of(app) == APP_EXPERTS_DENSE;
        draw_text_wrap(dl, err, box.x, box.y + u, box.w, dense ? DRAW_TEXT : DRAW_ERROR);
        free(ex);
        return;
    }
    caption(ex, line, sizeof line);
    int y = box.y + draw_text_wrap(dl, line, box.x, box.y, box.w, DRAW_TEXT) * u + u / 2;
    load_text(ex, err, sizeof err);
    int foot = draw_text_wrap_lines(dl, err, box.w) * u;
    /* the cells, with room under them for the labels' note, the load row and the sentence */
    app_rect heat = {box.x, y, box.w, box.y + box.h - y - foot - 3 * u};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, ex->wmax > 0.0f ? ex->wmax : 1.0f};
    /* cells up to three lines wide, for the numbers and the e12 over them, as tall as the rows let them;
     * many more experts than tokens (DeepSeek-V3's 256): columns as narrow as they must be, rows as
     * tall as the room lets them */
    bool wide = ex->E >= 4 * ex->s;
    draw_plot_opts o = {.labels = true, .colorbar = true, .generation = app->generation, .max_cell = wide ? 0 : 4.5 * u,
                        .cell_w = wide ? 0 : 3.0 * u, .blank_zero = true};
    int area = heat.h > 2 * u ? draw_plot_heatmap(dl, app, &app->trace, &ex->w, &sc, heat, &o) : -1;
    if (area >= 0) {
        const app_heat_area *a = &dl->layout->areas[area];
        app_rect r = a->r;
        int note = a->row_label_step > 1 || a->col_label_step > 1 ? u + u / 4 : 0; /* "labels: 1 row in 2 …" */
        frame_heaviest(dl, ex, r);
        load_row(dl, ex, r, r.y + r.h + note + u / 4);
        y = r.y + r.h + note + u + u / 2;
    }
    draw_text_wrap(dl, err, box.x, y, box.w, DRAW_TEXT_DIM);
    free(ex);
}
