/* paint.c — a heatmap painted into ARGB pixels, for the backends that draw
 * pixels: the SDL window's textures (gfx.c), the export's raster heatmaps
 * (draw_cairo.c) and the web page's canvas (main_web.c).
 *
 * Painting works on spans: per call, the picture's column spans and the hatch
 * and checkerboard patterns are laid out once; per row of cells each cell's
 * colour is computed once into a template line; each pixel row is then a copy
 * of that line, with the runs of masked and NaN cells copied over it from the
 * pattern lines shifted by y, so stripes and checks stay tied to the picture.
 * Where a cell is, and its colour, are heatmap.h's (the app core's), so the
 * pixels agree with the hit test and with app_heat_color. */
#include "paint.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define HATCH_DARK_W 3 /* of which dark */
#define NAN_CHECK    4 /* checkerboard square side, pixels */

enum { CELL_MAP, CELL_MASKED, CELL_NAN };

typedef struct {
    ptrdiff_t offset; /* of the cell column in a slice row: j·col_stride */
    ptrdiff_t moffset; /* the same in the mask: j·mask_col_stride */
    int x0, x1;       /* pixels it paints, its gap excluded */
    int n;            /* cell columns it stands for, its own and the n − 1 before it (cols > w) */
} col_span;

typedef struct {
    int x0, x1, kind; /* masked or NaN pixels [x0, x1) of the current cell row */
} special_run;

/* The first two stores need no test: a cell is at least 2 px wide whenever it
 * has a gap, and a 1-px cell's second store lands on its right neighbour,
 * which is painted next (or on the spare pixel at the end of the line). */
static inline void fill_span(uint32_t *line, const col_span *sp, uint32_t c)
{
    line[sp->x0] = c;
    line[sp->x0 + 1] = c;
    for (int x = sp->x0 + 2; x < sp->x1; x++)
        line[x] = c;
}

void paint_hatch(uint32_t *px, int pitch, int w, int h, int phase)
{
    if (!px || w <= 0 || h <= 0 || pitch < w)
        return;
    phase = ((phase % APP_HATCH_PERIOD) + APP_HATCH_PERIOD) % APP_HATCH_PERIOD;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            px[(ptrdiff_t)y * pitch + x] = (x + y + phase) % APP_HATCH_PERIOD < HATCH_DARK_W ? APP_HATCH_DARK : APP_HATCH_LIGHT;
}

void paint_heatmap(const app_slice *slice, const app_scale *scale, uint32_t *px, int pitch, int w, int h, int gap)
{
    if (!slice || !scale || !px || slice->rows <= 0 || slice->cols <= 0 || w <= 0 || h <= 0 || pitch < w)
        return;
    int rows = slice->rows, cols = slice->cols;
    gap = app_heat_gap(w, h, rows, cols, gap);

    size_t nspan_max = (size_t)(cols < w ? cols : w), nline = (size_t)w + 1;
    void *scratch = malloc(nspan_max * (sizeof(col_span) + sizeof(special_run)) +
                           (3 * nline + APP_HATCH_PERIOD + 2 * NAN_CHECK) * sizeof(uint32_t));
    if (!scratch)
        return;
    col_span *spans = scratch;                              /* (nspan) visible cell columns, left to right */
    special_run *runs = (special_run *)(spans + nspan_max); /* (nrun) of the current cell row */
    uint32_t *line = (uint32_t *)(runs + nspan_max);        /* (w + 1) template of the cell row's pixel rows */
    uint32_t *hatch = line + nline;                 /* (w + APP_HATCH_PERIOD) row y starts at y mod period */
    uint32_t *check = hatch + nline + APP_HATCH_PERIOD; /* (w + 2·NAN_CHECK) row y starts at 0 or NAN_CHECK */

    int nspan = 0;
    for (int x = 0, prev = -1; x < w; nspan++) {
        int j = app_heat_cell_of(x, w, cols), end = app_heat_cell_start(j + 1, w, cols);
        /* it stands for the cells since the previous span's, which have no pixel of their own */
        spans[nspan] = (col_span){j * slice->col_stride, j * slice->mask_col_stride, x, end - gap, j - prev};
        prev = j;
        x = end;
    }
    for (size_t k = 0; k < nline; k++)
        line[k] = APP_GAP; /* cells never paint their gap columns */
    for (int k = 0; k < w + APP_HATCH_PERIOD; k++)
        hatch[k] = k % APP_HATCH_PERIOD < HATCH_DARK_W ? APP_HATCH_DARK : APP_HATCH_LIGHT;
    for (int k = 0; k < w + 2 * NAN_CHECK; k++)
        check[k] = (k / NAN_CHECK) % 2 ? APP_NAN_B : APP_NAN_A;

    uint32_t lut[APP_HEAT_LEVELS];
    for (int k = 0; k < APP_HEAT_LEVELS; k++)
        lut[k] = app_heat_level_argb(scale->cmap, k);
    app_heat_levels lm = app_heat_levels_of(scale);
    float fast_scale = lm.fixed < 0 ? lm.scale : NAN; /* a flat range takes app_heat_level for every cell */

    for (int y = 0, prev_i = -1; y < h;) {
        int i = app_heat_cell_of(y, h, rows), y_end = app_heat_cell_start(i + 1, h, rows), y_gap = y_end - gap;
        int nr = i - prev_i; /* cell rows this pixel row stands for: its own and the nr − 1 above (rows > h) */
        prev_i = i;
        const float *data = slice->data + i * slice->row_stride;
        const float *mrow = slice->mask ? slice->mask + i * slice->mask_row_stride : NULL;
        int nrun = 0;
        special_run run = {0, 0, CELL_MAP}; /* the one being extended, kept out of memory */
        for (int s = 0; s < nspan; s++) {
            const col_span *sp = &spans[s];
            float v = data[sp->offset];
            if ((sp->n > 1 || nr > 1) && isfinite(v)) /* smaller than its cells: a pixel shows the largest of them */
                for (int r = 0; r < nr; r++) {
                    const float *d = data - r * slice->row_stride;
                    const float *m = mrow ? mrow - r * slice->mask_row_stride : NULL;
                    for (int c = r ? 0 : 1; c < sp->n; c++) {
                        float u = d[sp->offset - c * slice->col_stride];
                        if (u > v && isfinite(u) && !(m && m[sp->moffset - c * slice->mask_col_stride] != 0.0f))
                            v = u;
                    }
                }
            float l = (v - lm.lo) * fast_scale;
            if (mrow && mrow[sp->moffset] != 0.0f && !isnan(v))
                v = -INFINITY, l = NAN; /* masked: drawn like −∞ (a NaN stays NaN) */
            if (l >= 0.0f && l < (float)APP_HEAT_LEVELS) { /* inside [lo, hi]: what app_heat_level would say */
                fill_span(line, sp, lut[(int)l]);
                continue;
            }
            int kind = isnan(v) ? CELL_NAN : v == -INFINITY ? CELL_MASKED : CELL_MAP;
            if (kind == CELL_MAP) {
                fill_span(line, sp, lut[app_heat_level(&lm, v)]);
            } else if (kind == run.kind && sp->x0 == run.x1) {
                run.x1 = sp->x1; /* neighbours without a gap join into one run */
            } else {
                if (run.kind != CELL_MAP)
                    runs[nrun++] = run;
                run = (special_run){sp->x0, sp->x1, kind};
            }
        }
        if (run.kind != CELL_MAP)
            runs[nrun++] = run;

        for (; y < y_gap; y++) {
            uint32_t *row = px + (ptrdiff_t)y * pitch;
            const uint32_t *hatch_y = hatch + y % APP_HATCH_PERIOD;
            const uint32_t *check_y = check + (y / NAN_CHECK) % 2 * NAN_CHECK;
            memcpy(row, line, (size_t)w * sizeof *row);
            for (int r = 0; r < nrun; r++) {
                const special_run *rn = &runs[r];
                const uint32_t *pat = rn->kind == CELL_MASKED ? hatch_y : check_y;
                memcpy(row + rn->x0, pat + rn->x0, (size_t)(rn->x1 - rn->x0) * sizeof *row);
            }
        }
        for (; y < y_end; y++) {
            uint32_t *row = px + (ptrdiff_t)y * pitch;
            for (int x = 0; x < w; x++)
                row[x] = APP_GAP;
        }
    }
    free(scratch);
}
