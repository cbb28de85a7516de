/* export.h — a frame as a file: PNG through SDL_image (offscreen.h), SVG and
 * PDF as vectors through cairo (draw_cairo.h); the matrix shown as CSV. */
#ifndef EXPORT_H
#define EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* By the name's extension, in any case: .png, .svg, .pdf, .csv; APP_SAVE_KINDS
 * for any other name (.jpg, none), which no export writes. */
app_save_kind export_kind_of(const char *path);

/* "png", "svg", "pdf", "csv". */
const char *export_extension(app_save_kind kind);

struct sdl_gfx;
/* app's frame, laid out for w × h pixels with g's fonts, written to path as
 * SVG or PDF (one point a pixel) through a temporary file renamed into place.
 * Returns 0, or -1 with a one-line message. */
int export_vector(const app_state *app, struct sdl_gfx *g, int w, int h, app_save_kind kind, const char *path,
                  char *err, size_t errsize);

/* The matrix the single view shows (stage, batch row, head; the whole slice,
 * not a zoomed window) as CSV: a corner cell naming it ("layers.0.weights
 * b=0 h=1"), the column labels, then a row label and the values of each row
 * (%.9g, as C prints them: -inf, nan). Atomically, as above. */
int export_csv(const app_state *app, const char *path, char *err, size_t errsize);

/* Either of them in the background (the window's S). export_start does on
 * the app's thread, in about the time of a frame, what needs the app, g's
 * fonts or the trace shown: the frame laid out into a command list of the
 * export's own, its text's runs found and its pictures' cells copied; or the
 * matrix's values and labels copied (g unused). A thread of its own then
 * draws, formats and writes the file, while the app and its trace may change.
 * export_start returns 0 and the export in *out, or -1 with a one-line
 * message (nothing started). export_done says whether the file is written
 * (or failed); export_end waits for that, frees the export and returns 0,
 * or -1 with the file's one-line message. */
typedef struct export_job export_job;
int export_start(const app_state *app, struct sdl_gfx *g, int w, int h, app_save_kind kind, const char *path,
                 export_job **out, char *err, size_t errsize);
bool export_done(const export_job *x);
int export_end(export_job *x, char *err, size_t errsize);

#endif
