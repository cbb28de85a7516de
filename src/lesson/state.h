/* state.h — what the visualizer shows at a lesson step, and `--check`.
 *
 * A step's state is built, never remembered: the default configuration, the
 * introduction's settings, then the settings of steps 1 … N in order. So
 * going back to a step gives exactly what the lesson set, whatever the
 * student explored in between. */
#ifndef LESSON_STATE_H
#define LESSON_STATE_H

#include "engine/trace/config.h"
#include "engine/trace/trace.h"
#include "lesson.h"

typedef enum {
    LESSON_VIEW_SINGLE,
    LESSON_VIEW_GRID,
    LESSON_VIEW_COMPARE,
    LESSON_VIEW_GEOMETRY, /* one head's queries, keys and values as arrows */
    LESSON_VIEW_TRAINING, /* a model saved during training: its loss and its heads' measures over training */
    LESSON_VIEW_TILES,    /* FlashAttention: the tiles, and m, ℓ and the partial output after one key tile */
    LESSON_VIEW_EXPERTS,  /* a routed layer: tokens × experts, each cell the weight of a chosen expert */
    LESSON_VIEW_COUNT
} lesson_view_mode;

/* Their names in lessons (`view = grid`) and on the command line (`--view grid`). */
extern const char *const lesson_view_names[LESSON_VIEW_COUNT];       /* "single", "grid", "compare", "geometry", "training", "tiles", "experts" */
/* The stage list and the side panel beside the picture: where they leave it
 * its size (auto), always, or never (`panels = shown`, the window's n). */
/* side: the side panel without the stage list, for a step whose text reads the panel beside a wide picture. */
typedef enum { LESSON_PANELS_AUTO, LESSON_PANELS_SHOWN, LESSON_PANELS_HIDDEN, LESSON_PANELS_SIDE, LESSON_PANELS_COUNT } lesson_panels;
extern const char *const lesson_panels_names[LESSON_PANELS_COUNT]; /* "auto", "shown", "hidden", "side" */

typedef enum { LESSON_HL_NONE, LESSON_HL_ROW, LESSON_HL_COL, LESSON_HL_CELLS } lesson_hl_kind;

/* What is on screen, whoever sets it: a lesson step, the window's keys and
 * clicks (app_state.view), `attnlab render`'s flags (app_picture.view). One
 * struct, so the three cannot drift apart. No SDL. */
typedef struct {
    char stage[64];        /* "weights" unless set */
    int layer;             /* 0 (the traces have one layer) */
    int head, batch;       /* query head, batch row */
    int row;               /* query row drawn as a bar chart; -1: none */
    lesson_view_mode mode;
    int compare;           /* what the compare view toggles: a setting, attn_compare_at(compare) */
    int decode_step;       /* 0: full pass; N: KV-cache decoding step N */
    int tile;              /* the FlashAttention view: the key tile shown, from 0 (a lesson's `tile = 1` is 0) */
    lesson_panels panels;  /* the stage list and side panel */
} lesson_view;

/* The view as a lesson first shows it: the weights of head 0, batch row 0. */
lesson_view lesson_view_default(void);

#define LESSON_MAX_HL 64

/* What a step marks on its picture, and the lines that set the view (for --check). */
typedef struct {
    lesson_hl_kind hl;     /* the current step's own highlight (not inherited) */
    int hl_index;          /* ROW / COL */
    int hl_cells[LESSON_MAX_HL][2];
    int n_hl_cells;
    int line[10];          /* line that last set stage, head, batch_row, view, compare, row, decode_step, highlight, layer,
                            * tile */
    int config_line;       /* line of the last config (not view) setting so far, 0: none (where a problem
                            * of the whole configuration is said) */
} lesson_marks;

/* Builds step `step` (0-based) into *cfg (initialised here; free it with
 * attn_config_free even on failure), *view and *marks (NULL: not wanted).
 * Returns 0, or -1 after adding a diagnostic for the first setting whose value
 * is invalid. */
int lesson_step_state(const lesson *ls, int step, attn_config *cfg, lesson_view *view, lesson_marks *marks,
                      lesson_diags *dg);

/* Runs step `step` through the engine as the player would (decode steps
 * included) and checks the view against the trace: stage produced, head, batch
 * row, highlight and bar-chart row in range, every quiz answerable. On success
 * *tr holds the trace (pass NULL to drop it). Returns 0 or -1 with diagnostics. */
int lesson_step_run(const lesson *ls, int step, attn_trace *tr, lesson_diags *dg);

/* Every step of a parsed lesson, as `attnlab lesson --check` does: in
 * order, one state carried from step to step, so the work grows with the
 * steps, not their square; the engine runs again only for a step that sets
 * the configuration or the decode step (the others change only the view). */
int lesson_check(const lesson *ls, lesson_diags *dg);

/* The work lesson_check did: settings applied (each step's once), engine
 * runs, and the tokenizers and model cards its measures read (each once)
 * (test_lesson counts them). */
typedef struct {
    long settings;
    long runs;
    long tokenizer_loads, card_loads;
} lesson_check_work;

/* lesson_check, adding its work to *work (when not NULL). */
int lesson_check_counted(const lesson *ls, lesson_diags *dg, lesson_check_work *work);

/* lesson_check a step at a time, for a caller that must not hold its thread
 * for the whole lesson (the single-threaded web page checks a step a frame):
 *
 *     lesson_checker c;
 *     lesson_checker_init(&c, ls, NULL, dg);
 *     while (lesson_checker_step(&c, dg)) {}   // one step a call; false when none is left
 *     int rc = lesson_checker_end(&c, dg);     // lesson_check's result; c freed
 *
 * end checks any step not yet checked, so init and end alone are lesson_check.
 * ls must outlive c. */
typedef struct {
    const lesson *ls;
    lesson_check_work *work;        /* NULL: not counted */
    attn_config cfg;                /* the state carried from step to step (when started) */
    lesson_view view;
    lesson_marks mk;
    attn_trace tr;                  /* the last run, shared by the steps that change only the view */
    struct lesson_measure_ref *refs; /* every measure with the step it measures on, in step order */
    lesson_measure_files files;     /* the tokenizers and cards they read, kept for the next */
    int n_refs, at;                 /* refs[at..): not yet measured */
    int next;                       /* the next step to check */
    int decode_step;                /* tr's */
    bool started, have, failed, broken, bad;
} lesson_checker;

void lesson_checker_init(lesson_checker *c, const lesson *ls, lesson_check_work *work, lesson_diags *dg);
bool lesson_checker_step(lesson_checker *c, lesson_diags *dg);
int lesson_checker_end(lesson_checker *c, lesson_diags *dg);

/* No step is checked after this (a check nobody waits for any more):
 * lesson_checker_end then only frees c, and returns -1. */
void lesson_checker_stop(lesson_checker *c);

#endif
