/* error.c — formatting of engine error messages. */
#include "error.h"

#include "engine/base/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Messages quote file contents (tensor names, metadata values, paths), which
 * may hold anything, and cut what they quote at a byte count ('%.40s', or the
 * end of msg): attn_utf8_one_line, the one rule for text shown on a terminal,
 * makes the result one line of valid UTF-8 in place (control characters and
 * line breaks become spaces, a character cut short and any other ill-formed
 * byte are dropped). */
attn_status attn_fail(attn_error *err, attn_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        attn_utf8_one_line(err->msg);
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
    attn_utf8_one_line(err->msg);
    return err->status;
}
