/* load.c — a lesson from a file, and freeing one: the whole-file reader,
 * lesson_load (read, then lesson_parse) and lesson_free. */
#include "lesson.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *lesson_read_file(const char *path, size_t limit, size_t *size)
{
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    int err = 0;
    while (*size <= limit) {
        if (*size + 1 >= cap) {
            cap = cap ? 2 * cap : 16384;
            char *b = realloc(buf, cap);
            if (!b) {
                err = ENOMEM;
                break;
            }
            buf = b;
        }
        size_t got = fread(buf + *size, 1, cap - *size - 1, f);
        *size += got;
        if (!got) {
            if (ferror(f)) err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    if (!buf && !(buf = malloc(1))) return errno = ENOMEM, NULL;
    buf[*size] = '\0';
    return buf;
}

int lesson_load(const char *path, lesson *out, lesson_diags *dg)
{
    *out = (lesson){0};
    size_t n;
    char *buf = lesson_read_file(path, LESSON_MAX_BYTES, &n); /* lesson_parse reports a file too large */
    if (!buf) {
        if (errno == ENOMEM) lesson_diag_add(dg, 0, "out of memory");
        else lesson_diag_add(dg, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    int ret = lesson_parse(buf, n, path, out, dg);
    free(buf);
    return ret;
}

static void free_step(lesson_step *st)
{
    free(st->title);
    for (int i = 0; i < st->n_settings; i++) free(st->settings[i].value);
    free(st->settings);
    for (int i = 0; i < st->n_blocks; i++) {
        free(st->blocks[i].text);
        free(st->blocks[i].spans);
    }
    free(st->blocks);
    for (int i = 0; i < st->n_quizzes; i++) {
        free(st->quizzes[i].question);
        free(st->quizzes[i].correct);
        free(st->quizzes[i].hint);
        free(st->quizzes[i].explain);
    }
    free(st->quizzes);
    *st = (lesson_step){0};
}

void lesson_free(lesson *ls)
{
    free(ls->path);
    free(ls->title);
    free(ls->summary);
    free_step(&ls->intro);
    for (int i = 0; i < ls->n_steps; i++) free_step(&ls->steps[i]);
    free(ls->steps);
    *ls = (lesson){0};
}

int lesson_quiz_count(const lesson *ls)
{
    int n = 0;
    for (int i = 0; i < ls->n_steps; i++) n += ls->steps[i].n_quizzes;
    return n;
}
