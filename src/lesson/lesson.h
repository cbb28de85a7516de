/* lesson.h — a lesson file as plain data, read with md4c. No SDL.
 *
 * A lesson is Markdown (format: lessons/README.md): the first `#` heading is
 * its title, every `##` heading starts a step, a ```attnlab block sets the
 * visualizer with `key = value` lines, task lists and ```quiz blocks are
 * quizzes. lesson_parse copies everything it keeps out of md4c's buffers, so a
 * lesson outlives its text:
 *
 *     lesson ls;
 *     lesson_diags dg = {0};
 *     if (lesson_load("lessons/en/04-causal-mask.md", &ls, &dg)) { print dg; }
 *     ... ls.steps[i].blocks ...
 *     lesson_free(&ls);
 *     lesson_diags_free(&dg);
 *
 * Problems are collected as (line, message) pairs rather than stopping at the
 * first, so `attnlab lesson --check` can list them all. */
#ifndef LESSON_H
#define LESSON_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "measure.h"

/* ---- prose */

enum { LESSON_EM = 1, LESSON_STRONG = 2, LESSON_CODE = 4, LESSON_LINK = 8, LESSON_DEL = 16 };

typedef struct {
    int start, end;  /* byte range of the block's text */
    unsigned style;  /* LESSON_EM | LESSON_STRONG | ... */
} lesson_span;

typedef enum {
    LESSON_BLOCK_PARA,
    LESSON_BLOCK_HEADING,  /* ### and deeper inside a step (level in `level`) */
    LESSON_BLOCK_ITEM,     /* list item: marker "•" or "3.", nesting in `level` */
    LESSON_BLOCK_QUOTE,    /* a paragraph inside a block quote */
    LESSON_BLOCK_CODE,     /* a code block other than attnlab/quiz */
    LESSON_BLOCK_TABLE_ROW,/* cells joined by " │ "; level 1 for a header row */
    LESSON_BLOCK_CHOICE,   /* one choice of a multiple-choice quiz (quiz, choice) */
    LESSON_BLOCK_WHY,      /* why that choice is right or wrong, shown after Check (quiz, choice) */
    LESSON_BLOCK_QUIZ      /* where quiz `quiz` is answered: Check button, field, feedback */
} lesson_block_kind;

typedef struct {
    lesson_block_kind kind;
    int line;
    int level;
    char marker[16];
    char *text;            /* UTF-8, zero-terminated, never NULL */
    lesson_span *spans;
    int n_spans;
    int quiz, choice;      /* CHOICE, WHY and QUIZ: indices into the step's quizzes; else -1 */
} lesson_block;

/* ---- quizzes */

typedef enum { LESSON_QUIZ_CHOICE, LESSON_QUIZ_NUMBER, LESSON_QUIZ_CELLS } lesson_quiz_kind;

typedef enum {
    LESSON_CELLS_MASKED,   /* every cell the mask removes */
    LESSON_CELLS_UNMASKED, /* every cell the mask keeps */
    LESSON_CELLS_ARGMAX,   /* one per query row: its largest value */
    LESSON_CELLS_ARGMIN,   /* one per query row: its smallest value */
    LESSON_CELLS_NAN,      /* every NaN cell */
    LESSON_CELLS_COUNT
} lesson_cell_rule;

typedef struct {
    lesson_quiz_kind kind;
    int line;
    char *question;        /* text of the paragraph before it ("" if none) */
    /* CHOICE */
    int n_choices;
    bool *correct;         /* n_choices */
    bool *explained;       /* n_choices: the choice has a WHY block (a list nested under it) */
    int n_correct;
    /* NUMBER */
    double answer, tolerance;
    /* CELLS */
    lesson_cell_rule rule;
    char stage[64];        /* "" : the step's stage */
    int rows[2], cols[2];  /* the region asked about: its first row and the row after its last (`rows = 7..12`
                              is {7, 13}), the same for columns; {0, 0}: every row (column). Graded only
                              there, and the view zooms to it */
    int rows_line, cols_line; /* lines that set them, 0: not set */
    char *hint, *explain;  /* NULL when not given */
} lesson_quiz;

/* ---- steps */

typedef struct {
    char key[32];          /* normalised: lower case, '-' and ' ' as '_' */
    char *value;
    int line;
} lesson_setting;

typedef struct {
    char *title;
    int line;
    lesson_setting *settings; /* from the step's attnlab blocks, in order */
    int n_settings;
    lesson_block *blocks;
    int n_blocks;
    lesson_quiz *quizzes;
    int n_quizzes;
    lesson_measure *measures; /* the numbers its prose measures, {{…}} */
    int n_measures;
} lesson_step;

typedef struct {
    char *path;            /* as given to lesson_load ("" from lesson_parse without one) */
    char *title;
    int title_line;
    char *summary;         /* first paragraph of the introduction, plain text ("" if none) */
    lesson_step intro;     /* before the first ##: prose shown with step 1, settings for every step */
    lesson_step *steps;
    int n_steps;
} lesson;

#define LESSON_MAX_BYTES (1 << 20)

/* Parses size bytes of Markdown. Returns 0 if the lesson is sound, -1 if any
 * problem was added to dg (the lesson is then still filled as far as it got,
 * and must be freed). path is copied for messages (may be NULL). */
int lesson_parse(const char *text, size_t size, const char *path, lesson *out, lesson_diags *dg);

/* Reads and parses a file; a missing or unreadable file is a diagnostic at line 0. */
int lesson_load(const char *path, lesson *out, lesson_diags *dg);

void lesson_free(lesson *ls);

/* Keys an attnlab block may set: the engine's config names except the file
 * paths, plus the view keys below. */
bool lesson_is_view_key(const char *key);

/* Total quizzes over all steps. */
int lesson_quiz_count(const lesson *ls);
/* The quizzes of each step (n_steps numbers, malloc'd: the caller frees), for
 * progress (progress.h's lesson_shape); NULL when out of memory. */
int *lesson_step_quizzes(const lesson *ls);

#endif
