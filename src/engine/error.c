/* error.c — formatting of engine error messages. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Messages quote file contents (tensor names, metadata values, paths), which
 * may hold anything: control characters become '?' so a message stays one line. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
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
