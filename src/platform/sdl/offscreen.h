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

/* Reads the renderer's pixels (w × h ARGB8888) into a new surface. */
SDL_Surface *sdl_read_pixels(SDL_Renderer *r);

/* Writes the renderer's current picture as a PNG (atomically: temp + rename).
 * sdl_write_png writes pixels read back before, on any thread. */
int sdl_save_png(SDL_Renderer *r, const char *path, char *err, size_t errsize);
int sdl_write_png(SDL_Surface *pixels, const char *path, char *err, size_t errsize);

#endif
