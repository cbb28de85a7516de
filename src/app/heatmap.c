/* heatmap.c — where a heatmap's cells are and what colour they show.
 *
 * Pixel column x belongs to cell column j = ((x+1)·cols − 1) / w, the one
 * whose [j·w/cols, (j+1)·w/cols) holds x (rows alike; app_heat_cell_of).
 * When w < cols several cells share a pixel: it shows the last of them and
 * the others have empty rectangles, so painting (the backends' paint.c), hit
 * test and cell_rect always agree. */
#include "heatmap.h"

#include <math.h>
#include <stdbool.h>

uint32_t app_heat_color(const app_scale *scale, float v)
{
    app_heat_levels m = app_heat_levels_of(scale);
    return app_heat_level_argb(scale->cmap, app_heat_level(&m, v));
}

void app_heat_cell_rect(int w, int h, int rows, int cols, int i, int j, int *x, int *y, int *cw, int *ch)
{
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    if (rows > 0 && cols > 0) {
        x0 = app_heat_cell_start(j, w, cols);
        x1 = app_heat_cell_start(j + 1, w, cols);
        y0 = app_heat_cell_start(i, h, rows);
        y1 = app_heat_cell_start(i + 1, h, rows);
    }
    if (x) *x = x0;
    if (y) *y = y0;
    if (cw) *cw = x1 - x0;
    if (ch) *ch = y1 - y0;
}

int app_heat_cell_at(int w, int h, int rows, int cols, int px, int py, int *i, int *j)
{
    if (rows <= 0 || cols <= 0 || px < 0 || py < 0 || px >= w || py >= h)
        return -1;
    if (i) *i = app_heat_cell_of(py, h, rows);
    if (j) *j = app_heat_cell_of(px, w, cols);
    return 0;
}

/* Painted as masked: −∞, or a non-zero mask (a NaN stays NaN). */
static inline bool masked(const app_slice *s, int i, int j)
{
    float v = app_slice_at(s, i, j);
    if (isnan(v))
        return false;
    return v == -INFINITY || (s->mask && s->mask[i * s->mask_row_stride + j * s->mask_col_stride] != 0.0f);
}

void app_heat_masked_rects(const app_slice *slice, int w, int h, int gap, app_heat_rect_fn *fn, void *ctx)
{
    if (!slice || slice->rows <= 0 || slice->cols <= 0 || w <= 0 || h <= 0)
        return;
    int rows = slice->rows, cols = slice->cols;
    gap = app_heat_gap(w, h, rows, cols, gap);
    for (int y = 0; y < h;) {
        int i = app_heat_cell_of(y, h, rows), y_end = app_heat_cell_start(i + 1, h, rows);
        int run_x0 = -1, run_x1 = -1; /* the run being extended */
        for (int x = 0; x < w;) {
            int j = app_heat_cell_of(x, w, cols), end = app_heat_cell_start(j + 1, w, cols);
            if (masked(slice, i, j)) {
                if (run_x1 != x) {
                    if (run_x0 >= 0)
                        fn(ctx, run_x0, y, run_x1 - run_x0, y_end - gap - y);
                    run_x0 = x;
                }
                run_x1 = end - gap; /* neighbours without a gap join into one run */
            }
            x = end;
        }
        if (run_x0 >= 0)
            fn(ctx, run_x0, y, run_x1 - run_x0, y_end - gap - y);
        y = y_end;
    }
}

