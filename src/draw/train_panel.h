/* train_panel.h — the training panel of a model saved during training
 * (training.h): its loss curve, train and held-out, against the step on a
 * log axis, and small multiples of one per-head measure over training (the
 * previous-token weight, the induction score or the weight on <s>), one tiny
 * plot per layer × head. The step shown is marked on every plot and the head
 * shown is framed. A click on the loss curve opens that step; on a tiny plot,
 * that head; on the measure's name, the next measure. No SDL. */
#ifndef DRAW_TRAIN_PANEL_H
#define DRAW_TRAIN_PANEL_H

#include "app.h"
#include "draw.h"
#include "layout.h"

/* The panel's height in a visualizer area `avail` tall: 0 when there is
 * nothing to plot (no checkpoints, or no readable metrics.json) or no room. */
int draw_train_panel_height(draw_list *dl, const app_state *app, int avail);

void draw_train_panel(draw_list *dl, const app_state *app, app_rect box);

/* The training view (view = training, T): in the picture's place, the loss,
 * Olsson et al.'s two measures of the phase change (the best head's
 * induction score and the in-context loss drop, on random words said twice)
 * and every head's small plot, large. draw_train_view_ok: whether the model
 * shown has them to draw. */
bool draw_train_view_ok(const app_state *app);
void draw_train_view(draw_list *dl, const app_state *app, app_rect box);

/* The measure's name as the panel titles it (translated). */
const char *draw_train_metric_name(int metric);

#endif
