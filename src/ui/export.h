/* export.h — a frame as a file: PNG through SDL_image (offscreen.h), SVG and
 * PDF as vectors through cairo (draw_cairo.h). */
#ifndef UI_EXPORT_H
#define UI_EXPORT_H

#include <stddef.h>

#include "app.h"

typedef enum { UI_EXPORT_PNG, UI_EXPORT_SVG, UI_EXPORT_PDF } ui_export_kind;

/* By the name's extension, in any case: .svg, .pdf, else PNG. */
ui_export_kind ui_export_kind_of(const char *path);

struct ui_gfx;
/* app's frame, laid out for w × h pixels with g's fonts, written to path as
 * SVG or PDF (one point a pixel) through a temporary file renamed into place.
 * Returns 0, or -1 with a one-line message. */
int ui_export_vector(ui_app *app, struct ui_gfx *g, int w, int h, ui_export_kind kind, const char *path, char *err,
                     size_t errsize);

#endif
