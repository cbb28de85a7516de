/* progress.h — what a student has done, kept between sessions. No SDL.
 *
 * One JSON file per user, $XDG_STATE_HOME/attnlab/progress.json (or
 * ~/.local/state/attnlab/progress.json), keyed by lesson file name so that
 * both languages share it:
 *
 *     {"version": 1, "lessons": {"04-causal-mask.md":
 *         {"step": 5, "steps": 9, "finished": false, "quizzes": {"3.0": true}}}}
 *
 * "step" is the furthest step reached (1-based), "finished" whether that was
 * the last one (the name is the file's since version 1: it means no more), a
 * quiz key is "step.quiz" (0-based) and its value whether the last answer was
 * right. A lesson is finished only with its quizzes: see lesson_record.
 *
 * Several windows and commands may use the file at once, so an instance never
 * writes back its whole copy. It keeps the changes it made since its last
 * save (visits, answers, resets), and a save replays them onto the file as it
 * is now:
 *
 *     lock PATH.lock (waiting a few seconds at most) → read PATH
 *       → forget what this instance reset
 *       → merge its changes: the furthest step wins, the latest answer wins
 *       → write a unique temporary file, fsync, rename over PATH, fsync the
 *         folder (attn_file_write_atomic) → unlock
 *
 * after which the instance shows the merged file, others' progress included.
 * A symbolic link is followed: its target is updated, in the target's folder.
 *
 * Nothing is ever lost or overwritten:
 * - a file that cannot be read (no permission, a folder, a FIFO) is never
 *   replaced; progress is kept in memory for the session, every save says
 *   why it did not write, and lesson_progress_unsaved() too;
 * - a corrupt file is moved aside to PATH.bad-YYYYMMDD-HHMMSS (-1, -2 … when
 *   taken), the message says where, and progress starts afresh.
 *
 * A lesson_progress belongs to one thread; other threads open their own, or
 * write its changes with the three parts of a save below. */
#ifndef LESSON_PROGRESS_H
#define LESSON_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct lesson_progress lesson_progress;

/* A lesson's shape, as progress counts it: its steps and the quizzes of each. */
typedef struct {
    int n_steps;
    const int *quizzes;  /* n_steps: how many quizzes step s has */
} lesson_shape;

/* What a student did in one lesson. A lesson is finished when its last step
 * was reached AND the last answer to every one of its quizzes was right: a
 * student who clicks Next through it has only reached the end. A quiz whose
 * right cells were shown ("Show answer") counts once the student has clicked
 * them and pressed Check, like any other right answer (docs/lessons.md). */
typedef struct {
    int step;           /* furthest step reached, 1-based; 0: never opened */
    int steps;          /* the lesson's steps when last visited */
    bool reached_end;   /* the last step reached */
    bool finished;      /* reached_end and every quiz right (needs the lesson's shape) */
    int quizzes_right;  /* quizzes whose last answer was right (of the shape's quizzes, with one) */
    int quizzes_tried;
    int first_open;     /* with a shape: the first step (0-based) with a quiz not answered right; -1: none */
} lesson_record;

typedef enum {
    LESSON_PROGRESS_OK = 0,
    LESSON_PROGRESS_MOVED = 1,    /* done, but a corrupt file was first moved aside: the message says where */
    LESSON_PROGRESS_UNSAVED = -1, /* nothing written: the message says why; the changes are kept */
    LESSON_PROGRESS_BUSY = -2,    /* nothing written yet: another instance held the lock too long;
                                   * the changes are kept for the next save */
} lesson_progress_status;

/* The default file path into buf; returns buf, or NULL if neither
 * XDG_STATE_HOME nor HOME is set, or the path does not fit in size bytes. */
const char *lesson_progress_path(char *buf, size_t size);

/* How long a save waits for the lock another instance holds: then it gives
 * up, BUSY with "progress file FILE is locked by another attnlab", and keeps
 * its changes for the next save. */
#define LESSON_PROGRESS_LOCK_MS 3000

/* Opens (or starts) the store at path. Returns NULL only when out of memory.
 * err gets one line when something needs telling: a corrupt file moved aside,
 * or a file that cannot be read (then lesson_progress_unsaved is not NULL).
 * Moving a corrupt file aside takes the lock, waited for at most wait_ms: if
 * another instance holds it longer, the first save moves the file instead. */
lesson_progress *lesson_progress_open(const char *path, int wait_ms, char *err, size_t errsize);
void lesson_progress_close(lesson_progress *p);

/* NULL while saves can write; else why progress is kept in memory only. */
const char *lesson_progress_unsaved(const lesson_progress *p);

/* The record of lesson `name`. With its shape (NULL: without), reached_end and
 * the counts are of the lesson as it is now (an answer to a quiz it no longer
 * has is not counted), and finished is decided; without one, reached_end is
 * the file's "finished", the counts are of every answer kept, and finished is
 * false: only the lesson can say whether all its quizzes were answered. */
lesson_record lesson_progress_get(const lesson_progress *p, const char *name, const lesson_shape *shape);
/* Records a visit to step (0-based) of a lesson with n_steps steps. */
void lesson_progress_visit(lesson_progress *p, const char *name, int step, int n_steps);
void lesson_progress_quiz(lesson_progress *p, const char *name, int step, int quiz, bool right);
/* Result of one quiz: 1 right, 0 wrong, -1 not answered. */
int lesson_progress_quiz_result(const lesson_progress *p, const char *name, int step, int quiz);

/* Forgets everything (name NULL) or one lesson: here at once, and in the file
 * at the next save, including what other instances saved before it. */
void lesson_progress_reset(lesson_progress *p, const char *name);

/* Replays this instance's changes onto the file (creating its folder), as
 * above, waiting at most LESSON_PROGRESS_LOCK_MS for the lock. Returns a
 * status; err gets the message of MOVED, UNSAVED and BUSY. */
lesson_progress_status lesson_progress_save(lesson_progress *p, char *err, size_t errsize);

/* The same save in three parts, for a thread that must not wait on the file
 * (the window's). lesson_progress_begin takes the changes made so far into
 * a batch (NULL when out of memory: nothing is taken), and p goes on
 * collecting new ones. lesson_progress_write replays the batch onto the file
 * on any thread, waiting at most wait_ms for the lock. lesson_progress_end,
 * back on p's thread, frees the batch: a written one's merged file is shown,
 * the changes made meanwhile on top; one not written gives its changes back,
 * under the newer ones, for the next save. It returns write's status and
 * puts its message in err. */
typedef struct lesson_progress_batch lesson_progress_batch;
lesson_progress_batch *lesson_progress_begin(lesson_progress *p);
lesson_progress_status lesson_progress_write(lesson_progress_batch *b, int wait_ms);
lesson_progress_status lesson_progress_end(lesson_progress *p, lesson_progress_batch *b, char *err, size_t errsize);

/* Whether p has changes no save has written yet. */
bool lesson_progress_pending(const lesson_progress *p);

#endif
