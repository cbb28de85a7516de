/* linebreak.h — where a line of text may break: the one rule of every
 * wrapped text, the lesson panel's (lesson_panel.c) and draw_text_wrap's.
 *
 * A line may break after a space or next to a wide (Chinese) character, as
 * Chinese has no spaces between words, except where the break would cut what
 * a reader takes as one thing:
 *   - punctuation: never before closing marks (，。）%) nor after opening ones
 *     (（「( ) — attn_utf8_is_closing / attn_utf8_is_opening;
 *   - a formula: never on either side of an operator between spaces
 *     (i − j, q = x · W_Q, 1/(1 − p));
 *   - a shape or tuple: never inside parentheses that hold items without
 *     spaces separated by ", " ((b, h, s, s), (b=1, g=4, n=25, k=32));
 *   - a number and its unit: never between a number and the Latin unit after
 *     it (4,096 bytes, 0.25 nats, 2.0 KiB) or the Chinese measure word after it
 *     (3 个, 4,096 字节: the whole of a two-character unit), nor between 第
 *     and its number (第 4 层).
 * A text wider than a line still breaks where these rules allow nothing: the
 * callers cut it at the ordinary places. */
#ifndef DRAW_LINEBREAK_H
#define DRAW_LINEBREAK_H

#include <stdbool.h>
#include <stddef.h>

/* True when a line of the zero-terminated s may break before byte i (a
 * character boundary, 0 < i < strlen(s)). */
bool draw_break_before(const char *s, size_t i);

/* The same without the rules that hold a formula, a shape or a number with
 * its unit together: the places a text too long for them still breaks. */
bool draw_break_before_loose(const char *s, size_t i);

#endif
