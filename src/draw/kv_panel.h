/* kv_panel.h — the side panel of one synthetic layer in mode mla: what its
 * KV cache keeps a token (the latent c_kv and the RoPE key k_pe) beside what
 * MHA, GQA and MQA with the same heads would keep, as a trained model's panel
 * lists its variants (predict.c, which hands this panel its place). No SDL. */
#ifndef DRAW_KV_PANEL_H
#define DRAW_KV_PANEL_H

#include <stdbool.h>

#include "app.h"
#include "draw.h"

/* Whether the trace shown is one synthetic layer of self-attention in mode mla. */
bool draw_kv_panel_wanted(const app_state *app);

/* The panel in box: a title, then MHA, GQA, MQA and MLA (lit), each with its bytes a token. */
void draw_kv_panel(draw_list *dl, const app_state *app, app_rect box);

/* The panel folded to one line: the four modes' bytes a token; a click unfolds it. */
void draw_kv_panel_line(draw_list *dl, const app_state *app, app_rect box);

#endif
