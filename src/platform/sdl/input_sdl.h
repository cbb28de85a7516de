/* input_sdl.h — SDL's events turned into the app's entry points (app.h). */
#ifndef ATTNLAB_SDL_INPUT_H
#define ATTNLAB_SDL_INPUT_H

#include <stdbool.h>

#include <SDL.h>

#include "app.h"

/* Handles one event; returns true when the picture must be redrawn. */
bool sdl_input_event(app_state *app, const SDL_Event *ev);

/* The key map: an SDL keycode as a UI key (keys.h), APP_KEY_NONE for keys the app has no use for. */
int sdl_input_key(SDL_Keycode sym);
/* SDL's modifier bits as APP_MOD_* bits. */
int sdl_input_mods(Uint16 mod);

#endif
