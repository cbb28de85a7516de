/* diag.h — lesson problems as (line, message) pairs. No SDL.
 *
 * The parser, the step checks (state.c), the catalog and the progress file
 * add to one list rather than stopping at the first problem, so
 * `attnlab lesson --check` can print them all as FILE:LINE: MESSAGE. */
#ifndef LESSON_DIAG_H
#define LESSON_DIAG_H

#include <stddef.h>

typedef struct {
    int line;      /* 1-based; 0: the whole file */
    char msg[240];
} lesson_diag;

typedef struct {
    lesson_diag *items;
    int n, cap;
} lesson_diags;

/* Adds a printf-style message at line; the same (line, message) twice is
 * kept once. dg may be NULL (nothing is kept); out of memory drops it. */
void lesson_diag_add(lesson_diags *dg, int line, const char *fmt, ...);

/* Frees the items and empties dg, which the caller owns. */
void lesson_diags_free(lesson_diags *dg);

/* "FILE:LINE: message" (line 0: "FILE: message") into buf; returns buf. */
const char *lesson_diag_format(const char *path, const lesson_diag *d, char *buf, size_t size);

#endif
