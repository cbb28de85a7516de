/* plot.h — the pictures in the main area: one labelled heatmap with its
 * colour bar, the all-heads grid, the compare view and a query row's bar chart.
 * Each records where its cells are (app->areas) so the mouse can find them. */
#ifndef UI_PLOT_H
#define UI_PLOT_H

#include "app.h"
#include "draw.h"
#include "view.h"

typedef struct {
    bool labels;      /* token / feature labels on both axes (when they fit) */
    bool no_row_labels; /* only the column labels (a pane right of one that has them) */
    bool colorbar;    /* colour bar with the value range on the right */
    int pane;         /* recorded in the area: compare 0/1/2 */
    unsigned generation;
    double max_cell;  /* > 0: cells no larger than this (panes drawn side by side at one size) */
    double cell_w;    /* > 0: with max_cell, cells this wide (wider than tall, so numbers fit) */
    const ui_slice *rms; /* non-NULL: a column right of the cells with each row's RMS over this
                          * slice's row (the whole row when the picture is zoomed), from rms_row0 */
    int rms_row0;
} ui_plot_opts;

/* Draws v inside box; returns the index of the area recorded (-1 if none). */
int ui_plot_heatmap(ui_draw *dl, const ui_app *app, const attn_trace *tr, const ui_view_slice *v, const ui_scale *sc,
                    ui_rect box, const ui_plot_opts *o);

void ui_plot_single(ui_draw *dl, const ui_app *app, ui_rect box);
/* The cell size, in pixels, the single view's picture gets in box (0: none). */
double ui_plot_single_cell(ui_draw *dl, const ui_app *app, ui_rect box);
void ui_plot_grid(ui_draw *dl, const ui_app *app, ui_rect box);
/* The grid view of a trace of several layers (overview.c, when
 * ui_app_overview): every layer × every head of the current stage. */
void ui_plot_overview(ui_draw *dl, const ui_app *app, ui_rect box);
void ui_plot_compare(ui_draw *dl, const ui_app *app, ui_rect box);
/* A vocabulary-wide stage (logits, probs; plot_ranked.c) as a ranked view:
 * each query row's top-k next tokens as labelled bars, best first, the token
 * that comes next in the text framed or named with its rank. Each row is a
 * hit selecting it (UI_ACT_ROW). ui_plot_ranked_wanted: whether v is drawn so
 * (its columns are the vocabulary and app->vocab_heatmap is off). */
bool ui_plot_ranked_wanted(const ui_app *app, const ui_view_slice *v);
void ui_plot_ranked(ui_draw *dl, const ui_app *app, const ui_view_slice *v, ui_rect box);
/* The compare view of such a stage: as configured, toggled, and the largest
 * changes, three ranked panes on the same rows. */
void ui_plot_ranked_compare(ui_draw *dl, const ui_app *app, const ui_view_slice *a, ui_rect box);
/* A value as the ranked view prints it: a probability as "92%", "3.5%",
 * "<0.1%" (percent), a logit as ui_view_format does; sign: a change, "+52%", "−0.58". */
const char *ui_plot_ranked_format(float x, bool percent, bool sign, char *buf, size_t size);

/* The query–key geometry view (plot_geometry.c, geometry.h). */
void ui_plot_geometry(ui_draw *dl, const ui_app *app, ui_rect box);
/* The selected query row's weights as bars, and as one stacked bar reaching 1. */
void ui_plot_bars(ui_draw *dl, const ui_app *app, ui_rect box);

/* Height the bar chart wants at the current font size. */
int ui_plot_bars_height(ui_draw *dl);

#endif
