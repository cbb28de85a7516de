/* paint.h — a heatmap painted into 32-bit ARGB pixels: the pixel painter the
 * backends share (SDL's textures, the export's raster heatmaps, the web
 * page's canvas). No SDL. What it paints is heatmap.h's picture: cells where
 * app_heat_cell_rect puts them, colours as app_heat_color gives them, masked
 * cells hatched (APP_HATCH_LIGHT, APP_HATCH_DARK), NaN checked (APP_NAN_A,
 * APP_NAN_B), gaps in APP_GAP. */
#ifndef PAINT_H
#define PAINT_H

#include <stdint.h>

#include "heatmap.h"

/* Paints slice into px (w × h pixels, pitch >= w in pixels, ARGB8888). When
 * every cell is at least 2·gap+4 pixels on a side (w/cols and h/rows, rounded
 * down; app_heat_gap), each cell's last `gap` pixel columns and rows are
 * APP_GAP, so cells read as separate squares; otherwise there is no gap.
 * Paints nothing if a size is not positive (or if its small scratch
 * allocation fails). */
void paint_heatmap(const app_slice *slice, const app_scale *scale, uint32_t *px, int pitch, int w, int h, int gap);

/* Paints w × h pixels of the masked hatch alone, its stripes moved by phase
 * pixels (paint_heatmap's hatch at (x, y) of the picture is this one's at
 * (x - d, y) for phase d). */
void paint_hatch(uint32_t *px, int pitch, int w, int h, int phase);

#endif
