/* term.c — text that came from a file, printed to a terminal: its control
 * characters shown as escapes instead of obeyed (a trace's metadata may
 * hold ESC[2J or ESC]0;title BEL). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/base/utf8.h"

/* The visible form of the character s[0..len) decoded as cp: a control
 * character (C0, DEL, C1) as \x1b or \u009b, an ill-formed byte as \xff;
 * NULL for any other (printed as it is). */
static const char *escape(const char *s, size_t len, uint32_t cp, char buf[32])
{
    bool ill = cp == ATTN_UTF8_REPLACEMENT && !(len == 3 && !memcmp(s, "\xEF\xBF\xBD", 3));
    if (ill) { /* each byte of the ill-formed sequence */
        size_t n = 0;
        for (size_t i = 0; i < len; i++) n += (size_t)snprintf(buf + n, 32 - n, "\\x%02x", (unsigned char)s[i]);
        return buf;
    }
    if (cp < 0x20 || cp == 0x7F) snprintf(buf, 32, "\\x%02x", (unsigned)cp);
    else if (cp >= 0x80 && cp <= 0x9F) snprintf(buf, 32, "\\u%04x", (unsigned)cp);
    else return NULL;
    return buf;
}

void cli_term_put(FILE *f, const char *s)
{
    char buf[32];
    for (size_t i = 0, n = strlen(s); i < n;) {
        uint32_t cp;
        size_t len = attn_utf8_decode(s + i, n - i, &cp);
        const char *e = escape(s + i, len, cp, buf);
        if (e) fputs(e, f);
        else fwrite(s + i, 1, len, f);
        i += len;
    }
}

int cli_term_width(const char *s)
{
    char buf[32];
    int w = 0;
    for (size_t i = 0, n = strlen(s); i < n;) {
        uint32_t cp;
        size_t len = attn_utf8_decode(s + i, n - i, &cp);
        const char *e = escape(s + i, len, cp, buf);
        w += e ? (int)strlen(e) : attn_utf8_is_wide(cp) ? 2 : 1;
        i += len;
    }
    return w;
}
