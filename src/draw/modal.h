/* modal.h — the small overlays that ask or tell before anything else: the
 * quit question and the notice that a lesson or a model is opening. No SDL.
 *
 * Drawn last in a frame (render.c), over everything; their buttons are hits
 * like any other (layout.h). The state they show lives in the app. */
#ifndef DRAW_MODAL_H
#define DRAW_MODAL_H

#include "app.h"
#include "draw.h"

/* "Quit attnlab?" with its two buttons (APP_ACT_QUIT quits, APP_ACT_BACK stays),
 * centred over the whole window. */
void draw_quit_confirm(const app_state *app, draw_list *dl);

/* While a lesson or a model opens (app->opening, or the worker computing a
 * lesson's step): "opening …" with what is being opened and a bar of how far
 * the worker is, over the picture. Draws nothing otherwise. */
void draw_opening(const app_state *app, draw_list *dl);

#endif
