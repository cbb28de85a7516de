/* app.h — the visualizer's state and the calls that change it. No SDL.
 *
 * The main loop has four beats (microui's): input_sdl.c turns SDL events into
 * the entry points below (app_key, app_mouse_down, ...), which change
 * this state and recompute the trace when a setting changes; draw_frame
 * (render.h) builds a frame from the state and records where its buttons and
 * cells are in `layout`, and the backend draws it (sdl_render, gfx.h); the window loop carries out the app's requests
 * (`req`: text input, clipboard, fullscreen, saving) and presents. The app
 * never draws, and the renderer never changes what is shown.
 *
 * app.c holds the state and its recomputation, app_actions.c what an action
 * does, app_input.c keys and the mouse, app_edit.c the token editor,
 * app_model.c a trained model's variants, predictions and generation. */
#ifndef APP_H
#define APP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "action.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"
#include "fetch.h"
#include "heatmap.h"
#include "jobs.h"
#include "keys.h"
#include "layout.h"
#include "player.h"
#include "state.h"
#include "training.h"

#include "engine/model/model.h"

#define APP_EDIT_MAX 1024
#define APP_LOSS_INLINE_NUMBERS ((size_t)2 << 20)

/* The token editor (app_edit.c): the sentence, and for cross-attention the source. */
typedef struct {
    bool open;
    int field;            /* 0: tokens, 1: source tokens (cross-attention) */
    char text[2][APP_EDIT_MAX];
    int cursor;           /* byte offset in text[field] */
    char compose[128];    /* IME composition in progress */
} app_token_editor;

/* A text's loss under a trace: mean −log p of each next token over the
 * positions counted (attn_trace_loss). known: computed. */
typedef struct {
    double mean;
    int counted;
    bool known;
} app_loss;

/* What a save writes: the picture, or the matrix shown as numbers. */
typedef enum { APP_SAVE_PNG, APP_SAVE_SVG, APP_SAVE_PDF, APP_SAVE_CSV, APP_SAVE_KINDS } app_save_kind;

/* What the app asks of the window loop (window.c), which carries it out. */
typedef struct {
    bool quit;
    bool save;            /* save the next frame (or its matrix) ... */
    app_save_kind save_kind; /* ... as this */
    bool fullscreen;      /* wanted: the window follows when it differs */
    bool paste;           /* the token editor wants the clipboard's text (app_paste) */
    int exit_code;        /* with quit: not 0 when the program ends on an error (the status line says it) */
} app_requests;

typedef struct app_state {
    /* what is computed */
    attn_config cfg;      /* the settings the controls edit (owned) */
    attn_trace trace;     /* computed from cfg, or loaded (owned) */
    attn_trace alt;       /* compare view: cfg with one mask toggled (owned when has_alt) */
    bool has_alt;
    attn_status alt_status; /* compare view without has_alt: why its trace was not made (ATTN_ERR_NOMEM:
                             * over the budget beside the trace shown), else ATTN_OK */
    attn_trace file;      /* view FILE: the loaded trace, whose tensors feed recomputation */
    bool from_file;
    char *file_path;
    attn_model *model;    /* the trained model cfg.model names, loaded once (owned); NULL: none */
    attn_arena *arena;    /* lends the arenas of the traces computed for it (arena.h): a toggle
                           * reuses the memory of the trace it replaces; freed after them. On the
                           * heap, as a worker left running at exit may still take from it; NULL
                           * when out of memory (each trace then its own) */
    char *model_key;      /* the cfg.model it was loaded for */
    attn_model_variant variants[ATTN_MAX_VARIANTS]; /* its MHA / GQA / MQA / MLA variants (m switches),
                                                     * n_variants of them */
    int n_variants;
    app_training train;   /* its training checkpoints and metrics.json (training.h); train.n = 0: none */
    int train_metric;     /* the measure the training panel's small multiples plot (attn_metric) */
    app_scale *scales;    /* per tensor of trace, then of alt */
    app_loss *losses;     /* per batch row of trace, then of alt: the text's loss (app_loss_of) */
    unsigned trace_serial, losses_serial; /* bumped when trace is replaced; the trace losses are of */
    size_t loss_inline;   /* logits a loss may read on this thread (~10 ms: every shipped model's text) */
    unsigned generation;  /* bumped whenever trace or alt changes (render caches key on it) */

    /* what is shown */
    lesson_view view;     /* stage (always one of trace), head, batch row, bar-chart row, mode, compare, decode step */
    bool help;
    bool quit_confirm;    /* "Quit attnlab?" asked (q with a lesson open): q or Enter quits, Esc stays */
    struct {
        bool open;        /* the save dialog (S): PNG, SVG, PDF or CSV */
        int choice;       /* the kind highlighted */
    } save_menu;
    bool scale_head;      /* the single and compare views colour by the shown head's own range */
    bool vocab_heatmap;   /* logits and probs as the full heatmap (y), not ranked (plot_ranked.c) */
    bool present;         /* presenter mode: fullscreen, large text, the toolbar hidden ... */
    bool toolbar_shown;   /* ... until the mouse moves (a key hides it again) */
    float font_before;    /* the text size to go back to when presenter mode ends */
#define APP_PRESENT_FONT_SCALE 1.5f /* presenter mode's text size, at least */
    int decode_len;       /* decoding: tokens of the longest row */
    int trace_step;       /* decode step the trace was computed for (0: not decoding) */
    struct {              /* what ] wrote (app_model.c), for the text strip */
        char *prompt;     /* the token list generating started from (owned); NULL: nothing written */
        char *text;       /* the token list the last ] asked for (owned) */
#define APP_GEN_QUEUE_MAX 64
        bool end_said;    /* ] once at the text's end: the status line said so; ] again starts the next */
        int queued;       /* ] pressed while a token was computing: each writes one more once it is in
                           * (app_poll), until the text's end */
    } gen;

    struct {              /* opening a lesson or a model (app_open.c): a frame says so before the work */
        bool pending;     /* asked; app_poll does it once a frame has shown the notice */
        bool shown;       /* a frame with the notice was drawn (draw_commit) */
        bool running;     /* being done now: what it calls opens at once */
        app_action act;   /* APP_ACT_PICK (arg: the picker's lesson), APP_ACT_LESSON_RESTORE (arg: the
                           * open lesson's step to show), APP_ACT_MODEL_NEXT, APP_ACT_NONE: the
                           * lesson at path, at step arg */
        int arg;
        char path[PATH_MAX];
        int fail_exit;    /* not 0: if that lesson cannot be opened, the program ends with this
                           * status (req.exit_code) and the status line's message */
        char label[200];  /* what opens ("lesson 12 · Trained heads"); kept while the worker computes it */
        struct app_lesson_read *reading; /* the lesson at path being read and checked on a thread of its
                                         * own, to be shown at step arg (app_open.c); NULL: none */
        struct app_model_names *models; /* o: the shipped models being listed on a thread (app_open.c) */
        bool first;       /* nothing opened yet (app_init_later): the frame shows the notice alone, and
                           * only the keys that need no picture act, until the settings are shown */
        bool has_cfg;     /* cfg opens once the notice is on screen (app_init_later) */
        attn_config cfg;  /* owned while has_cfg */
        struct app_fetch_wait *waiting; /* the models it needs, downloaded first (app_fetch.c); NULL: none */
        char fetching[64];  /* the model being downloaded ("": none), and how far: the notice shows it */
        app_fetch_progress fetched;
    } opening;

    struct {              /* the first picture shown layer by layer while the worker traces the rest (app_job.c) */
        bool on;          /* trace, model and cfg are the worker's, borrowed: read only, and only the
                           * layers ready (app_tensor_ready); the app's own are kept below meanwhile */
        int layers;       /* layers ready: every stage of layers 0 .. layers − 1 written */
        int want;         /* the layer asked for before it was traced (app_init_later's, or . past the
                           * ready ones): shown once it is; −1 none. Kept while off, until the worker ends */
        attn_trace trace;
        struct attn_model *model;
        char *model_key;
        attn_config cfg;
    } partial;

    app_token_editor edit;
    app_player lesson;    /* the lesson panel and picker (player.h) */

    /* presentation */
    float font_scale;     /* 1 = 16 px at 96 dpi */
    float pixel_ratio;    /* drawable pixels per window point (HiDPI) */
    int width, height;    /* drawable pixels: the visualizer's part (the window minus the lesson panel) */
    int full_width, full_height; /* the whole window */
    int mouse_x, mouse_y; /* drawable pixels; -1: outside */
    int hover_area, hover_i, hover_j; /* cell under the mouse (area index, the stage's row and column), -1: none */
    int tile_step;        /* the FlashAttention view: the key tile after which m, ℓ and the output are shown */
    int geom_hover;       /* the geometry view's query arrow under the mouse, -1: none */
    struct {
        int level;              /* the single view 2^level times closer (0: the whole picture) */
        int i0, j0;             /* the window's top-left cell */
        int rows, cols;         /* a lesson's window of exactly rows × cols cells (its quiz's region), in
                                   place of level's; 0: none */
        bool dragging;          /* the left button went down on the zoomed picture */
        int drag_x, drag_y, drag_i0, drag_j0; /* where, and the window then */
        int drag_i, drag_j;     /* the cell pressed, when the press picked it for a cell quiz; -1: none */
        bool drag_graded;       /* and whether the quiz was graded before it */
    } zoom;
    int stage_scroll;     /* first stage shown in the navigator */
    bool menu_open;       /* the toolbar's overflow menu */
    int lesson_width;     /* the lesson panel's width in drawable pixels as the student set it (0: the default) */
    bool divider_drag;    /* the line between picture and lesson is being dragged */
    int hover_hit;        /* the hit under the mouse that has a tooltip, -1: none */
    struct {              /* a finger on the screen (app_touch_*) */
        bool down;
        bool dragging;    /* it moved past APP_TOUCH_SLOP: a drag, no longer a tap */
        int x0, y0;       /* where it went down */
        int what;         /* what its drag moves (app_input.c's touch_target) */
        int scroll0;      /* that scroll when it went down */
    } touch;
    bool web;             /* the web page: the help leaves out what only the desktop does (q, --memory-gib) */

    char status[400];     /* last message (an error from a change, a saved file) */
    bool status_error;
    bool status_nonfinite; /* the message is where the trace's NaN begins (app_note_nonfinite) */
    struct {              /* what of the view the message is about (app_status_about) */
        unsigned what;    /* APP_ABOUT_* bits; 0: not about the view, shown until the next message */
        int layer, head, batch;
        char stage[ATTN_MAX_NAME];
    } status_about;

    bool async;           /* toggles recompute on a worker (the window); else at once */
    const app_jobs *jobs; /* the platform's job service the worker and readers run on (jobs.h), set
                           * before the first request; NULL: none, each runs here and now */
    const app_fetcher *fetch; /* the platform's fetcher of shipped models' files (fetch.h); NULL: all on disk */
    struct app_job *job;  /* that worker's recomputation, NULL when none (app_job.c) */

    app_layout layout;    /* written by draw_frame, read by the entry points */
    app_requests req;
    bool dirty;           /* a redraw is needed */
} app_state;

/* Computes cfg (copied) and opens on the weights stage. Returns 0, or the
 * engine's status with a one-line message in err: ATTN_ERR_CONFIG for the
 * settings themselves, another for a file they name (a model's folder). */
int app_init(app_state *app, const attn_config *cfg, char *err, size_t errsize);
/* The same, watched (attention.h's attn_progress; NULL: not watched): the
 * model's weights read and its layers traced, for a command's progress line. */
int app_init_watched(app_state *app, const attn_config *cfg, attn_progress *watch, char *err, size_t errsize);
/* The same for a window that opens at once: the built-in example is
 * computed under it (what the state needs), and cfg (copied) opens on the
 * worker once a frame has shown the notice (app_poll), the frame showing
 * only that and its progress until then; if it cannot be opened the program
 * ends with the message (app->req). layer: the one to show (0 the first; below
 * the model's count, which the caller checks), shown as soon as it is traced,
 * before the layers after it. Fails only for want of memory. */
int app_init_later(app_state *app, const attn_config *cfg, int layer, char *err, size_t errsize);
/* Opens a saved trace (attnlab's or another program's in the same contract).
 * Of flags (the command line's settings; NULL: the defaults) memory_gib
 * applies: the file's widened tensors (F16, BF16) must fit its budget, and so
 * must what a change recomputes. */
int app_init_file_with(app_state *app, const char *path, const attn_config *flags, char *err, size_t errsize);
int app_init_file(app_state *app, const char *path, char *err, size_t errsize);
void app_free(app_state *app);

/* ---- input (app_input.c): every entry point returns true when the picture must be redrawn */

bool app_key(app_state *app, int key, int mods);       /* key: APP_KEY_* or a character; mods: APP_MOD_* */
bool app_text(app_state *app, const char *utf8);       /* typed text */
bool app_compose(app_state *app, const char *utf8);    /* IME composition in progress ("" ends it) */
bool app_paste(app_state *app, const char *utf8);      /* the clipboard's text, after req.paste */
bool app_mouse_move(app_state *app, int x, int y);     /* drawable pixels */
bool app_mouse_leave(app_state *app);
bool app_mouse_down(app_state *app, int x, int y);     /* the left button */
bool app_mouse_drag(app_state *app, int x, int y);     /* moved with the left button held: pans a zoomed picture */
bool app_mouse_up(app_state *app);                     /* the left button let go */
bool app_wheel(app_state *app, int dy);                /* dy > 0: away from the user; over a heatmap it zooms */
bool app_exposed(app_state *app);                      /* the window was resized, shown or uncovered */
/* One finger (the page's touch events, SDL's finger events), in drawable
 * pixels. A tap (lifted within APP_TOUCH_SLOP CSS pixels of where it went
 * down) is a click there; a drag scrolls the lesson text, its docked quiz or
 * the picker's list, pans a zoomed picture or moves the divider, and clicks
 * nothing. What is under the finger shows while it is down (a cell's
 * explanation, a tooltip) and leaves when it lifts. Cancel: lifted without a tap. */
#define APP_TOUCH_SLOP 10
bool app_touch_down(app_state *app, int x, int y);
bool app_touch_move(app_state *app, int x, int y);
bool app_touch_up(app_state *app);
bool app_touch_cancel(app_state *app);
/* Whether typed text is wanted (the token editor, a lesson's numeric answer): the window starts text input then. */
bool app_wants_text(const app_state *app);

/* ---- actions (app_actions.c) */

/* Performs an action (what a key or a button does). Returns true on a change. */
bool app_do(app_state *app, app_action act, int arg);

/* ---- settings and view (app.c) */

/* Every change of settings goes through here. The settings to run, `next`, are
 * a copy of app->cfg that belongs to app_edit_config: change(next, arg,
 * err) edits it in place (it may free and replace next's strings, must not keep
 * pointers into it) and returns 0, or -1 with err set to leave everything as
 * it was. Then next runs: on success it becomes app->cfg (the trace, the
 * compare trace and the scales follow); on failure it is freed, the status line
 * says why and nothing changes. change NULL recomputes the same settings.
 * Returns 0 or -1. */
typedef int (*app_config_change)(attn_config *next, const void *arg, attn_error *err);
int app_edit_config(app_state *app, app_config_change change, const void *arg);

/* The same in the background when app->async (app_job.c): next runs on a
 * worker thread while the window keeps drawing the last picture and answering
 * keys; app_poll installs it when it is done. A newer request cancels an
 * older one still running. change applies to the newest settings asked for
 * (app_settings). Returns 0 once the request is made, or -1 if change refused. */
int app_edit_config_async(app_state *app, app_config_change change, const void *arg);
/* Settings cfg (copied) in place of all of them, as app_edit_config_async. */
int app_open_settings(app_state *app, const attn_config *cfg);

/* The newest settings: those being computed, else app->cfg; and the newest
 * decode step the same way (the view keeps the step shown until it is installed). */
const attn_config *app_settings(const app_state *app);
int app_newest_step(const app_state *app);
int app_newest_layer(const app_state *app);

/* Settings change(arg) for decode step `step` (0: the full pass): on the
 * window's worker when app->async, the step shown staying until its trace is
 * installed; else at once. Returns as app_edit_config_async. */
int app_edit_config_step(app_state *app, app_config_change change, const void *arg, int step);

/* The window's worker recomputing for layer `layer`'s attention weights (a
 * long prompt keeps one layer's), the view moving to it once installed. Only
 * with app->async. Returns as app_edit_config_async. */
int app_layer_async(app_state *app, int layer);

/* Moves the view to layer `layer` of the trace shown, on `stage` there (a
 * name with or without its layer; else that layer's first), without recomputing. */
void app_show_layer(app_state *app, int layer, const char *stage);

/* Whether a recomputation is under way; if so, where it is (layer, stage id)
 * and for how long it has run, in ms. */
bool app_busy(const app_state *app, int *layer, int *stage, double *ms);

/* Where the recomputation under way is, for a progress bar: its phase (a
 * model read, its tokenizer built, its layers traced), how far in it, and
 * the time it has taken and, once it can be told, the time left. */
typedef struct {
    int phase;                /* attn_phase (attention.h) */
    int layer, layers;        /* tracing: the layer being computed, of this many */
    double bytes_done, bytes_total; /* reading: bytes of the weights checked, of all */
    double fraction;          /* of the phase, 0 .. 1 */
    double ms;                /* since the request started */
    double left_ms;           /* the phase's time left, estimated; < 0: not known yet */
} app_progress;
bool app_progress_now(const app_state *app, app_progress *p);

/* Whether the worker runs at all: a recomputation, or the losses of the
 * trace shown (which app_busy leaves out); app_poll collects it. */
bool app_job_running(const app_state *app);

/* Installs a finished recomputation (and starts the next one asked for).
 * Returns true when the picture changed. */
bool app_poll(app_state *app);

/* Whether the window loop must come back soon without an event: the worker
 * computes, an opening waits for its first frame or a lesson is being read
 * (app_open.c), or progress is being saved. */
bool app_pending(const app_state *app);

/* Whether app_free gave up waiting for a recomputation (quitting at once),
 * or app_leave was called: then the program must end with _exit, not
 * exit, since the worker may still run. */
bool app_job_abandoned(void);

/* Instead of app_free when the program ends (the window's quit): the
 * worker is told to stop and not waited for, and nothing is freed — freeing
 * a large trace alone takes a few hundred ms, and the process's end reclaims
 * it all at once. The app's memory stays reachable (no leak to report). */
void app_leave(app_state *app);

/* Replaces settings and view at once (a lesson step): cfg's ownership moves
 * in (it is freed on failure too). Returns 0, or -1 with the status line saying
 * why (nothing changes). */
int app_show(app_state *app, attn_config *cfg, const lesson_view *view);

/* Changes one setting by its config name and recomputes (on the worker in
 * the window, as app_edit_config_async); on an invalid value nothing
 * changes and the status line says why. Returns 0 or -1. */
int app_set(app_state *app, const char *key, const char *value);

/* Moves to a stage by name; returns 0, or -1 if the trace has no such stage. */
int app_set_stage(app_state *app, const char *name);

/* Recomputes the compare view's trace (after the view mode or the toggle changed). */
void app_refresh_alt(app_state *app);

/* The tensor of the current stage, and its index in trace.tensors. */
const attn_tensor *app_tensor(const app_state *app);
int app_stage(const app_state *app);

/* Whether tensor i of the trace is in the viewed layer: its layer is
 * view.layer, or it is model-level (−1). A single-layer trace: all of them. */
bool app_in_layer(const app_state *app, int i);
/* Whether tensor i of the trace shown holds its numbers: always, but while
 * the first picture is shown layer by layer (app->partial), where only the
 * embeddings and the layers ready do. */
bool app_tensor_ready(const app_state *app, int i);

/* Moves the view to layer `layer` (0 .. n_layers−1), on the same stage there
 * when that layer has it. Returns 0, or -1 when there is no such layer. */
int app_set_layer(app_state *app, int layer);
/* The layer asked for before it was traced (app->partial.want), shown once it
 * is: in the layers ready of a trace being made, or in the whole trace. */
void app_show_wanted_layer(app_state *app);

/* Whether the grid view is the overview of every layer × every head: a
 * trace of several layers, on a stage of one layer with a query-head axis,
 * and heads (another program's trace may have h = 0: the grid says so). */
bool app_overview(const app_state *app);

static inline bool app_decoding(const app_state *app)
{
    return app->view.decode_step > 0;
}

/* The stage that the compare view shows, by its name in the trace (in the
 * viewed layer): the current one if the catalogue says its difference means
 * something (weights, weights_dropout, context), else weights. Returns buf. */
const char *app_compare_stage(const app_state *app, char *buf, size_t size);

/* Name of what the compare view toggles ("causal mask", "padding mask", "fill value"). */
const char *app_compare_name(int t);

/* Whether the compare view offers toggle t as a chip: the masks always (causal,
 * padding, fill, window); another setting (ALiBi, soft-capping, QK-norm, the
 * sink, the kept first keys) while it is in use in the trace shown, or the
 * kept first keys beside a window, or when t is the toggle shown (t reaches
 * every one). */
bool app_compare_offered(const app_state *app, int t);

/* Scale of tensor t (of trace or alt), computed once per trace. */
app_scale app_scale_of(const app_state *app, const attn_tensor *t);

/* The loss of batch row `batch` of tr (the trace or alt), computed once per
 * trace. A model's loss reads every row of its logits, which a traced pass
 * leaves to be computed when read (head.h): seconds for a long text on a
 * large vocabulary. So it is computed here only when cheap (s · V logits up
 * to app->loss_inline) or the app is not async; else the trace's is the
 * worker's, started by app_poll once the trace is shown, and until then
 * it is not known. */
app_loss app_loss_of(const app_state *app, const attn_trace *tr, int batch);

/* The trace shown has losses to compute on the worker. */
bool app_losses_wanted(const app_state *app);

/* Every batch row's loss of tr (tr->dims.b entries, malloc'd; NULL without
 * a model or memory, or once *cancel is set). */
app_loss *app_trace_losses(const attn_trace *tr, const atomic_int *cancel);

/* Hands losses (tr->dims.b entries, or NULL) of tr, the trace or alt, to the app. */
void app_take_losses(app_state *app, const attn_trace *tr, const app_loss *losses);

/* "attnlab - weights - head 0 - batch row 0": the window title (ASCII), then
 * " - decoding", " - key tile J of T" in the FlashAttention view, " - experts
 * of layer L" in the expert view, " - lesson step N/M" as they apply. */
const char *app_title(const app_state *app, char *buf, size_t size);

/* Sets the status line (printf-style); error colours it. */
void app_status(app_state *app, bool error, const char *fmt, ...);

/* A message about what is shown ("layer 2 of 4"): it holds only while the
 * view is still there, in the parts `what` names (the layer as asked,
 * app_newest_layer; the head, batch row and stage as shown now). */
enum { APP_ABOUT_LAYER = 1, APP_ABOUT_HEAD = 2, APP_ABOUT_BATCH = 4, APP_ABOUT_STAGE = 8 };
void app_status_about(app_state *app, unsigned what, const char *fmt, ...);

/* The status line's message, "" once the view has left what it was about
 * (a click in the grid opened another layer): the line then shows its hint. */
const char *app_status_text(const app_state *app);

/* ---- lessons (app_lesson.c): the app drives the player and shows its steps */

/* Opens a lesson at step (0-based). A lesson with problems is refused with the
 * first one as "FILE:LINE: message" in err. Returns 0 or -1. In the window
 * (async) it is only asked here and done after a frame that says so
 * (app_open.c): then a problem goes to the status line. */
int app_lesson_open(app_state *app, const char *path, int step, char *err, size_t errsize);
/* Shows step (0-based) of the open lesson; returns 0, or -1 with the status line saying why. */
int app_lesson_go(app_state *app, int step);
/* Opens the lesson picker; returns 0, or -1 with the status line saying why. */
int app_lesson_picker(app_state *app);

/* ---- a trained model (app_model.c) */

/* Loads the model `name` names unless it is the one loaded (NULL: none).
 * Returns 0, or -1 with err set. */
int app_model_sync(app_state *app, const char *name, attn_error *err);

/* The query row the next-token panel shows: the selected row, else the last
 * real token of the batch row. */
int app_query_row(const app_state *app);

/* The single view's zoomed window on a rows × cols slice: its top-left cell
 * and size. False (the whole slice) when not zoomed, and in the grid and the
 * compare view, which always show the whole picture. A lesson step whose cell
 * quiz names a region opens zoomed to it (app_zoom_to); the wheel, a drag
 * and z then work as anywhere. */
bool app_zoom_window(const app_state *app, int rows, int cols, int *i0, int *j0, int *wr, int *wc);
/* Zooms the single view to the stage's rows i0..i1 and columns j0..j1 (both
 * included) while a lesson is open; i1 < 0: every row, j1 < 0: every column
 * (both: the whole picture, no zoom). */
void app_zoom_to(app_state *app, int i0, int i1, int j0, int j1);

/* One of the most likely next tokens. */
typedef struct {
    int id;
    float p;
    char text[64]; /* the token as a label shows it (attn_tokenizer_label) */
} app_prediction;

/* The k most likely next tokens at (batch, row) of tr's probs, best first,
 * among the ids that are tokens (a vocab_size larger than the tokenizer
 * leaves ids that are none); returns how many (0 when tr is not a model's trace). */
int app_predictions(const app_state *app, const attn_trace *tr, int batch, int row, app_prediction *out, int k);

/* m in model mode: the next of the model's MHA, GQA and MQA variants. */
int app_next_variant(app_state *app);

/* o: the next shipped model (attn_model_list's order) on its example text;
 * after the last, the built-in example with seeded weights. */
int app_next_model(app_state *app);

/* j / J and the training panel: the model as saved at training position at
 * (0 .. train.n; train.n: the final model), loaded on the window's worker; the
 * text, layer, head, stage, rows and masks stay. Returns 0, or -1 with the
 * status line saying why (a model without checkpoints). app_train_newest:
 * the position asked for last (maybe still loading), -1 when none. */
int app_train_go(app_state *app, int at);
int app_train_newest(const app_state *app);
/* The model's name as shown: a checkpoint's is its model's ("tang", not "step400"). */
const char *app_model_name(const app_state *app);

/* ] at the end of a model's text (at its last decode step, or outside decode
 * mode): appends the next token, chosen with cfg's temperature, top_k and
 * allow_unk (never <unk> by default), and steps onto it in decode mode. After
 * the model's EOS (</s>) the text has ended: ] then starts the next one from
 * the BOS alone, as every text of the training data began. */
int app_generate(app_state *app);
/* What app_poll calls once nothing computes: the next ] pressed meanwhile, if any. */
void app_generate_queued(app_state *app);

/* How many tokens of batch row 0 of the text shown were the prompt, when ]
 * wrote the rest (BOS included); -1 when the text is not one ] wrote. */
int app_prompt_len(const app_state *app);

/* ---- the token editor (app_edit.c) */

void app_edit_start(app_state *app, int field);  /* field 1: the source sentence, empty */
void app_edit_stop(app_state *app);
/* A key while the editor is open; true when the editor took it. */
bool app_edit_key(app_state *app, int key, int mods);
void app_edit_insert(app_state *app, const char *text);

#endif
