/* error.c — formatting of engine error messages. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

attn_status attn_fail(attn_error *err, attn_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
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
    return err->status;
}
