/* load.c — a lesson from a file, and freeing one: lesson_load (read through
 * the engine's reader, then lesson_parse) and lesson_free. */
#include "lesson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/fileio.h"

int lesson_load(const char *path, lesson *out, lesson_diags *dg)
{
    *out = (lesson){0};
    size_t n, len = strlen(path);
    char *buf;
    attn_error err;
    /* a regular file only (a FIFO or a device is refused at once), at most the lesson limit */
    if (attn_file_read(path, LESSON_MAX_BYTES, &buf, &n, &err)) {
        const char *msg = err.msg; /* the diagnostic names the file already */
        if (!strncmp(msg, path, len) && msg[len] == ':') msg += len + (msg[len + 1] == ' ' ? 2 : 1);
        lesson_diag_add(dg, 0, "%s", msg);
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
        free(st->quizzes[i].explained);
        free(st->quizzes[i].hint);
        free(st->quizzes[i].explain);
    }
    free(st->quizzes);
    for (int i = 0; i < st->n_measures; i++) lesson_measure_free(&st->measures[i]);
    free(st->measures);
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

int *lesson_step_quizzes(const lesson *ls)
{
    int *q = malloc((size_t)(ls->n_steps > 0 ? ls->n_steps : 1) * sizeof *q);
    for (int i = 0; q && i < ls->n_steps; i++) q[i] = ls->steps[i].n_quizzes;
    return q;
}
