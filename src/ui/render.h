/* render.h — one frame of the visualizer, from its state. No SDL.
 *
 * ui_render_frame lays the frame out and appends its drawing commands to a
 * list (draw.h): controls, stage navigator, the current picture, status line,
 * overlays. It records the clickable places in layout (normally
 * &app->layout, which the event handler reads). ui_render (draw_sdl.c) builds
 * the frame and draws it with SDL; it does not present: the window loop
 * presents, the offscreen driver reads the pixels back. */
#ifndef UI_RENDER_H
#define UI_RENDER_H

#include "app.h"
#include "draw.h"
#include "layout.h"

#define UI_BASE_FONT_PX 16

/* The frame for a w × h drawable, its text at the app's font scale. */
void ui_render_frame(ui_app *app, ui_draw *dl, ui_layout *layout, int w, int h);

struct ui_gfx;
/* The frame drawn on g's renderer (the SDL backend, gfx.h). */
void ui_render(ui_app *app, struct ui_gfx *g, ui_layout *layout);

#endif
