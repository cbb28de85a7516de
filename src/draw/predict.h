/* predict.h — a trained model's side panel: the next-token predictions of the
 * selected query row as bars (and, in the compare view, with the toggle), the
 * model and its variants' held-out loss and KV cache per token. For one
 * synthetic layer in mode mla the same place holds its KV cache per token
 * beside MHA's, GQA's and MQA's (kv_panel.h). No SDL. */
#ifndef DRAW_PREDICT_H
#define DRAW_PREDICT_H

#include "app.h"
#include "draw.h"
#include "layout.h"

/* The panel's width for a picture area `avail` wide (0: no panel, the trace is neither a model's nor
 * one MLA layer's). */
int draw_predict_width(draw_list *dl, const app_state *app, int avail);

void draw_predictions(draw_list *dl, const app_state *app, app_rect box);

/* The panel folded to one line (draw_predict_line_height tall) above the picture; a click unfolds it. */
int draw_predict_line_height(draw_list *dl);
void draw_predictions_line(draw_list *dl, const app_state *app, app_rect box);

#endif
