/* heatmap.h — a 2-D slice of a tensor as a heatmap: where its cells are
 * and what colours they show. No SDL. The backends paint it into 32-bit
 * ARGB pixels with paint_heatmap (src/platform/paint/paint.h).
 *
 * The slice has rows × cols cells; cell (i, j) covers the pixel columns
 * [j·w/cols, (j+1)·w/cols) and rows [i·h/rows, (i+1)·h/rows), so cells of one
 * picture differ by at most one pixel and the renderer, the hit test and the
 * tests all agree on where a cell is (app_heat_cell_rect, app_heat_cell_at).
 * When w < cols (or h < rows) some cells get an empty rectangle: each pixel
 * shows the one cell whose rectangle holds it, except that a finite value
 * shows the largest finite, unmasked value of that cell and the empty cells
 * before it in its row and above it in its column (max-pooling, so a peak
 * among 3,072 vocabulary columns, or one query row among 4,096, stays
 * visible); masks and NaN follow that one cell.
 *
 * Finite values go through the colour map over [lo, hi] (clamped). A masked
 * cell (−∞) is a diagonal hatch of APP_HATCH_LIGHT and APP_HATCH_DARK, aligned
 * to the picture so neighbouring masked cells join into one striped region;
 * neither colour occurs in either map. A cell whose slice mask is non-zero
 * is hatched the same way. NaN cells, masked or not, are a checkerboard of
 * APP_NAN_A and APP_NAN_B. +∞ is drawn as the top of the map. */
#ifndef APP_HEATMAP_H
#define APP_HEATMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include "colormap.h"

typedef struct {
    const float *data;    /* element (i, j) is data[i*row_stride + j*col_stride] */
    int rows, cols;
    ptrdiff_t row_stride, col_stride;
    /* optional additive mask over the same cells (NULL: none): a cell whose
     * mask is not 0 is drawn masked whatever its value, so the weights that a
     * mask zeroed show the same hatch as the −∞ scores that caused them */
    const float *mask;
    ptrdiff_t mask_row_stride, mask_col_stride;
} app_slice;

/* Whether a and b are the same cells of the same memory. With the trace
 * generation the memory belongs to, this is what the caches of a picture
 * (gfx.c's textures, the draw list's memos) key on. */
static inline bool app_slice_same(const app_slice *a, const app_slice *b)
{
    return a->data == b->data && a->rows == b->rows && a->cols == b->cols && a->row_stride == b->row_stride &&
           a->col_stride == b->col_stride && a->mask == b->mask && a->mask_row_stride == b->mask_row_stride &&
           a->mask_col_stride == b->mask_col_stride;
}

static inline float app_slice_at(const app_slice *s, int i, int j)
{
    return s->data[i * s->row_stride + j * s->col_stride];
}

typedef struct {
    app_cmap cmap;
    float lo, hi; /* values at the two ends of the map; diverging: lo = -hi */
} app_scale;

/* Mid greys: at least CIE ΔE 25 from every colour of both maps (lighter greys
 * come close to the diverging map's #DDDDDD centre). */
/* The window keeps the heatmap pictures it drew (gfx.c), at most this many
 * screens of ARGB pixels: what app_heat_cache_bytes counts in the memory budget. */
#define APP_HEAT_CACHE_SCREENS 4

static inline double app_heat_cache_bytes(int screen_w, int screen_h)
{
    return APP_HEAT_CACHE_SCREENS * 4.0 * (screen_w > 0 ? screen_w : 0) * (screen_h > 0 ? screen_h : 0);
}

#define APP_HATCH_LIGHT 0xFF909090u
#define APP_HATCH_DARK  0xFF404040u
#define APP_HATCH_PERIOD 8         /* pixels along x (or y) per stripe pair */
#define APP_NAN_A       0xFFFF00FFu
#define APP_NAN_B       0xFF202020u
#define APP_GAP         0xFF1E1E24u /* between cells, when they are wide enough for a gap */

/* Colour of one finite value under scale (+∞ and values beyond the range clamp). */
uint32_t app_heat_color(const app_scale *scale, float v);

/* Values are quantised to APP_HEAT_LEVELS steps before the map, the same way
 * in app_heat_color and in the painter (paint_heatmap), so both give
 * identical colours; 1024 is finer than either colour table. */
enum { APP_HEAT_LEVELS = 1024 };

typedef struct {
    float lo, scale; /* level = (v - lo) * scale, clamped */
    int fixed;       /* level of every finite v when hi <= lo, else -1 */
} app_heat_levels;

static inline app_heat_levels app_heat_levels_of(const app_scale *s)
{
    app_heat_levels m = {s->lo, 0.0f, -1};
    if (s->hi > s->lo)
        m.scale = (float)APP_HEAT_LEVELS / (s->hi - s->lo);
    else
        m.fixed = s->cmap == APP_CMAP_DIVERGING ? APP_HEAT_LEVELS / 2 : APP_HEAT_LEVELS - 1;
    return m;
}

/* Level of any v (NaN and −∞ give 0); paint_heatmap inlines the in-range case. */
static inline int app_heat_level(const app_heat_levels *m, float v)
{
    if (m->fixed >= 0)
        return v == INFINITY ? APP_HEAT_LEVELS - 1 : m->fixed;
    float l = (v - m->lo) * m->scale;
    l = l > 0.0f ? l : 0.0f;
    l = l < (float)(APP_HEAT_LEVELS - 1) ? l : (float)(APP_HEAT_LEVELS - 1);
    return (int)l;
}

static inline uint32_t app_heat_level_argb(app_cmap cmap, int level)
{
    return app_cmap_argb(cmap, ((float)level + 0.5f) / (float)APP_HEAT_LEVELS);
}

/* Cell index of pixel p along an axis of n pixels and k cells. */
static inline int app_heat_cell_of(int p, int n, int k)
{
    return (int)(((long long)(p + 1) * k - 1) / n);
}

/* First pixel of cell c along an axis of n pixels and k cells. */
static inline int app_heat_cell_start(int c, int n, int k)
{
    return (int)((long long)c * n / k);
}

/* The gap a w × h picture of rows × cols cells really has: `gap` when every
 * cell is at least 2·gap+4 pixels on a side (w/cols and h/rows, rounded
 * down), else 0; decided for the whole picture, so all cells look alike. */
static inline int app_heat_gap(int w, int h, int rows, int cols, int gap)
{
    return gap < 0 || w / cols < 2 * gap + 4 || h / rows < 2 * gap + 4 ? 0 : gap;
}

/* The masked cells of a w × h picture of slice (the ones paint_heatmap
 * hatches: −∞, or a non-zero mask, and not NaN), as pixel rectangles from the
 * picture's top-left: per visible row of cells, one per run of masked cells
 * that touch (no gap between them). Calls fn(ctx, x, y, w, h) for each. */
typedef void app_heat_rect_fn(void *ctx, int x, int y, int w, int h);
void app_heat_masked_rects(const app_slice *slice, int w, int h, int gap, app_heat_rect_fn *fn, void *ctx);

/* Pixel rectangle of cell (i, j) in a w × h picture of rows × cols cells. */
void app_heat_cell_rect(int w, int h, int rows, int cols, int i, int j, int *x, int *y, int *cw, int *ch);

/* Cell under pixel (px, py); returns 0, or -1 if the pixel is outside. */
int app_heat_cell_at(int w, int h, int rows, int cols, int px, int py, int *i, int *j);

#endif
