/* render.h — draws one frame of the visualizer from its state.
 *
 * ui_render reads the app, draws everything (controls, stage navigator, the
 * current picture, status line, overlays) and records the clickable places in
 * layout (normally &app->layout, which the event handler reads). It does not present: the window loop presents,
 * the offscreen driver reads the pixels back. */
#ifndef UI_RENDER_H
#define UI_RENDER_H

#include "app.h"
#include "gfx.h"

#define UI_BASE_FONT_PX 16

void ui_render(ui_app *app, ui_gfx *g, ui_layout *layout);

#endif
