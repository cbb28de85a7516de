/* draw_cairo.h — the vector backend: a frame's command list (draw.h) drawn
 * through cairo, for SVG and PDF export (export.h).
 *
 *     ui_cairo *vc = ui_cairo_new();       // the cairo faces, made as text needs them
 *     ui_cairo_draw(cr, vc, g, &g->list);  // g: the SDL backend, for its fonts' runs
 *     ui_cairo_free(vc);                   // after the surface is finished
 */
#ifndef UI_DRAW_CAIRO_H
#define UI_DRAW_CAIRO_H

#include <cairo.h>

#include "draw.h"

struct ui_gfx;
typedef struct ui_cairo ui_cairo;

ui_cairo *ui_cairo_new(void); /* NULL if out of memory */
void ui_cairo_free(ui_cairo *vc);

/* Draws d on cr, one unit a pixel; text in the faces g's fonts choose.
 * Returns 0, or -1 if cairo is in an error state afterwards. */
int ui_cairo_draw(cairo_t *cr, ui_cairo *vc, struct ui_gfx *g, const ui_draw *d);

#endif
