/* plot_heatmap.h — one labelled heatmap with its colour bar
 * (draw_plot_heatmap), the picture the views of plot.h are drawn with; and,
 * for those views (plot_single.c, plot_grid.c, plot_compare.c), the pieces
 * of it they lay out and draw with on their own: where a heatmap goes in a
 * box, and the legends beside it. No SDL. */
#ifndef DRAW_PLOT_HEATMAP_H
#define DRAW_PLOT_HEATMAP_H

#include "app.h"
#include "draw.h"
#include "view.h"

/* How draw_plot_heatmap draws a slice. */
typedef struct {
    bool labels;      /* token / feature labels on both axes (when they fit) */
    bool no_row_labels; /* only the column labels (a pane right of one that has them) */
    bool colorbar;    /* colour bar with the value range on the right */
    int pane;         /* recorded in the area: compare 0/1/2 */
    unsigned generation;
    double max_cell;  /* > 0: cells no larger than this (panes drawn side by side at one size) */
    double cell_w;    /* > 0: with max_cell, cells this wide (wider than tall, so numbers fit) */
    const app_slice *rms; /* non-NULL: a column right of the cells with each row's RMS over this
                          * slice's row (the whole row when the picture is zoomed), from rms_row0 */
    int rms_row0;
    int label_px;     /* > 0: the labels' text size, smaller than the frame's (draw_plot_place chooses it);
                       * 0: the frame's, or smaller to label every row and column of 32 or fewer; -1: the frame's */
    bool no_col_labels; /* only the row labels (a thumbnail under one that has them, on the same columns) */
    const app_slice *sink; /* non-NULL: weights with a learned sink: a column left of the keys, "sink", with
                            * each row's p_sink (sink_weight: rows × 1, the whole column), from sink_row0 */
    int sink_row0;
    bool blank_zero;  /* no number in a cell of exactly 0 (the expert view: an expert the token did not choose) */
} draw_plot_opts;

/* Draws v inside box; returns the index of the area recorded (-1 if none). */
int draw_plot_heatmap(draw_list *dl, const app_state *app, const attn_trace *tr, const app_view_slice *v, const app_scale *sc,
                      app_rect box, const draw_plot_opts *o);

/* ---- its pieces, for the views ---- */

/* A heatmap placed in the window: its slice over the pixels r, cells gap apart. */
typedef struct {
    const app_slice *s;
    app_rect r;
    int gap;
    int lh;      /* the column labels' band above the cells */
    bool turned; /* its labels too wide for a column read upwards */
    int label_px; /* the labels' text size: the frame's, or smaller where that labels every row and column */
} draw_plot_placed;

/* The room a heatmap of v gets in box (see plot_heatmap.c): row label width *lw,
 * column label height *lh, the space for the cells (*avail_w, *avail_h),
 * whether the column labels are turned; returns the cell size, -1 when
 * nothing fits. */
double draw_plot_layout(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box,
                        const draw_plot_opts *o, int *lw, int *lh, int *avail_w, int *avail_h, bool *turned);
/* Where v goes in box (*p), right of row labels *lw wide; false when nothing fits.
 * Labels the frame's text size would thin out are set smaller, down to three
 * quarters of it, when that labels every row and column. */
bool draw_plot_place(draw_list *dl, const attn_trace *tr, const app_view_slice *v, app_rect box, const draw_plot_opts *o,
                     draw_plot_placed *p, int *lw);

/* How thinly p's labels go at its label size: the larger of every how many
 * rows and every how many columns get one (1: each has its label). */
int draw_plot_label_step(draw_list *dl, const attn_trace *tr, const app_view_slice *v, const draw_plot_opts *o,
                         const draw_plot_placed *p);
/* Which special cells (masked, NaN) s has: the flags draw_plot_colorbar takes. */
int draw_plot_specials(draw_list *dl, unsigned generation, const app_view_slice *v, const app_slice *s);
/* The width of a colour bar with its labels. */
int draw_plot_colorbar_width(draw_list *dl);
/* A vertical colour bar of sc at (x, y, h), labelled with its range, with
 * swatches for the special cells of flags underneath, ending above bottom. */
void draw_plot_colorbar(draw_list *dl, const app_scale *sc, int x, int y, int h, int flags, int bottom);
/* The mask's legend instead of a colour bar: "may look" and "masked". */
void draw_plot_mask_legend(draw_list *dl, const app_scale *sc, const app_slice *s, int x, int y);
/* The width of the sink column and the gap after it (draw_plot_opts.sink). */
int draw_plot_sink_width(draw_list *dl);
/* The sink column of query head `head` of the trace shown, for the weights
 * picture v (weights or weights_dropout of a trace with sink_weight): false
 * when there is none. */
bool draw_plot_sink_slice(const attn_trace *tr, const app_view_slice *v, app_slice *out);
/* The width of the column of each row's RMS (draw_plot_opts.rms). */
int draw_plot_rms_width(draw_list *dl);

#endif
