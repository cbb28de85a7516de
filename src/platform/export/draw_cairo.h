/* draw_cairo.h — the vector backend: a frame's command list (draw.h) drawn
 * through cairo, for SVG and PDF export (export.h).
 *
 *     ui_cairo_runs *runs = ui_cairo_runs_of(g, &list); // on g's thread: text's runs in g's fonts
 *     ui_cairo *vc = ui_cairo_new();       // the cairo faces, made as text needs them
 *     ui_cairo_draw(cr, vc, runs, &list);  // on any thread
 *     ui_cairo_free(vc);                   // after the surface is finished
 *     ui_cairo_runs_free(runs);
 */
#ifndef UI_DRAW_CAIRO_H
#define UI_DRAW_CAIRO_H

#include <cairo.h>

#include "draw.h"

struct ui_gfx;
typedef struct ui_cairo ui_cairo;

ui_cairo *ui_cairo_new(void); /* NULL if out of memory */
void ui_cairo_free(ui_cairo *vc);

/* The runs each text command of d is drawn in: the faces g's fonts choose
 * for it (font.h's ui_font_runs), looked up on the thread g belongs to, so
 * that d can then be drawn on another. NULL if out of memory. */
typedef struct ui_cairo_runs ui_cairo_runs;
ui_cairo_runs *ui_cairo_runs_of(struct ui_gfx *g, const ui_draw *d);
void ui_cairo_runs_free(ui_cairo_runs *runs);

/* Draws d on cr, one unit a pixel; text in the runs found for it (d as it
 * was then). Returns 0, or -1 if cairo is in an error state afterwards. */
int ui_cairo_draw(cairo_t *cr, ui_cairo *vc, const ui_cairo_runs *runs, const ui_draw *d);

#endif
