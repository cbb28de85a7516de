/* progress.h — what a student has done, kept between sessions. No SDL.
 *
 * One JSON file per user, $XDG_STATE_HOME/attnlab/progress.json (or
 * ~/.local/state/attnlab/progress.json), keyed by lesson file name so that
 * both languages share it:
 *
 *     {"version": 1, "lessons": {"04-causal-mask.md":
 *         {"step": 5, "steps": 9, "finished": false, "quizzes": {"3.0": true}}}}
 *
 * "step" is the furthest step reached (1-based), a quiz key is
 * "step.quiz" (0-based) and its value whether the last answer was right.
 * Writes go to a temporary file renamed over the old one, so a crash never
 * leaves half a file; an unreadable file is set aside, never overwritten. */
#ifndef LESSON_PROGRESS_H
#define LESSON_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct lesson_progress lesson_progress;

typedef struct {
    int step;           /* furthest step reached, 1-based; 0: never opened */
    int steps;
    bool finished;      /* reached the last step */
    int quizzes_right;  /* quizzes whose last answer was right */
    int quizzes_tried;
} lesson_record;

/* The default file path into buf; returns buf, or NULL if neither
 * XDG_STATE_HOME nor HOME is set. */
const char *lesson_progress_path(char *buf, size_t size);

/* Opens (or starts) the store at path. Returns NULL only when out of memory.
 * A corrupt file is renamed to path + ".bad" and a note put in err. */
lesson_progress *lesson_progress_open(const char *path, char *err, size_t errsize);
void lesson_progress_close(lesson_progress *p);

lesson_record lesson_progress_get(const lesson_progress *p, const char *name);
/* Records a visit to step (0-based) of a lesson with n_steps steps. */
void lesson_progress_visit(lesson_progress *p, const char *name, int step, int n_steps);
void lesson_progress_quiz(lesson_progress *p, const char *name, int step, int quiz, bool right);
/* Result of one quiz: 1 right, 0 wrong, -1 not answered. */
int lesson_progress_quiz_result(const lesson_progress *p, const char *name, int step, int quiz);

/* Forgets everything (name NULL) or one lesson. */
void lesson_progress_reset(lesson_progress *p, const char *name);

/* Writes the file (creating its directory). Returns 0, or -1 with a message. */
int lesson_progress_save(lesson_progress *p, char *err, size_t errsize);

#endif
