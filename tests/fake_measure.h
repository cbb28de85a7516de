/* fake_measure.h — text metrics without a font, for the tests that build
 * command lists (test_ui_draw, test_ui_controls): every code point px/2 wide,
 * bold a pixel wider per code point (so a bold word measured as regular
 * shows), lines 5/4 px apart. Static: include it once per test program. */
#ifndef TEST_FAKE_MEASURE_H
#define TEST_FAKE_MEASURE_H

#include <string.h>

#include "draw.h"
#include "engine/base/utf8.h"

static inline int fake_count(const char *s)
{
    int n = 0;
    for (size_t i = 0, len = strlen(s); i < len; i = attn_utf8_next(s, len, i)) n++;
    return n;
}

static inline int fake_width(void *ctx, const char *s, int px)
{
    (void)ctx;
    return fake_count(s) * (px / 2);
}

static inline int fake_bold(void *ctx, const char *s, int px)
{
    (void)ctx;
    return fake_count(s) * (px / 2 + 1);
}

static inline int fake_line(void *ctx, int px)
{
    (void)ctx;
    return px + px / 4;
}

#endif
