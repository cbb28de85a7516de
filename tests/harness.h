/* harness.h — drives the visualizer the way SDL would: SDL events through
 * sdl_input_event (input_sdl.c) into the app, frames drawn offscreen and read back as pixels. Shared by the
 * test_ui_* programs (static functions: include it once per test program). */
#ifndef TEST_HARNESS_H
#define TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>

#include "app.h"
#include "engine/base/utf8.h"
#include "input_sdl.h"
#include "offscreen.h"
#include "render.h"

typedef struct {
    sdl_offscreen o;
    app_state app;
    SDL_Surface *shot; /* the last frame's pixels once shot() has read them, else NULL */
} fixture;

/* cmocka teardown for a fixture made by the test's setup */
static int teardown(void **state)
{
    fixture *f = *state;
    if (f->shot) SDL_FreeSurface(f->shot);
    app_free(&f->app);
    sdl_offscreen_close(&f->o);
    free(f);
    return 0;
}

/* A frame drawn as the window draws it. Its pixels are read back only when a
 * check asks for them (shot, px): reading them is most of a frame's cost. */
static void draw(fixture *f)
{
    if (f->shot) SDL_FreeSurface(f->shot);
    f->shot = NULL;
    sdl_render(&f->app, f->o.g, &f->app.layout);
}

/* The last frame drawn, as pixels (the caller does not free it). */
static SDL_Surface *shot(fixture *f)
{
    if (!f->shot) f->shot = sdl_read_pixels(f->o.r);
    assert_non_null(f->shot);
    return f->shot;
}

static uint32_t px(fixture *f, int x, int y)
{
    const SDL_Surface *s = shot(f);
    return ((const uint32_t *)((const uint8_t *)s->pixels + (size_t)y * s->pitch))[x] | 0xFF000000u;
}

static bool key(fixture *f, SDL_Keycode sym, Uint16 mod)
{
    SDL_Event ev = {0};
    ev.type = SDL_KEYDOWN;
    ev.key.keysym.sym = sym;
    ev.key.keysym.mod = mod;
    return sdl_input_event(&f->app, &ev);
}

/* Typed text, in events of at most 31 bytes as SDL sends it (whole code points). */
static void text(fixture *f, const char *s)
{
    while (*s) {
        SDL_Event ev = {0};
        size_t n = strlen(s);
        if (n > sizeof ev.text.text - 1) /* cut before the character holding byte 31 */
            n = attn_utf8_prev(s, sizeof ev.text.text);
        ev.type = SDL_TEXTINPUT;
        memcpy(ev.text.text, s, n);
        sdl_input_event(&f->app, &ev);
        s += n;
    }
}

static bool click(fixture *f, int x, int y)
{
    SDL_Event ev = {0};
    ev.type = SDL_MOUSEBUTTONDOWN;
    ev.button.button = SDL_BUTTON_LEFT;
    ev.button.x = x;
    ev.button.y = y;
    return sdl_input_event(&f->app, &ev);
}

#endif
