/* offscreen.h — the visualizer without a display: SDL's offscreen video
 * driver and its software renderer, for `attnlab render`, `attnlab bench`
 * and the tests. */
#ifndef ATTNLAB_SDL_OFFSCREEN_H
#define ATTNLAB_SDL_OFFSCREEN_H

#include <stddef.h>

#include <SDL.h>

#include "app.h"
#include "gfx.h"
#include "ui.h"

typedef struct {
    SDL_Window *win;
    SDL_Renderer *r;
    sdl_gfx *g;
} sdl_offscreen;

/* Opens a hidden w × h window on the offscreen driver with a software renderer. */
int sdl_offscreen_open(sdl_offscreen *o, int w, int h, char *err, size_t errsize);
void sdl_offscreen_close(sdl_offscreen *o);

/* Puts app in the state a picture asks for (stage, head, view, ...). Returns
 * 0, or the exit code with a one-line message in err: 2 when a flag asks for
 * what the trace lacks (a stage it does not have, a head out of range), 1 when
 * no flag asked and the trace itself lacks what the picture needs (a file's
 * trace with h = 0 or b = 0 on a stage with that axis: the message names the file). */
int app_picture_apply(app_state *app, const app_picture *p, char *err, size_t errsize);

/* Reads the renderer's pixels (w × h ARGB8888) into a new surface. */
SDL_Surface *sdl_read_pixels(SDL_Renderer *r);

/* Writes the renderer's current picture as a PNG (atomically: temp + rename).
 * sdl_write_png writes pixels read back before, on any thread. */
int sdl_save_png(SDL_Renderer *r, const char *path, char *err, size_t errsize);
int sdl_write_png(SDL_Surface *pixels, const char *path, char *err, size_t errsize);

#endif
