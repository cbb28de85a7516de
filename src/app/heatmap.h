/* heatmap.h — paints a 2-D slice of a tensor into 32-bit ARGB pixels. No SDL.
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

/* Paints slice into px (w × h pixels, pitch >= w in pixels, ARGB8888). When
 * every cell is at least 2·gap+4 pixels on a side (w/cols and h/rows, rounded
 * down), each cell's last `gap` pixel columns and rows are APP_GAP, so cells
 * read as separate squares; otherwise there is no gap. Paints nothing if a
 * size is not positive (or if its small scratch allocation fails). */
void app_heat_paint(const app_slice *slice, const app_scale *scale, uint32_t *px, int pitch, int w, int h,
                    int gap);

/* The masked cells of a w × h picture of slice (the ones app_heat_paint
 * hatches: −∞, or a non-zero mask, and not NaN), as pixel rectangles from the
 * picture's top-left: per visible row of cells, one per run of masked cells
 * that touch (no gap between them). Calls fn(ctx, x, y, w, h) for each. */
typedef void app_heat_rect_fn(void *ctx, int x, int y, int w, int h);
void app_heat_masked_rects(const app_slice *slice, int w, int h, int gap, app_heat_rect_fn *fn, void *ctx);

/* Paints w × h pixels of the masked hatch alone, its stripes moved by phase
 * pixels (app_heat_paint's hatch at (x, y) of the picture is this one's at
 * (x - d, y) for phase d). */
void app_heat_paint_hatch(uint32_t *px, int pitch, int w, int h, int phase);

/* Pixel rectangle of cell (i, j) in a w × h picture of rows × cols cells. */
void app_heat_cell_rect(int w, int h, int rows, int cols, int i, int j, int *x, int *y, int *cw, int *ch);

/* Cell under pixel (px, py); returns 0, or -1 if the pixel is outside. */
int app_heat_cell_at(int w, int h, int rows, int cols, int px, int py, int *i, int *j);

#endif
