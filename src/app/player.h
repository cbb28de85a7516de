/* player.h — the lesson player: a lesson's steps, its quizzes, the lesson
 * picker and the student's progress. No SDL.
 *
 * The player sits beside the app and never calls it. A step is built, never
 * remembered: app_player_step gives its settings and view for the app to show
 * (app_show), so exploring never leaks into the next step and going back
 * restores what the lesson set; once shown, app_player_enter makes it current.
 * Quizzes read what is on screen (the trace and the view), passed in.
 * Messages for the status line are left in `note` for the caller to show.
 * Like the app, the player changes state and never draws; lesson_panel.c
 * draws it. */
#ifndef APP_PLAYER_H
#define APP_PLAYER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "jobs.h"
#include "lesson.h"
#include "progress.h"
#include "quiz.h"
#include "state.h"

/* The student's answer to one quiz of the current step. */
typedef struct {
    bool *picked;          /* CHOICE: n_choices */
    char text[48];         /* NUMBER: what was typed */
    unsigned char *cells;  /* CELLS: picked cells of the rows × cols picture */
    int rows, cols;
    bool graded;           /* Check was pressed and nothing changed since */
    bool show;             /* CELLS: outline the right cells (after a wrong try) */
    int tries;
    lesson_grade grade;
    char feedback[240];
} app_quiz_answer;

typedef struct {
    bool open;             /* a lesson is shown in the panel */
    lesson ls;
    int *quizzes;          /* the quizzes of each of its steps (its lesson_shape for progress) */
    lesson_entry next;     /* the course's lesson after it (path NULL: none), offered on its last step */
    char name[NAME_MAX + 1]; /* file name: the progress key */
    int step;              /* 0-based */
    lesson_view view;      /* what the lesson set for this step */
    lesson_marks marks;    /* and what it marks on the picture */
    app_quiz_answer *answers; /* one per quiz of the step */
    int focus;             /* NUMBER quiz taking typed text, -1: none */
    int cell_quiz;         /* the step's cell quiz, -1: none */
    int scroll, content_h; /* panel scroll and how far it goes (pixels, from the renderer) */
    int dock_scroll, dock_h; /* the same for its docked quiz (lesson_panel.c) */
    int shown_quiz;        /* a quiz just checked: the next frame scrolls its feedback into view; -1: none */

    bool keep_progress;    /* false: progress is shown but never written */
    lesson_progress *progress; /* NULL: progress is not kept (no HOME) */
    char progress_path[PATH_MAX]; /* "": the default (lesson_progress_path) */
    char progress_note[600]; /* a progress problem, drawn as a chip no status text overwrites */
    char progress_full[600]; /* the same with whole paths (status line, stderr) */
    bool progress_failed;  /* the note says progress is not saved (cleared by a save that works) */
    bool async_save;       /* saves run as requests to jobs (the window): this one never waits for the file */
    struct app_player_save *saving; /* that save, NULL when none */
    bool save_again;       /* changes came while it ran: saved once it ends */

    bool picker;           /* the lesson picker overlay is open */
    lesson_catalog catalog;
    bool have_catalog;
    bool async_read;       /* the picker reads the course folder as a request to jobs (the window) ... */
    struct app_player_list *listing; /* ... this one, taken in by app_player_poll; NULL when none */
    bool pick_listed;      /* Enter came before the list: its selected lesson opens once it is read */
    int sel;               /* picker selection */
    int picker_first;      /* first lesson the picker shows (the renderer keeps sel in view) */
    int picker_rows;       /* how many it shows (from the renderer) */
    bool confirm_reset;    /* picker: asked "reset progress?" */
    char lang[4];          /* "en" or "zh" */
    const app_jobs *jobs;  /* the platform's job service (jobs.h); NULL: none, all here and now */

    char note[400];        /* a message for the status line; "" when none (the caller takes it) */
    bool note_error;
} app_player;

/* Starts with no lesson; lang picks the course folder ("en", "zh"). Progress
 * is read from lesson_progress_path() unless progress_path is given. */
void app_player_init(app_player *p, const char *lang, const char *progress_path);
/* Frees the player after app_player_finish. */
void app_player_free(app_player *p);

/* Progress is saved after each step and answer. With async_save (the window)
 * a save runs as a request to the job service (jobs), so that a file another attnlab keeps
 * locked never stops the window; one that cannot be written keeps its
 * changes for the next save and says so in the note. app_player_poll takes
 * in a save that has ended (true: the note may have changed; a save asked
 * meanwhile starts); app_player_saving says whether one is under way.
 * app_player_finish, as the program ends, waits for it and saves what is left,
 * saying on stderr if that cannot be done. */
bool app_player_poll(app_player *p);
bool app_player_saving(const app_player *p);
void app_player_finish(app_player *p);

/* Loads a lesson; no step is entered yet. A lesson with problems is refused
 * with the first one as "FILE:LINE: message" in err (the open lesson stays).
 * Returns 0 or -1. It is the two halves below in a row: app_player_read reads
 * and checks the lesson (every step's configuration run: seconds on a slow
 * machine) into *ls on any thread, app_player_adopt makes it the player's. */
int app_player_load(app_player *p, const char *path, char *err, size_t errsize);
int app_player_read(const char *path, lesson *ls, char *err, size_t errsize);

/* app_player_read in pieces, for a request that runs a piece at a time
 * (jobs.h): begin reads and parses the file, each step checks one of its
 * steps (false when none is left), end checks any left and gives
 * app_player_read's result. r must not move between begin and end. */
typedef struct {
    lesson ls;
    lesson_diags dg;
    lesson_checker check;
    int rc;                /* lesson_load's, then the check's */
    bool checking;         /* loaded: check is under way */
} app_player_reading;

void app_player_read_begin(app_player_reading *r, const char *path);
bool app_player_read_step(app_player_reading *r);
/* No step is checked after this: end then only frees r's lesson (-1). */
void app_player_read_stop(app_player_reading *r);
int app_player_read_end(app_player_reading *r, const char *path, lesson *ls, char *err, size_t errsize);
/* The read lesson becomes the player's, with the course's next lesson after it
 * (lesson_catalog_next, read on the same thread as the lesson; NULL or an
 * empty entry: none), which the last step offers. Both are taken: *ls and
 * *next are the player's now. */
void app_player_adopt(app_player *p, lesson *ls, const char *path, lesson_entry *next);
void app_player_close(app_player *p);

/* Step `step` (0-based) of the open lesson: its settings into *cfg (initialised
 * here; the caller owns it and frees it, even on failure), what it shows into
 * *view and marks into *marks. Returns 0, or -1 with "FILE:LINE: message" in err. */
int app_player_step(const app_player *p, int step, attn_config *cfg, lesson_view *view, lesson_marks *marks,
                    char *err, size_t errsize);
/* After the app showed that step: it becomes current, the answers are cleared
 * and the visit is recorded. */
void app_player_enter(app_player *p, int step, const lesson_view *view, const lesson_marks *marks);

/* The picker: opens it (reading the course folder); returns 0 or -1 with a note.
 * With async_read it opens at once and says the lessons are being read; the
 * folder (every lesson in it parsed for its title and steps) is read by a
 * request to jobs, and app_player_poll takes the list in. */
int app_player_picker(app_player *p);
/* Whether the picker's list is being read (app_player_picker with async_read). */
bool app_player_listing(const app_player *p);
/* Lesson i of the picker: its path (valid until the picker is read again) and
 * the step to resume at. Returns 0, or -1 with a note (a lesson that does not load). */
int app_player_pick(app_player *p, int i, const char **path, int *step);
/* What the student did in a lesson of the picker, or in the open one, counted
 * on its steps and quizzes as they are now (progress.h: finished means the last
 * step reached and every quiz answered right); all zero without progress. */
lesson_record app_player_entry_record(const app_player *p, const lesson_entry *e);
lesson_record app_player_record(const app_player *p);
/* The step (0-based) lesson e opens at: where the student left it; a lesson
 * whose end was reached with quizzes still to answer at the first of them; a
 * finished one, or one never opened, at the start. */
int app_player_resume(const app_player *p, const lesson_entry *e);

/* Forgets every lesson's progress (the picker's Delete): the first call asks, the second does it. */
void app_player_reset(app_player *p);

/* Quizzes of the current step. `shown` is what is on screen: tr and view. */
void app_player_choice(app_player *p, int quiz, int choice);
void app_player_check(app_player *p, int quiz, const attn_trace *tr, const lesson_view *shown);
void app_player_reveal(app_player *p, int quiz);
/* The tensor the step's cell quiz grades, for the view shown (its layer);
 * NULL when the step has no cell quiz or tr lacks the stage. */
const attn_tensor *app_player_quiz_tensor(const app_player *p, const attn_trace *tr, const lesson_view *shown);
/* A click on cell (i, j) (the stage's own row and column) of the heatmap of
 * the tensor called `stage` for head, in the single view or the grid: toggles
 * it in the step's cell quiz. A cell outside the quiz's region is taken but
 * not picked (a note says why). Returns false when no cell quiz takes it. */
bool app_player_cell(app_player *p, const attn_trace *tr, const lesson_view *shown, const char *stage, int head, int i,
                     int j);
/* Typing into the focused numeric answer. */
void app_player_type(app_player *p, const char *text);
void app_player_backspace(app_player *p);

/* The right cells of the step's cell quiz for what is on screen (rows × cols
 * bytes into out, which has room for max); returns the count or -1. */
int app_player_answer_cells(const app_player *p, const attn_trace *tr, const lesson_view *shown, unsigned char *out,
                            size_t max, int *rows, int *cols);

/* A lesson's number, the digits its file name starts with ("12" for
 * 12-trained-heads.md), into buf; "" when it has none. Returns buf. */
const char *app_player_lesson_number(const char *name, char *buf, size_t size);

/* "step 3 / 9" */
const char *app_player_step_label(const app_player *p, char *buf, size_t size);

#endif
