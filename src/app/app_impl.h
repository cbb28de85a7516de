/* app_impl.h — what the app's own files (app*.c) share; no other module includes it.
 *
 * Who calls whom, top to bottom; each room calls only the ones below it
 * (tests/check_calls.py checks it with cflow):
 *   app_loop.c    the platform's loop between events (poll, pending) and the end (free, leave)
 *   app_input.c   keys, text and the mouse -> actions
 *   app_actions.c what an action does, and the lesson's (app_lesson.c), training's
 *                 (app_train.c), editor's (app_edit.c) and model's (app_model.c)
 *   app_job.c     requests: the worker, the newest settings asked, the one install call;
 *                 app_open.c: a lesson read, the models listed (taken in by app_loop.c)
 *   app.c         the state: settings, what is shown, planning and installing a trace */
#ifndef UI_APP_IMPL_H
#define UI_APP_IMPL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>

#include "action.h"
#include "engine/attention/attention.h"
#include "engine/model/model.h"
#include "engine/trace/config.h"
#include "engine/trace/nonfinite.h"
#include "engine/trace/trace.h"
#include "state.h"
#include "training.h"

struct ui_app;

/* What `c` does to the causal mask: on ⇄ off, and a reversed (pitfall) mask
 * is corrected to on. The compare view toggles it the same way. */
static inline attn_causal ui_causal_toggled(attn_causal c)
{
    return c == ATTN_CAUSAL_OFF ? ATTN_CAUSAL_ON : c == ATTN_CAUSAL_ON ? ATTN_CAUSAL_OFF : ATTN_CAUSAL_ON;
}

/* What `i` does to the fill value of masked scores: −∞ ⇄ −1e9. */
static inline float ui_fill_toggled(float mask_value)
{
    return isinf(mask_value) ? -1e9f : -INFINITY;
}

/* Recomputing (app.c), in three parts, so that the slow ones run on the
 * worker (app_job.c). ui_app_plan reads the app on its own thread: what the
 * pictures shown hold, the inputs the run borrows, and whether the settings
 * next name a model other than the one loaded. ui_plan_run, on any thread,
 * loads that model (model-sized files read, the tokenizer built) and makes
 * the config run for the decode step, within the budget; once made, calling
 * it again does nothing (the window makes it at once when no model is to be
 * loaded, so that a refusal is said at once and the decode step is known).
 * Once the trace exists, ui_app_install (the app's thread again) installs it
 * with settings next and the plan's model, or none if next names none
 * (ownership moves); ui_plan_free frees what is left. */
typedef struct {
    attn_inputs in;          /* borrowed from the app's trace or file; in.model: the model run */
    double held;             /* bytes the traces and pictures shown hold meanwhile */
    int traces;              /* traces made: 2 when the compare view's is made with it */
    int layer;               /* the layer shown (a long prompt keeps its attention weights) */
    int step;                /* the decode step asked (0: not decoding), clamped by ui_plan_run */
    int decode_len;          /* decoding: tokens of the longest row */
    double budget;           /* bytes the settings may take */
    bool made;               /* ui_plan_run has made the config run */
    char *load;              /* the model to load in place of the app's (owned); NULL: none */
    struct attn_model *model; /* loaded for it (owned until installed) */
    attn_model_variant variants[3]; /* its MHA / GQA / MQA variants */
    int n_variants;
    ui_training train;       /* its training checkpoints (read with it, on the worker) */
} ui_plan;
int ui_app_plan(const struct ui_app *app, const attn_config *next, int step, lesson_view_mode mode, ui_plan *plan,
                attn_error *err);
int ui_plan_run(ui_plan *plan, const attn_config *next, attn_config *run, attn_error *err);
void ui_plan_free(ui_plan *plan);
void ui_app_install(struct ui_app *app, attn_trace *tr, attn_config *next, ui_plan *plan, attn_trace *alt);
/* All three here and now (ui_app_edit_config, app_job.c, stops the worker
 * first): settings next (ownership moves in) planned, run and installed;
 * returns 0, or -1 with the status line saying why and next freed. */
int ui_app_commit(struct ui_app *app, attn_config *next);

/* Frees what the state holds: traces, settings, model (ui_app_free, once
 * nothing under way reads it any more). */
void ui_app_release(struct ui_app *app);

/* The status line's message (ui_app_status), about the parts of the view in
 * what (UI_ABOUT_*; ui_app_status_about, app_job.c, records which). */
void ui_app_vstatus(struct ui_app *app, bool error, unsigned what, const char *fmt, va_list ap);

/* The status line says where the trace shown first holds a NaN or an
 * infinity that its data put there (nonfinite.h), if it does. nf: what the
 * worker found in it already; NULL: look now. */
void ui_app_note_nonfinite(struct ui_app *app, const attn_nonfinite *nf);

/* The compare view's trace (app.c): tr's inputs with the mask `compare` names
 * toggled, into alt; the worker runs it too. ui_app_set_alt installs it (NULL:
 * none; ownership moves). ui_app_alt_async starts it on the worker (app_job.c):
 * 0 when it did, -1 when it must be computed here. */
attn_status ui_app_alt_run(const attn_trace *tr, const struct attn_model *model, int compare, attn_progress *progress,
                           attn_arena *arena,
                           attn_trace *alt, attn_error *err);
void ui_app_set_alt(struct ui_app *app, attn_trace *alt);
/* The compare view's trace computed here and now, and the scales reset (app.c).
 * ui_app_install computes it so unless the app is async: then the compare
 * view waits for it and the caller asks the worker with ui_app_alt_follow (app_job.c). */
void ui_app_alt_here(struct ui_app *app);
void ui_app_alt_follow(struct ui_app *app);
int ui_app_alt_async(struct ui_app *app);

/* A lesson step's view once its trace is shown: layer, stage, head, batch
 * row, bar-chart row (app.c). ui_app_show_async asks the worker for the step's
 * settings cfg (freed) and that view (app_job.c); returns 0 once asked. */
void ui_app_show_view(struct ui_app *app, const lesson_view *view);
int ui_app_show_async(struct ui_app *app, attn_config *cfg, const lesson_view *view);

/* The worker (app_job.c): stops a recomputation under way and waits for it;
 * at the end of the program gives up on one that does not stop within
 * UI_JOB_QUIT_WAIT_MS, returning true when app must then be left as it is.
 * ui_app_job_cancel only asks it to stop (at its next stage boundary) and
 * returns at once: quitting asks first, then closes the window meanwhile. */
#define UI_JOB_QUIT_WAIT_MS 60
void ui_app_job_stop(struct ui_app *app);
void ui_app_job_cancel(struct ui_app *app);
bool ui_app_job_abandon(struct ui_app *app);
/* The one install call (app_job.c): a finished recomputation's trace and
 * settings become the app's, or a newer request starts; true when the
 * picture changed. ui_app_poll (app_loop.c) calls it each turn of the loop.
 * ui_app_job_leave: the worker told to stop and left to the process's end. */
bool ui_app_job_install(struct ui_app *app);
void ui_app_job_leave(struct ui_app *app);

/* Opening a lesson or a model in the window (app.c; the reading, app_open.c):
 * with app->async, act(arg) is left for ui_app_poll (app_loop.c), after a
 * frame has shown "opening label …"; returns true when it was left so, false
 * when the caller must do it now (no window, or it is being done). */
bool ui_app_open_later(struct ui_app *app, ui_action act, int arg, const char *label);
/* In the window, the lesson at path is read and checked by a request to the
 * job service (jobs.h), then shown at step (ui_app_poll takes it in). A read under way
 * is given up for the newer one. ui_app_read_drop gives up the one under way
 * and a models' listing (the program ends: each frees itself when done). 0,
 * or -1 when out of memory. */
int ui_app_read_lesson(struct ui_app *app, const char *path, int step);
void ui_app_read_drop(struct ui_app *app);
/* o in the window: the shipped models are listed by a request of their own
 * (one listing at a time), and ui_app_poll opens the next one once they
 * are. 0, or -1 when out of memory. */
int ui_app_read_models(struct ui_app *app);
/* What the loop takes in (app_loop.c's ui_app_poll). ui_app_read_take: the
 * lesson read, once it has been: 1 with it in the player and the step to
 * show in *step, -1 with the reason on the status line, 0 not yet (or none).
 * ui_app_models_ready: the models are listed; ui_app_models_listed then
 * gives their names (NULL with the reason on the status line), kept until
 * ui_app_models_drop, which also gives up a listing under way. */
int ui_app_read_take(struct ui_app *app, int *step);
bool ui_app_models_ready(const struct ui_app *app);
const char *const *ui_app_models_listed(struct ui_app *app, int *n);
void ui_app_models_drop(struct ui_app *app);
/* What o opens next after model `now` (NULL: the built-in example) among the
 * models names (sorted), as the notice names it ("model tang"), into buf. */
void ui_app_next_model_label(const char *now, const char *const *names, int n, char *buf, size_t size);
/* o with the models listed already (app_model.c): as ui_app_next_model. */
int ui_app_next_model_in(struct ui_app *app, const char *const *names, int n);

/* The lesson and picker actions (app_lesson.c). */
bool ui_app_lesson_do(struct ui_app *app, ui_action act, int arg);

/* The training control's actions, UI_ACT_TRAIN_* (app_train.c). */
bool ui_app_train_do(struct ui_app *app, ui_action act, int arg);

/* UI_ACT_CYCLE: setting i of the settings table steps to its next value (app_actions.c). */
bool ui_app_cycle(struct ui_app *app, int i);

/* Takes the player's message, if it left one, onto the status line. */
void ui_app_take_note(struct ui_app *app);

#endif
