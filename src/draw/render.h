/* render.h — one frame of the visualizer, from its state. No SDL.
 *
 * draw_frame lays the frame out from the app's state, which it only
 * reads, and appends its drawing commands to a list (draw.h): controls, stage
 * navigator, the current picture, status line, overlays. Where things went
 * goes into an app_layout (normally &app->layout, which the event handler
 * reads): hit areas, the sizes of the window's parts, scroll positions kept
 * in range. draw_commit hands the last two back to the app.
 *
 * A backend does all three: build, draw, commit (sdl_render, gfx.h). */
#ifndef DRAW_RENDER_H
#define DRAW_RENDER_H

#include "app.h"
#include "draw.h"
#include "layout.h"

#define DRAW_BASE_FONT_PX 16

/* The frame for a w × h drawable, its text at the app's font scale. */
void draw_frame(const app_state *app, draw_list *dl, app_layout *layout, int w, int h);

/* After a frame: the app takes the sizes and clamped scroll positions of
 * layout, and the frame counts as drawn (app->dirty is cleared). */
void draw_commit(app_state *app, const app_layout *layout);

#endif
