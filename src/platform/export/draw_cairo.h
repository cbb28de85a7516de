/* draw_cairo.h — the vector backend: a frame's command list (draw.h) drawn
 * through cairo, for SVG and PDF export (export.h).
 *
 *     export_cairo_runs *runs = export_cairo_runs_of(g, &list); // on g's thread: text's runs in g's fonts
 *     export_cairo *vc = export_cairo_new(); // the cairo faces, made as text needs them
 *     export_cairo_draw(cr, vc, runs, &list); // on any thread
 *     export_cairo_free(vc);               // after the surface is finished
 *     export_cairo_runs_free(runs);
 */
#ifndef EXPORT_DRAW_CAIRO_H
#define EXPORT_DRAW_CAIRO_H

#include <cairo.h>

#include "draw.h"

struct sdl_gfx;
typedef struct export_cairo export_cairo;

export_cairo *export_cairo_new(void); /* NULL if out of memory */
void export_cairo_free(export_cairo *vc);

/* The runs each text command of d is drawn in: the faces g's fonts choose
 * for it (font.h's sdl_font_runs), looked up on the thread g belongs to, so
 * that d can then be drawn on another. NULL if out of memory. */
typedef struct export_cairo_runs export_cairo_runs;
export_cairo_runs *export_cairo_runs_of(struct sdl_gfx *g, const draw_list *d);
void export_cairo_runs_free(export_cairo_runs *runs);

/* Draws d on cr, one unit a pixel; text in the runs found for it (d as it
 * was then). Returns 0, or -1 if cairo is in an error state afterwards. */
int export_cairo_draw(cairo_t *cr, export_cairo *vc, const export_cairo_runs *runs, const draw_list *d);

#endif
