/* input_sdl.h — SDL's events turned into the app's entry points (app.h). */
#ifndef UI_INPUT_SDL_H
#define UI_INPUT_SDL_H

#include <stdbool.h>

#include <SDL.h>

#include "app.h"

/* Handles one event; returns true when the picture must be redrawn. */
bool ui_input_sdl(ui_app *app, const SDL_Event *ev);

/* The key map: an SDL keycode as a UI key (keys.h), UI_KEY_NONE for keys the app has no use for. */
int ui_input_sdl_key(SDL_Keycode sym);
/* SDL's modifier bits as UI_MOD_* bits. */
int ui_input_sdl_mods(Uint16 mod);

#endif
