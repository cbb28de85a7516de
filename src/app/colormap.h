/* colormap.h — colour maps for heatmaps, as 0xAARRGGBB. No SDL.
 *
 * Sequential: viridis (perceptually uniform, colourblind-safe), for values
 * with a natural zero such as attention weights. Diverging: a blue–white–red
 * map centred on 0 for signed values (scores, q, k, v, outputs). Masked cells
 * are never drawn with a map colour: see heatmap.h. */
#ifndef UI_COLORMAP_H
#define UI_COLORMAP_H

#include <stdint.h>

typedef enum { UI_CMAP_SEQUENTIAL, UI_CMAP_DIVERGING } ui_cmap;

/* Colour at u in [0, 1] (clamped; NaN gives the low end). */
uint32_t ui_cmap_argb(ui_cmap m, float u);

/* Relative luminance in [0, 1] of an ARGB colour: pick dark or light text on it. */
float ui_argb_luminance(uint32_t argb);

/* Frame colour of kv group i (colourblind-safe Okabe–Ito palette, cycling). */
uint32_t ui_group_argb(int i);

#endif
