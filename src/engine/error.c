/* error.c — formatting of engine error messages. */
#include "error.h"

#include "utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Messages quote file contents (tensor names, metadata values, paths), which
 * may hold anything, and cut what they quote at a byte count ('%.40s', or the
 * end of msg): one_line makes the result one line of valid UTF-8 in place.
 * Control characters (C0, DEL, C1) and the line and paragraph separators
 * U+2028/U+2029 become '?'; a character cut short (a lead byte C2..F4 whose
 * continuation bytes stop too soon) is dropped, which is what a cut leaves;
 * any other ill-formed byte (a stray continuation, C0, C1, F5..FF) becomes '?'. */
static void one_line(char *s)
{
    size_t n = strlen(s), w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = attn_utf8_decode(s + i, n - i, &cp);
        unsigned char lead = (unsigned char)s[i];
        if (cp == ATTN_UTF8_REPLACEMENT && !attn_utf8_valid(s + i, len)) {
            if (lead < 0xC2 || lead > 0xF4) s[w++] = '?';
        } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x2028 || cp == 0x2029) {
            s[w++] = '?';
        } else {
            memmove(s + w, s + i, len);
            w += len;
        }
        i += len;
    }
    s[w] = '\0';
}

attn_status attn_fail(attn_error *err, attn_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        one_line(err->msg);
        err->status = status;
    }
    return status;
}

attn_status attn_error_prefix(attn_error *err, const char *prefix)
{
    char tmp[sizeof err->msg];
    size_t n = strlen(prefix);
    if (n + 2 >= sizeof tmp) return err->status;
    memcpy(tmp, prefix, n);
    memcpy(tmp + n, ": ", 2);
    /* the original message, cut to what still fits */
    snprintf(tmp + n + 2, sizeof tmp - n - 2, "%.*s", (int)(sizeof tmp - n - 3), err->msg);
    memcpy(err->msg, tmp, sizeof tmp);
    one_line(err->msg);
    return err->status;
}
