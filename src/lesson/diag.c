/* diag.c — collecting lesson problems. */
#include "diag.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

/* A message quotes the lesson, whose text may hold line breaks, tabs, line
 * separators and other control characters (a measure's number can run over
 * lines), and whose quotes are cut at a byte count, perhaps inside a UTF-8
 * character. Each of those characters becomes a space and each broken byte
 * is dropped, so a diagnostic is one line of valid UTF-8. */
static void one_line(char *msg)
{
    const utf8proc_uint8_t *in = (const utf8proc_uint8_t *)msg;
    utf8proc_ssize_t n = (utf8proc_ssize_t)strlen(msg), i = 0;
    size_t out = 0;
    while (i < n) {
        utf8proc_int32_t c;
        utf8proc_ssize_t len = utf8proc_iterate(in + i, n - i, &c);
        if (len < 1) { i++; continue; }
        utf8proc_category_t cat = utf8proc_category(c);
        bool breaks = cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
        if (breaks) msg[out++] = ' ';
        else memmove(msg + out, in + i, (size_t)len), out += (size_t)len;
        i += len;
    }
    msg[out] = '\0';
}

void lesson_diag_add(lesson_diags *dg, int line, const char *fmt, ...)
{
    if (!dg) return;
    char msg[sizeof dg->items[0].msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    one_line(msg);
    for (int i = 0; i < dg->n; i++) /* a problem carried by inherited settings is reported once */
        if (dg->items[i].line == line && !strcmp(dg->items[i].msg, msg)) return;
    if (dg->n == dg->cap) {
        int cap = dg->cap ? 2 * dg->cap : 8;
        lesson_diag *items = realloc(dg->items, (size_t)cap * sizeof *items);
        if (!items) return;
        dg->items = items;
        dg->cap = cap;
    }
    lesson_diag *d = &dg->items[dg->n++];
    d->line = line;
    memcpy(d->msg, msg, sizeof msg);
}

void lesson_diags_free(lesson_diags *dg)
{
    free(dg->items);
    *dg = (lesson_diags){0};
}

const char *lesson_diag_format(const char *path, const lesson_diag *d, char *buf, size_t size)
{
    if (d->line > 0) snprintf(buf, size, "%s:%d: %s", path, d->line, d->msg);
    else snprintf(buf, size, "%s: %s", path, d->msg);
    return buf;
}
