/* render.h — one frame of the visualizer, from its state. No SDL.
 *
 * ui_render_frame lays the frame out from the app's state, which it only
 * reads, and appends its drawing commands to a list (draw.h): controls, stage
 * navigator, the current picture, status line, overlays. Where things went
 * goes into a ui_layout (normally &app->layout, which the event handler
 * reads): hit areas, the sizes of the window's parts, scroll positions kept
 * in range. ui_render_commit hands the last two back to the app.
 *
 * ui_render (draw_sdl.c) does all three with SDL: build, draw, commit. It
 * does not present: the window loop presents, the offscreen driver reads the
 * pixels back. */
#ifndef UI_RENDER_H
#define UI_RENDER_H

#include "app.h"
#include "draw.h"
#include "layout.h"

#define UI_BASE_FONT_PX 16

/* The frame for a w × h drawable, its text at the app's font scale. */
void ui_render_frame(const ui_app *app, ui_draw *dl, ui_layout *layout, int w, int h);

/* After a frame: the app takes the sizes and clamped scroll positions of
 * layout, and the frame counts as drawn (app->dirty is cleared). */
void ui_render_commit(ui_app *app, const ui_layout *layout);

struct ui_gfx;
/* The frame drawn on g's renderer (the SDL backend, gfx.h). */
void ui_render(ui_app *app, struct ui_gfx *g, ui_layout *layout);

#endif
