/* text_strip.h — a trained model's text as a class reads it: the prompt and
 * what ] wrote after it, in full, wrapped, in the model's own script (the
 * tokenizer's decoding: Chinese as characters, English words with spaces),
 * with the token of the query row shown and the token that follows it in the text marked,
 * and "end of text" after the model's </s>. No SDL. */
#ifndef DRAW_TEXT_STRIP_H
#define DRAW_TEXT_STRIP_H

#include "app.h"
#include "draw.h"
#include "layout.h"

/* Draws the strip at the top of box, as wide as box and at most a third of
 * its height (a longer text shows the lines around the query), in decode
 * mode and in the compare view of a model's trace. Returns the height it
 * took, its margin below included; 0 when it is not shown. compact
 * (presenting, the picture first): one line less, no title, the text at the
 * interface's size. */
int draw_text_strip(draw_list *dl, const app_state *app, app_rect box, bool compact);

/* The height draw_text_strip would take in box, drawing nothing: for a
 * layout that plans the frame before drawing it. */
int draw_text_strip_height(draw_list *dl, const app_state *app, app_rect box, bool compact);

#endif
