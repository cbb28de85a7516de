/* predict.h — a trained model's side panel: the next-token predictions of the
 * selected query row as bars (and, in the compare view, with the toggle), the
 * model and its variants' held-out loss and KV cache per token. No SDL. */
#ifndef UI_PREDICT_H
#define UI_PREDICT_H

#include "app.h"
#include "draw.h"
#include "layout.h"

/* The panel's width for a picture area `avail` wide (0: no panel, the trace is not a model's). */
int ui_predict_width(ui_draw *dl, const ui_app *app, int avail);

void ui_render_predictions(ui_draw *dl, const ui_app *app, ui_rect box);

/* The panel folded to one line (ui_predict_line_height tall) above the picture; a click unfolds it. */
int ui_predict_line_height(ui_draw *dl);
void ui_render_predictions_line(ui_draw *dl, const ui_app *app, ui_rect box);

#endif
