/* catalog.h — the shipped course: where it is, which language, what is in it. No SDL.
 *
 * Lessons live in <root>/<lang>/NAME.md (README.md excepted), ordered by file
 * name. The root is $ATTNLAB_LESSONS if set, else the source tree's lessons/
 * folder this build was made from. */
#ifndef LESSON_CATALOG_H
#define LESSON_CATALOG_H

#include <stddef.h>

#include "lesson.h"
#include "progress.h"

typedef struct {
    char *path;     /* <root>/<lang>/04-causal-mask.md */
    char *name;     /* 04-causal-mask.md: the progress key, the same in every language */
    char *title;    /* the lesson's title, or its file name when it does not parse */
    char *summary;
    int n_steps, n_quizzes;
    int *quizzes;   /* n_steps: the quizzes of each step (lesson_entry_shape) */
    char *error;    /* "FILE:LINE: message" for a lesson that does not parse, else NULL */
} lesson_entry;

typedef struct {
    char *dir;      /* <root>/<lang> */
    lesson_entry *items;
    int n;
} lesson_catalog;

/* "zh" when the first of LANGUAGE, LC_ALL, LC_MESSAGES, LANG that is set
 * starts with "zh", else "en". */
const char *lesson_lang_from_env(void);

/* <root>/<lang> into buf; returns buf, or NULL when that path does not fit
 * in size bytes (lesson_catalog_load then says so). */
const char *lesson_catalog_dir(const char *lang, char *buf, size_t size);

/* Lists and parses every lesson of dir. Returns 0, or -1 with a message if the
 * folder cannot be read or dir is NULL (a lesson that does not parse is listed
 * with its error). */
int lesson_catalog_load(lesson_catalog *c, const char *dir, char *err, size_t errsize);
void lesson_catalog_free(lesson_catalog *c);

/* The lesson after the one at `path` in its folder, in the catalog's order (by
 * file name, README.md excepted), read as lesson_catalog_load reads each: into
 * *next, freed with lesson_entry_free. Returns 0, 1 when path is the last
 * lesson there, -1 when the folder cannot be read or memory runs out. */
int lesson_catalog_next(const char *path, lesson_entry *next);
void lesson_entry_free(lesson_entry *e);

/* The entry's steps and their quizzes, as progress counts them. */
lesson_shape lesson_entry_shape(const lesson_entry *e);

#endif
