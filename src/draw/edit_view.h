/* edit_view.h — drawing the token editor (app_edit.c) over the frame. No SDL. */
#ifndef DRAW_EDIT_VIEW_H
#define DRAW_EDIT_VIEW_H

#include "app.h"
#include "draw.h"

/* The editor's dialog: the target field (and the source field for
 * cross-attention), the caret and an IME composition in the current one.
 * Records the current field's text rectangle in dl->layout->edit_rect, where
 * the IME puts its candidate window. */
void draw_edit(const app_state *app, draw_list *dl);

#endif
