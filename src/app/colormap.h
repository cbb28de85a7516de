/* colormap.h — colour maps for heatmaps, as 0xAARRGGBB. No SDL.
 *
 * Sequential: viridis (perceptually uniform, colourblind-safe), for values
 * with a natural zero such as attention weights. Diverging: a blue–white–red
 * map centred on 0 for signed values (scores, q, k, v, outputs). Masked cells
 * are never drawn with a map colour: see heatmap.h. */
#ifndef APP_COLORMAP_H
#define APP_COLORMAP_H

#include <stdint.h>

typedef enum { APP_CMAP_SEQUENTIAL, APP_CMAP_DIVERGING } app_cmap;

/* Colour at u in [0, 1] (clamped; NaN gives the low end). */
uint32_t app_cmap_argb(app_cmap m, float u);

/* Relative luminance in [0, 1] of an ARGB colour: pick dark or light text on it. */
float app_argb_luminance(uint32_t argb);

/* Frame colour of kv group i (colourblind-safe Okabe–Ito palette, cycling). */
uint32_t app_group_argb(int i);

#endif
