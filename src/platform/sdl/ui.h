/* ui.h — the visualizer seen from the command line; no SDL types here.
 *
 * sdl_window_run opens the interactive window; sdl_render_png draws one picture
 * through SDL's offscreen video driver with the same drawing code, for
 * slides, worksheets and tests; sdl_bench times frames. All return 0, or -1
 * with a one-line message in err (and *exit_code set to 1 for an unreadable
 * file or a missing display or font, 2 for a bad stage, head or config). */
#ifndef ATTNLAB_SDL_UI_H
#define ATTNLAB_SDL_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "app_picture.h"
#include "engine/trace/config.h"

/* The window, on cfg or on the trace file at path (when path is not NULL),
 * showing layer (0 the first; a model's as soon as it is traced; one past the
 * last is refused, exit code 2); present: start in presenter mode (F5). */
int sdl_window_run(const attn_config *cfg, const char *path, int layer, bool present, char *err, size_t errsize,
                   int *exit_code);

/* The window with a lesson (path) at step (0-based), or with the lesson
 * picker open (path NULL); lang is "en" or "zh" for the course and the
 * interface. Returns an exit code (0, 1 for a bad file or display, 2 for a
 * lesson with problems) after printing any message. */
int sdl_lesson_window(const char *path, int step, const char *lang, bool present);

/* One picture as a PNG file. On success err holds a warning, or "": where
 * the trace first holds a NaN or an infinity its data put there (nonfinite.h). */
int sdl_render_png(const attn_config *cfg, const char *path, const app_picture *p, const char *out, char *err,
                   size_t errsize, int *exit_code);

/* Renders frames offscreen; prints their timing and returns the median. A
 * frame is a full redraw: every heatmap repainted, nothing reused. */
int sdl_bench(const attn_config *cfg, const app_picture *p, int frames, char *err, size_t errsize, int *exit_code);

#endif
