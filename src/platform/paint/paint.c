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

/* What one call paints with: the visible column spans, the special runs of the
 * current cell row, the template line and the two pattern lines (all in one
 * scratch block), and the colour levels. */
typedef struct {
    const app_slice *slice;
    int w, gap, nspan;
    col_span *spans;    /* (nspan) visible cell columns, left to right */
    special_run *runs;  /* of the current cell row */
    uint32_t *line;     /* (w + 1) template of the cell row's pixel rows */
    uint32_t *hatch;    /* (w + APP_HATCH_PERIOD) row y starts at y mod period */
    uint32_t *check;    /* (w + 2·NAN_CHECK) row y starts at 0 or NAN_CHECK */
    uint32_t lut[APP_HEAT_LEVELS];
    app_heat_levels lm;
    float fast_scale;   /* NaN: a flat range takes app_heat_level for every cell */
    void *scratch;
} painter;

/* The scratch block carved into spans, runs, the template and pattern lines;
 * false when out of memory. */
static bool painter_alloc(painter *p, int w, int cols)
{
    size_t nspan_max = (size_t)(cols < w ? cols : w), nline = (size_t)w + 1;
    p->scratch = malloc(nspan_max * (sizeof(col_span) + sizeof(special_run)) +
                        (3 * nline + APP_HATCH_PERIOD + 2 * NAN_CHECK) * sizeof(uint32_t));
    if (!p->scratch)
        return false;
    p->spans = p->scratch;
    p->runs = (special_run *)(p->spans + nspan_max);
    p->line = (uint32_t *)(p->runs + nspan_max);
    p->hatch = p->line + nline;
    p->check = p->hatch + nline + APP_HATCH_PERIOD;
    return true;
}

/* The picture's column spans, left to right: one per column of cells that
 * has pixels of its own. */
static void lay_out_spans(painter *p)
{
    const app_slice *slice = p->slice;
    int w = p->w, cols = slice->cols, nspan = 0;
    for (int x = 0, prev = -1; x < w; nspan++) {
        int j = app_heat_cell_of(x, w, cols), end = app_heat_cell_start(j + 1, w, cols);
        /* it stands for the cells since the previous span's, which have no pixel of their own */
        p->spans[nspan] = (col_span){j * slice->col_stride, j * slice->mask_col_stride, x, end - p->gap, j - prev};
        prev = j;
        x = end;
    }
    p->nspan = nspan;
}

/* The template line's gap columns, the hatch and checkerboard lines, and
 * the colour of every level of the scale. */
static void fill_patterns(painter *p, const app_scale *scale)
{
    int w = p->w;
    for (int k = 0; k < w + 1; k++)
        p->line[k] = APP_GAP; /* cells never paint their gap columns */
    for (int k = 0; k < w + APP_HATCH_PERIOD; k++)
        p->hatch[k] = k % APP_HATCH_PERIOD < HATCH_DARK_W ? APP_HATCH_DARK : APP_HATCH_LIGHT;
    for (int k = 0; k < w + 2 * NAN_CHECK; k++)
        p->check[k] = (k / NAN_CHECK) % 2 ? APP_NAN_B : APP_NAN_A;
    for (int k = 0; k < APP_HEAT_LEVELS; k++)
        p->lut[k] = app_heat_level_argb(scale->cmap, k);
    p->lm = app_heat_levels_of(scale);
    p->fast_scale = p->lm.fixed < 0 ? p->lm.scale : NAN;
}

/* The value span sp shows in cell row i: its own cell's, or, when it stands
 * for several cells (sp->n columns, nr rows), the largest finite unmasked one
 * among them. data, mrow: row i of the slice and of its mask (NULL: none). */
static inline float span_value(const app_slice *slice, const float *data, const float *mrow, const col_span *sp, int nr)
{
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
    return v;
}

/* Cell row i (standing for nr rows) into the template line: each span's
 * colour, and the runs of masked and NaN cells, which are left to the
 * patterns; returns the number of runs. */
static int paint_cell_row(painter *p, int i, int nr)
{
    const app_slice *slice = p->slice;
    const float *data = slice->data + i * slice->row_stride;
    const float *mrow = slice->mask ? slice->mask + i * slice->mask_row_stride : NULL;
    uint32_t *line = p->line;
    int nrun = 0;
    special_run run = {0, 0, CELL_MAP}; /* the one being extended, kept out of memory */
    for (int s = 0; s < p->nspan; s++) {
        const col_span *sp = &p->spans[s];
        float v = span_value(slice, data, mrow, sp, nr);
        float l = (v - p->lm.lo) * p->fast_scale;
        if (mrow && mrow[sp->moffset] != 0.0f && !isnan(v))
            v = -INFINITY, l = NAN; /* masked: drawn like −∞ (a NaN stays NaN) */
        if (l >= 0.0f && l < (float)APP_HEAT_LEVELS) { /* inside [lo, hi]: what app_heat_level would say */
            fill_span(line, sp, p->lut[(int)l]);
            continue;
        }
        int kind = isnan(v) ? CELL_NAN : v == -INFINITY ? CELL_MASKED : CELL_MAP;
        if (kind == CELL_MAP) {
            fill_span(line, sp, p->lut[app_heat_level(&p->lm, v)]);
        } else if (kind == run.kind && sp->x0 == run.x1) {
            run.x1 = sp->x1; /* neighbours without a gap join into one run */
        } else {
            if (run.kind != CELL_MAP)
                p->runs[nrun++] = run;
            run = (special_run){sp->x0, sp->x1, kind};
        }
    }
    if (run.kind != CELL_MAP)
        p->runs[nrun++] = run;
    return nrun;
}

/* Pixel rows [y, y_gap) as copies of the template line with the nrun runs
 * copied over from the pattern lines, then rows [y_gap, y_end) as gap. */
static void copy_pixel_rows(const painter *p, int nrun, uint32_t *px, int pitch, int y, int y_gap, int y_end)
{
    int w = p->w;
    for (; y < y_gap; y++) {
        uint32_t *row = px + (ptrdiff_t)y * pitch;
        const uint32_t *hatch_y = p->hatch + y % APP_HATCH_PERIOD;
        const uint32_t *check_y = p->check + (y / NAN_CHECK) % 2 * NAN_CHECK;
        memcpy(row, p->line, (size_t)w * sizeof *row);
        for (int r = 0; r < nrun; r++) {
            const special_run *rn = &p->runs[r];
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

void paint_heatmap(const app_slice *slice, const app_scale *scale, uint32_t *px, int pitch, int w, int h, int gap)
{
    if (!slice || !scale || !px || slice->rows <= 0 || slice->cols <= 0 || w <= 0 || h <= 0 || pitch < w)
        return;
    int rows = slice->rows;
    painter p = {.slice = slice, .w = w, .gap = app_heat_gap(w, h, rows, slice->cols, gap)};
    if (!painter_alloc(&p, w, slice->cols))
        return;
    lay_out_spans(&p);
    fill_patterns(&p, scale);
    for (int y = 0, prev_i = -1; y < h;) {
        int i = app_heat_cell_of(y, h, rows), y_end = app_heat_cell_start(i + 1, h, rows);
        int nr = i - prev_i; /* cell rows this pixel row stands for: its own and the nr − 1 above (rows > h) */
        prev_i = i;
        int nrun = paint_cell_row(&p, i, nr);
        copy_pixel_rows(&p, nrun, px, pitch, y, y_end - p.gap, y_end);
        y = y_end;
    }
    free(p.scratch);
}
