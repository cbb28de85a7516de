/* export.h — a frame as a file: PNG through SDL_image (offscreen.h), SVG and
 * PDF as vectors through cairo (draw_cairo.h); the matrix shown as CSV. */
#ifndef UI_EXPORT_H
#define UI_EXPORT_H

#include <stddef.h>

#include "app.h"

/* By the name's extension, in any case: .svg, .pdf, .csv, else PNG. */
ui_save_kind ui_export_kind_of(const char *path);

/* "png", "svg", "pdf", "csv". */
const char *ui_export_extension(ui_save_kind kind);

struct ui_gfx;
/* app's frame, laid out for w × h pixels with g's fonts, written to path as
 * SVG or PDF (one point a pixel) through a temporary file renamed into place.
 * Returns 0, or -1 with a one-line message. */
int ui_export_vector(ui_app *app, struct ui_gfx *g, int w, int h, ui_save_kind kind, const char *path, char *err,
                     size_t errsize);

/* The matrix the single view shows (stage, batch row, head; the whole slice,
 * not a zoomed window) as CSV: a corner cell naming it ("layers.0.weights
 * b=0 h=1"), the column labels, then a row label and the values of each row
 * (%.9g, as C prints them: -inf, nan). Atomically, as above. */
int ui_export_csv(const ui_app *app, const char *path, char *err, size_t errsize);

#endif
