/* diag.c — collecting lesson problems. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"

void lesson_diag_add(lesson_diags *dg, int line, const char *fmt, ...)
{
    if (!dg) return;
    char msg[sizeof dg->items[0].msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* the lesson's text it quotes may hold line breaks and control characters (a measure's
     * number can run over lines), cut at a byte count inside a character: one line of UTF-8 */
    attn_utf8_one_line(msg);
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
