/* train_panel.h — the training panel of a model saved during training
 * (training.h): its loss curve, train and held-out, against the step on a
 * log axis, and small multiples of one per-head measure over training (the
 * previous-token weight, the induction score or the weight on <s>), one tiny
 * plot per layer × head. The step shown is marked on every plot and the head
 * shown is framed. A click on the loss curve opens that step; on a tiny plot,
 * that head; on the measure's name, the next measure. No SDL. */
#ifndef UI_TRAIN_PANEL_H
#define UI_TRAIN_PANEL_H

#include "app.h"
#include "draw.h"
#include "layout.h"

/* The panel's height in a visualizer area `avail` tall: 0 when there is
 * nothing to plot (no checkpoints, or no readable metrics.json) or no room. */
int ui_train_panel_height(ui_draw *dl, const ui_app *app, int avail);

void ui_render_train_panel(ui_draw *dl, const ui_app *app, ui_rect box);

/* The measure's name as the panel titles it (translated). */
const char *ui_train_metric_name(int metric);

#endif
