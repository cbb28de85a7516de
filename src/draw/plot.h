/* plot.h — the pictures in the main area, a file each: the single view
 * (plot_single.c), the all-heads grid (plot_grid.c), the compare view
 * (plot_compare.c), a query row's bar chart (plot_bars.c), the ranked view
 * (plot_ranked.c) and the geometry view (plot_geometry.c); all but the last
 * two draw labelled heatmaps (plot_heatmap.h). Each records where its cells
 * are (app->areas) so the mouse can find them. */
#ifndef DRAW_PLOT_H
#define DRAW_PLOT_H

#include "app.h"
#include "draw.h"
#include "view.h"

void draw_plot_single(draw_list *dl, const app_state *app, app_rect box);
/* The cell size, in pixels, the single view's picture gets in box (0: none). */
double draw_plot_single_cell(draw_list *dl, const app_state *app, app_rect box);
void draw_plot_grid(draw_list *dl, const app_state *app, app_rect box);
/* The grid view of a trace of several layers (overview.c, when
 * app_overview): every layer × every head of the current stage. */
void draw_plot_overview(draw_list *dl, const app_state *app, app_rect box);
void draw_plot_compare(draw_list *dl, const app_state *app, app_rect box);
/* The cell size, in pixels, the compare view's panes get in box: √(height ·
 * width), cells wider than tall holding the numbers (0: none; the side of
 * the box left to them for a ranked stage). */
double draw_plot_compare_cell(draw_list *dl, const app_state *app, app_rect box);
/* A vocabulary-wide stage (logits, probs; plot_ranked.c) as a ranked view:
 * each query row's top-k next tokens as labelled bars, best first, the token
 * that comes next in the text framed or named with its rank. Each row is a
 * hit selecting it (APP_ACT_ROW). draw_plot_ranked_wanted: whether v is drawn so
 * (its columns are the vocabulary and app->vocab_heatmap is off). */
bool draw_plot_ranked_wanted(const app_state *app, const app_view_slice *v);
void draw_plot_ranked(draw_list *dl, const app_state *app, const app_view_slice *v, app_rect box);
/* The compare view of such a stage: as configured, toggled, and the largest
 * changes, three ranked panes on the same rows. */
void draw_plot_ranked_compare(draw_list *dl, const app_state *app, const app_view_slice *a, app_rect box);
/* A value as the ranked view prints it: a probability as "92%", "3.5%",
 * "<0.1%" (percent), a logit as app_view_format does; sign: a change, "+52%", "−0.58". */
const char *draw_plot_ranked_format(float x, bool percent, bool sign, char *buf, size_t size);

/* The query–key geometry view (plot_geometry.c, geometry.h). */
void draw_plot_geometry(draw_list *dl, const app_state *app, app_rect box);
/* The FlashAttention view (plot_tiles.c, tiles_view.h): the tiles, m, ℓ and the output after one key tile. */
void draw_plot_tiles(draw_list *dl, const app_state *app, app_rect box);
/* The token × expert view of a routed layer (plot_experts.c, experts_view.h). */
void draw_plot_experts(draw_list *dl, const app_state *app, app_rect box);
/* The selected query row's weights as bars, and as one stacked bar reaching 1. */
void draw_plot_bars(draw_list *dl, const app_state *app, app_rect box);

/* Height the bar chart wants at the current font size. */
int draw_plot_bars_height(draw_list *dl);

#endif
