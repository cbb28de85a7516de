/* stage_note.h — the numbers a stage's formula is written with, in one line
 * under it: ALiBi's slope of the head shown, the soft cap C, the sink logit X.
 * No SDL. */
#ifndef DRAW_STAGE_NOTE_H
#define DRAW_STAGE_NOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* The line for stage t of the trace shown, head app->view.head, into buf
 * (translated); false (buf "") when the stage's formula has no setting's
 * number in it. */
bool draw_stage_note(const app_state *app, const attn_tensor *t, char *buf, size_t size);

#endif
