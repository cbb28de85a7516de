/* plot_tiles.c — the FlashAttention view (key F, `view = tiles`): the s × t
 * grid cut into BQ × BK tiles, the key tiles done so far, the current one
 * highlighted and the tiles a causal mask skips greyed; beside it, for every
 * query row, m, ℓ and the partial output after the current key tile; below,
 * the bytes each path keeps per head and, at the last tile, how far the tiled
 * output is from the plain one. The numbers come from tiles_view.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "i18n.h"
#include "plot.h"
#include "tiles_view.h"

#define CELL_DONE    0xFF2F5D78u /* a key tile already passed */
#define CELL_NOW     0xFF4FC3F7u /* the current key tile */
#define CELL_LATER   0xFF3A3A48u /* a key tile still to come */
#define CELL_SKIPPED 0xFF24242Bu /* a tile the causal mask skips entirely */
#define TILE_LINE    0xFFE8E8ECu
#define CELL_MAX     44
#define CELL_MIN     16 /* the course's smallest cell, where the lines beside the table find room */
#define CELL_SHRUNK  8  /* the smallest a cell gets to keep the lines under the grid on screen */
#define DIFF_COLOUR  0xFFFFD54Fu /* the difference at the last tile, as a lesson's marks */

/* Where the grid goes: the cell size and the label room. */
typedef struct {
    int x, y;     /* the grid's top-left cell */
    int cell;     /* pixels a cell */
    int label_w;  /* room left of the grid for the query tokens */
    int head_h;   /* room above it for the key tokens (turned) */
    int col_w;    /* a column of the table right of it */
    int label_px; /* the token labels' text size: the frame's, or smaller (to 3/4) to fit a cell */
    int label_step; /* 1: every token labelled; k: one in k, where even that size is taller than a cell */
} grid_geom;

/* A number as the table prints it, "—" for none (no key seen yet). */
static const char *num(float v, char *buf, size_t size)
{
    if (isnan(v)) return "—";
    if (isinf(v)) return v < 0 ? "−∞" : "∞";
    return app_view_format(v, buf, size);
}

/* A difference as small as float rounding leaves it (1e-7), in full: %.3g. */
static const char *small_num(float v, char *buf, size_t size)
{
    if (!isfinite(v)) return num(v, buf, size);
    snprintf(buf, size, "%.3g", (double)v);
    return buf;
}

static int labels_width(draw_list *dl, const app_state *app, const app_view_slice *w, bool rows, int n)
{
    char buf[64];
    int most = 0;
    for (int i = 0; i < n; i++) {
        const char *s = rows ? app_view_row_label(&app->trace, w, i, buf, sizeof buf)
                             : app_view_col_label(&app->trace, w, i, buf, sizeof buf);
        most = draw_imax(most, draw_text_w(dl, s));
    }
    return most;
}

/* The token labels: query rows left of the grid, keys turned above it. */
static void token_labels(draw_list *dl, const app_state *app, const app_view_slice *w, const app_tiles *tv,
                         const grid_geom *g)
{
    char buf[64];
    int frame_px = dl->px;
    dl->px = g->label_px;
    int u = draw_line_h(dl);
    for (int i = 0; i < tv->s; i += g->label_step) {
        const char *s = app_view_row_label(&app->trace, w, i, buf, sizeof buf);
        draw_text(dl, s, g->x - 6 - draw_text_w(dl, s), g->y + i * g->cell + (g->cell - u) / 2, DRAW_TEXT);
    }
    for (int j = 0; j < tv->t; j += g->label_step) {
        const char *s = app_view_col_label(&app->trace, w, j, buf, sizeof buf);
        draw_text_turned(dl, s, g->x + j * g->cell + (g->cell - u) / 2, g->y - 6 - draw_text_w(dl, s),
                         (j / tv->bk) == tv->step ? DRAW_ACCENT : DRAW_TEXT);
    }
    dl->px = frame_px;
}

/* The labels' size for cells of g->cell: the frame's, else smaller down to
 * three quarters of it, where a line fits a cell; past that, one token in
 * label_step labelled, so that none overlaps the next. */
static void label_size(draw_list *dl, grid_geom *g)
{
    int frame_px = dl->px;
    while (dl->px > frame_px * 3 / 4 && draw_line_h(dl) > g->cell) dl->px--;
    int lh = draw_line_h(dl);
    g->label_px = dl->px;
    g->label_step = lh > g->cell ? (lh + g->cell - 1) / g->cell : 1;
    dl->px = frame_px;
}

/* The tiles: one fill per tile by its state, the borders, and the tile names. */
static void tile_cells(draw_list *dl, const app_tiles *tv, const grid_geom *g)
{
    char buf[32];
    for (int qi = 0; qi < tv->n_q; qi++)
        for (int kj = 0; kj < tv->n_k; kj++) {
            int r0 = qi * tv->bq, c0 = kj * tv->bk;
            int rows = draw_imin(tv->bq, tv->s - r0), cols = draw_imin(tv->bk, tv->t - c0);
            int x = g->x + c0 * g->cell, y = g->y + r0 * g->cell, w = cols * g->cell, h = rows * g->cell;
            bool skip = app_tiles_skipped(tv, qi, kj);
            uint32_t fill = skip ? CELL_SKIPPED : kj < tv->step ? CELL_DONE : kj == tv->step ? CELL_NOW : CELL_LATER;
            draw_fill(dl, x, y, w, h, fill);
            if (skip) draw_hatch(dl, x, y, w, h);
            for (int r = 1; r < rows; r++) draw_line_to(dl, x, y + r * g->cell, x + w, y + r * g->cell, 1, DRAW_BG);
            for (int c = 1; c < cols; c++) draw_line_to(dl, x + c * g->cell, y, x + c * g->cell, y + h, 1, DRAW_BG);
            draw_outline(dl, x, y, w, h, 2, TILE_LINE);
            if (kj == tv->step && !skip) draw_outline(dl, x - 2, y - 2, w + 4, h + 4, 2, DRAW_WHITE);
            snprintf(buf, sizeof buf, "%d,%d", qi + 1, kj + 1);
            if (draw_text_w(dl, buf) + 4 <= w && draw_line_h(dl) <= h)
                draw_text(dl, buf, x + 3, y + 2, kj == tv->step && !skip ? DRAW_BLACK : DRAW_TEXT_DIM);
        }
}

/* The table right of the grid: per query row m, ℓ, ‖o‖ and o's first feature (the rows labelled, in
 * the labels' size, where a line is taller than a cell). */
static void row_table(draw_list *dl, const app_tiles *tv, const grid_geom *g, int x)
{
    static const char *const HEAD[] = {"m", "ℓ", "‖o‖", "o[0]"};
    char buf[32];
    int u = draw_line_h(dl), col_w = g->col_w, frame_px = dl->px;
    for (int k = 0; k < 4; k++) draw_text_bold(dl, HEAD[k], x + k * col_w, g->y - u - 4, DRAW_ACCENT);
    dl->px = g->label_px; /* the rows as the token labels: their size, the same rows */
    u = draw_line_h(dl);
    for (int i = 0; i < tv->s; i += g->label_step) {
        int y = g->y + i * g->cell + (g->cell - u) / 2;
        float v[4] = {tv->m[i], tv->l[i], tv->norm[i], tv->first[i]};
        for (int k = 0; k < 4; k++)
            draw_text(dl, num(v[k], buf, sizeof buf), x + k * col_w, y, isnan(v[k]) ? DRAW_TEXT_DIM : DRAW_TEXT);
    }
    dl->px = frame_px;
}

/* The width of the table's column: its widest number, and a line's height between. */
static int column_width(draw_list *dl, const app_tiles *tv)
{
    char buf[32];
    int most = draw_text_w_bold(dl, "o[0]");
    for (int i = 0; i < tv->s; i++) {
        float v[4] = {tv->m[i], tv->l[i], tv->norm[i], tv->first[i]};
        for (int k = 0; k < 4; k++) most = draw_imax(most, draw_text_w(dl, num(v[k], buf, sizeof buf)));
    }
    return most + draw_line_h(dl);
}

/* The lines under the grid (or beside it, when it is tall): the formula,
 * the bytes per head, and at the last key tile the tiled output against the
 * plain one. Drawn at (box.x, box.y) when draw, else only counted; returns
 * their height. */
static int footer(draw_list *dl, const app_tiles *tv, app_rect box, bool draw)
{
    char mem[300], diff[300], formula[400], a[32];
    int u = draw_line_h(dl), y = box.y;
    /* TRANSLATORS: the FlashAttention view; the bytes of one head: s·t scores against one BQ×BK tile */
    snprintf(mem, sizeof mem, _("memory per head: the plain path keeps %d·%d scores × 4 B = %lld B; "
                                "the tiled path one %d×%d tile × 4 B = %lld B."),
             tv->s, tv->t, tv->bytes_plain, tv->bq, tv->bk, tv->bytes_tile);
    if (tv->step == tv->n_k - 1 && tv->latent)
        /* TRANSLATORS: the FlashAttention view of absorbed MLA at the last key tile; %s: a number such as 5.96e-08 */
        snprintf(diff, sizeof diff, _("last tile: the largest difference between the tiled latent output and the "
                                      "plain one (weights·c_kv) is %s."),
                 small_num(tv->max_diff, a, sizeof a));
    else if (tv->step == tv->n_k - 1)
        /* TRANSLATORS: the FlashAttention view at the last key tile; %s: a number such as 5.96e-08 */
        snprintf(diff, sizeof diff, _("last tile: the largest difference between the tiled output and the plain "
                                      "one (weights·v) is %s."),
                 small_num(tv->max_diff, a, sizeof a));
    else
        snprintf(diff, sizeof diff, "%s", _("at the last tile: the largest difference between the tiled and the plain output."));
    if (!tv->latent && isfinite(tv->sink))
        /* TRANSLATORS: the FlashAttention view with a sink; %s: the head's sink logit X, such as 0.5 */
        snprintf(formula, sizeof formula, _("o = Σ e^(S − m)·v / ℓ over the keys of the tiles so far, with m and ℓ "
                                            "after them: the output so far; at the last tile the sink's e^(X − m) "
                                            "joins ℓ (X = %s for this head), and o is the context."),
                 small_num(tv->sink, a, sizeof a));
    else
        snprintf(formula, sizeof formula, "%s",
                 tv->latent ? _("o = Σ e^(S − m)·c_kv / ℓ over the keys of the tiles so far: absorbed MLA "
                                "reads the latent cache as its values, so o is latent; at the last tile "
                                "it is context_latent, and W_UV makes the context.")
                            : _("o = Σ e^(S − m)·v / ℓ over the keys of the tiles so far, with m and ℓ "
                                "after them: the output so far; at the last tile it is the context."));
    const char *text[3] = {formula, mem, diff};
    const uint32_t colour[3] = {DRAW_TEXT_DIM, DRAW_TEXT, tv->step == tv->n_k - 1 ? DIFF_COLOUR : DRAW_TEXT_DIM};
    for (int k = 0; k < 3; k++)
        y += (draw ? draw_text_wrap(dl, text[k], box.x, y, box.w, colour[k]) : draw_text_wrap_lines(dl, text[k], box.w)) * u;
    return y - box.y;
}

/* The legend: what the fills mean, one swatch each. */
static int legend(draw_list *dl, int x, int y)
{
    static const uint32_t FILL[] = {CELL_DONE, CELL_NOW, CELL_LATER, CELL_SKIPPED};
    const char *text[] = {_("done"), _("current key tile"), _("still to come"), _("skipped: all masked")};
    int u = draw_line_h(dl);
    for (int k = 0; k < 4; k++) {
        draw_fill(dl, x, y + 2, u - 4, u - 4, FILL[k]);
        if (k == 3) draw_hatch(dl, x, y + 2, u - 4, u - 4);
        draw_outline(dl, x, y + 2, u - 4, u - 4, 1, TILE_LINE);
        x += u + draw_text(dl, text[k], x + u, y, DRAW_TEXT) + u;
    }
    return u;
}

void draw_plot_tiles(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    app_tiles *tv = malloc(sizeof *tv);
    app_view_slice w;
    char err[240], line[400];
    /* the labels of the layer's weights: a model's stage is "layers.L.weights" */
    static const attn_stage_id W[] = {ATTN_STAGE_WEIGHTS};
    if (!tv || app_tiles_make(app, tv, err, sizeof err) ||
        !app_view_first_of(&app->trace, app->view.layer, W, 1, app->view.batch, app->view.head, &w)) {
        draw_text_wrap(dl, tv ? err : _("out of memory"), box.x, box.y + u, box.w, DRAW_ERROR);
        free(tv);
        return;
    }
    int skip = 0; /* query tiles the causal mask hides the key tile shown from */
    for (int qi = 0; qi < tv->n_q; qi++) skip += app_tiles_skipped(tv, qi, tv->step);
    if (!skip)
        /* TRANSLATORS: the FlashAttention view's caption; head, tiles BQ×BK, query and key tiles, the key tile shown */
        snprintf(line, sizeof line, _("head %d, tiles %d×%d: %d query tiles × %d key tiles. Key tile %d of %d ([ ] steps): "
                                      "every query tile reads it, then m and ℓ are as on the right."),
                 app->view.head, tv->bq, tv->bk, tv->n_q, tv->n_k, tv->step + 1, tv->n_k);
    else
        /* TRANSLATORS: the same, when the causal mask hides the key tile from some query tiles: those that read
         * it, then those that skip it (hatched) */
        snprintf(line, sizeof line, _("head %d, tiles %d×%d: %d query tiles × %d key tiles. Key tile %d of %d ([ ] steps): "
                                      "%d query tiles read it and %d skip it (hatched: all masked), then m and ℓ are "
                                      "as on the right."),
                 app->view.head, tv->bq, tv->bk, tv->n_q, tv->n_k, tv->step + 1, tv->n_k, tv->n_q - skip, skip);
    int y = box.y + draw_text_wrap(dl, line, box.x, box.y, box.w, DRAW_TEXT) * u;
    y += legend(dl, box.x, y) + u / 2;
    grid_geom g;
    g.label_w = labels_width(dl, app, &w, true, tv->s) + 8;
    g.head_h = labels_width(dl, app, &w, false, tv->t) + 8;
    g.col_w = column_width(dl, tv);
    int room_w = box.w - g.label_w - 4 * g.col_w - 2 * u, bottom = box.y + box.h;
    int foot = footer(dl, tv, box, false), room_h = bottom - y - g.head_h - u - foot - u;
    /* the lines under the grid, cells as large as leaves them room; a tall grid (cells under 16 px)
     * puts them right of the table where there is room, else (beside a lesson) its cells shrink */
    int fit_w = draw_imin(CELL_MAX, room_w / tv->t), under = draw_imin(fit_w, room_h / tv->s);
    int tall = draw_imax(CELL_MIN, draw_imin(fit_w, (room_h + foot + u) / tv->s));
    int side_room = box.x + box.w - (box.x + g.label_w + tv->t * tall + 2 * u + 4 * g.col_w + u);
    bool beside = under < CELL_MIN && side_room >= 12 * u;
    g.cell = beside ? tall : draw_imax(CELL_SHRUNK, under);
    label_size(dl, &g);
    g.x = box.x + g.label_w, g.y = y + g.head_h + u;
    tile_cells(dl, tv, &g);
    token_labels(dl, app, &w, tv, &g);
    int table_x = g.x + tv->t * g.cell + 2 * u, side_x = table_x + 4 * g.col_w + u;
    row_table(dl, tv, &g, table_x);
    app_layout_hit_tip(dl->layout, (app_rect){g.x, g.y, tv->t * g.cell, tv->s * g.cell}, APP_ACT_DECODE_NEXT, 0,
                       _("the next key tile (])"));
    if (beside)
        footer(dl, tv, (app_rect){side_x, g.y, box.x + box.w - side_x, bottom - g.y}, true);
    else
        footer(dl, tv, (app_rect){box.x, g.y + tv->s * g.cell + u, box.w, 0}, true);
    free(tv);
}
