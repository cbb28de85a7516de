/* player.h — the lesson player: a lesson's steps driving the visualizer, its
 * quizzes, the lesson picker and the student's progress.
 *
 * The player is part of the app state (ui_app.lesson). Entering a step
 * rebuilds the visualizer from the lesson (lesson_step_state), so exploring
 * never leaks into the next step and going back restores what the lesson set.
 * Like the rest of the app, these functions change state and never draw;
 * lesson_panel.c draws it. */
#ifndef UI_PLAYER_H
#define UI_PLAYER_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "lesson.h"
#include "progress.h"
#include "quiz.h"
#include "state.h"

struct ui_app;

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
} ui_quiz_answer;

typedef struct {
    bool open;             /* a lesson is shown in the panel */
    lesson ls;
    char name[128];        /* file name: the progress key */
    int step;              /* 0-based */
    lesson_view view;      /* what the lesson set for this step */
    ui_quiz_answer *answers; /* one per quiz of the step */
    int focus;             /* NUMBER quiz taking typed text, -1: none */
    int cell_quiz;         /* the step's cell quiz, -1: none */
    int scroll, content_h; /* panel scroll and content height (pixels, from the renderer) */

    bool keep_progress;    /* false: progress is shown but never written */
    lesson_progress *progress; /* NULL: progress is not kept (no HOME) */
    char progress_path[1024];
    char progress_note[600]; /* a progress problem, drawn as a chip no status text overwrites */
    char progress_full[600]; /* the same with whole paths (status line, stderr) */
    bool progress_failed;  /* the note says progress is not saved (cleared by a save that works) */

    bool picker;           /* the lesson picker overlay is open */
    lesson_catalog catalog;
    bool have_catalog;
    int sel;               /* picker selection */
    bool confirm_reset;    /* picker: asked "reset progress?" */
    char lang[4];          /* "en" or "zh" */
} ui_player;

/* Starts with no lesson; lang picks the course folder ("en", "zh"). Progress
 * is read from lesson_progress_path() unless progress_path is given. */
void ui_player_init(ui_player *p, const char *lang, const char *progress_path);
void ui_player_free(ui_player *p);

/* Opens a lesson at step (0-based). A lesson with problems is refused with the
 * first one as "FILE:LINE: message" in err. Returns 0 or -1. */
int ui_player_open(struct ui_app *app, const char *path, int step, char *err, size_t errsize);
void ui_player_close(struct ui_app *app);

/* Enters a step (0-based): rebuilds the visualizer and clears the answers. */
int ui_player_go(struct ui_app *app, int step);

/* The picker: opens it (reading the course folder), or opens lesson i of it. */
int ui_player_picker(struct ui_app *app);
int ui_player_pick(struct ui_app *app, int i);

/* Quizzes of the current step. */
void ui_player_choice(struct ui_app *app, int quiz, int choice);
void ui_player_check(struct ui_app *app, int quiz);
void ui_player_reveal(struct ui_app *app, int quiz);
/* A click on cell (i, j) of the heatmap of `stage` for head: toggles it in the
 * step's cell quiz. Returns false when no cell quiz takes it. */
bool ui_player_cell(struct ui_app *app, const char *stage, int head, int i, int j);
/* Typing into the focused numeric answer. */
void ui_player_type(struct ui_app *app, const char *text);
void ui_player_backspace(struct ui_app *app);

/* The right cells of the step's cell quiz for what is on screen now (rows ×
 * cols bytes into out, which has room for max); returns the count or -1. */
int ui_player_answer_cells(const struct ui_app *app, unsigned char *out, size_t max, int *rows, int *cols);

/* Forgets every lesson's progress (the picker's Delete, pressed twice). */
void ui_player_reset_progress(struct ui_app *app);

/* "step 3 / 9" */
const char *ui_player_step_label(const ui_player *p, char *buf, size_t size);

#endif
