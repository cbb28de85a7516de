/* fuzz_lesson.c — libFuzzer target: any byte string given to the lesson parser
 * ends in a lesson or in diagnostics with a line and a one-line message, with
 * no crash, leak or undefined behaviour. Accepted lessons also build every
 * step's state (not the engine run: that is the config fuzzing's job), and
 * every measure of theirs is measured on one small trace made once (two batch
 * rows, four heads, one layer): whatever its batch=, head=, layer=, row=,
 * col= or token=, a value or a one-line reason. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"
#include "state.h"

/* The trace every input's measures are measured on, run once. */
static const attn_trace *small_trace(void)
{
    static attn_trace tr;
    static int made;
    if (!made) {
        static const char md[] = "# T\n\n## S\n\n```attnlab\ntokens = a b c | d e\nheads = 4\nkv_heads = 2\n"
                                 "train = true\ndropout = 0.5\n```\n";
        lesson ls;
        lesson_diags dg = {0};
        if (lesson_parse(md, sizeof md - 1, "t.md", &ls, &dg) || lesson_step_run(&ls, 0, &tr, &dg)) abort();
        lesson_free(&ls);
        lesson_diags_free(&dg);
        made = 1;
    }
    return &tr;
}

/* Every measure of st on the small trace, as the step's default view shows it. */
static void measure_all(const lesson_step *st, lesson_measure_files *files)
{
    for (int k = 0; k < st->n_measures; k++) {
        double v;
        char why[300];
        if (lesson_measure_eval(&st->measures[k], small_trace(), 0, 0, 0, "weights", NULL, files, &v, why, sizeof why) &&
            (!why[0] || strchr(why, '\n')))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lesson ls;
    lesson_diags dg = {0};
    int rc = lesson_parse((const char *)data, size, "fuzz.md", &ls, &dg);
    for (int i = 0; i < dg.n; i++)
        if (!dg.items[i].msg[0] || strchr(dg.items[i].msg, '\n') || dg.items[i].line < 0) abort();
    if (rc == 0) {
        if (!ls.title || ls.n_steps < 1) abort();
        lesson_measure_files files = {0}; /* model= names a folder: its card is read, once */
        measure_all(&ls.intro, &files);
        for (int s = 0; s < ls.n_steps; s++) measure_all(&ls.steps[s], &files);
        lesson_measure_files_free(&files);
        for (int s = 0; s < ls.n_steps; s++) {
            attn_config c;
            lesson_view v;
            lesson_step_state(&ls, s, &c, &v, NULL, &dg);
            attn_config_free(&c);
            const lesson_step *st = &ls.steps[s];
            for (int b = 0; b < st->n_blocks; b++) {
                const lesson_block *bl = &st->blocks[b];
                int n = (int)strlen(bl->text);
                for (int k = 0; k < bl->n_spans; k++)
                    if (bl->spans[k].start < 0 || bl->spans[k].end > n || bl->spans[k].start > bl->spans[k].end) abort();
                if ((bl->kind == LESSON_BLOCK_QUIZ || bl->kind == LESSON_BLOCK_CHOICE || bl->kind == LESSON_BLOCK_WHY) &&
                    (bl->quiz < 0 || bl->quiz >= st->n_quizzes))
                    abort();
                if ((bl->kind == LESSON_BLOCK_CHOICE || bl->kind == LESSON_BLOCK_WHY) &&
                    (bl->choice < 0 || bl->choice >= st->quizzes[bl->quiz].n_choices))
                    abort();
            }
            for (int q = 0; q < st->n_quizzes; q++) { /* a region is empty (every row) or FIRST < END */
                const lesson_quiz *qz = &st->quizzes[q];
                if ((qz->rows[1] && qz->rows[1] <= qz->rows[0]) || (qz->cols[1] && qz->cols[1] <= qz->cols[0]) ||
                    qz->rows[0] < 0 || qz->cols[0] < 0 || (!qz->rows[1] && qz->rows[0]) || (!qz->cols[1] && qz->cols[0]))
                    abort();
            }
        }
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
    return 0;
}
