/* app_impl.h — what the app's own files (app*.c) share; no other module includes it.
 *
 * Who calls whom, top to bottom; each room calls only the ones below it
 * (tests/check_calls.py checks it with cflow):
 *   app_loop.c    the platform's loop between events (poll, pending) and the end (free, leave)
 *   app_input.c   keys, text and the mouse -> actions;
 *                 app_picture.c: a command line's picture (`attnlab render`'s flags) -> actions
 *   app_actions.c what an action does, and the lesson's (app_lesson.c), training's
 *                 (app_train.c), editor's (app_edit.c) and model's (app_model.c)
 *   app_fetch.c   the page's downloads an opening waits for (fetch.h; the desktop has none)
 *   app_job.c     requests: the worker, the newest settings asked, the one install call;
 *                 app_open.c: a lesson read, the models listed (taken in by app_loop.c)
 *   app.c         the state: settings, what is shown, planning and installing a trace */
#ifndef APP_IMPL_H
#define APP_IMPL_H

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

struct app_state;

/* What `c` does to the causal mask: on ⇄ off, and a reversed (pitfall) mask
 * is corrected to on. The compare view toggles it the same way. */
static inline attn_causal app_causal_toggled(attn_causal c)
{
    return c == ATTN_CAUSAL_OFF ? ATTN_CAUSAL_ON : c == ATTN_CAUSAL_ON ? ATTN_CAUSAL_OFF : ATTN_CAUSAL_ON;
}

/* What `i` does to the fill value of masked scores: −∞ ⇄ −1e9. */
static inline float app_fill_toggled(float mask_value)
{
    return isinf(mask_value) ? -1e9f : -INFINITY;
}

/* Recomputing (app.c), in three parts, so that the slow ones run on the
 * worker (app_job.c). app_plan_make reads the app on its own thread: what the
 * pictures shown hold, the inputs the run borrows, and whether the settings
 * next name a model other than the one loaded. app_plan_run, on any thread,
 * loads that model (model-sized files read, the tokenizer built) and makes
 * the config run for the decode step, within the budget; once made, calling
 * it again does nothing (the window makes it at once when no model is to be
 * loaded, so that a refusal is said at once and the decode step is known).
 * Once the trace exists, app_install (the app's thread again) installs it
 * with settings next and the plan's model, or none if next names none
 * (ownership moves); app_plan_free frees what is left. */
typedef struct {
    attn_inputs in;          /* borrowed from the app's trace or file; in.model: the model run */
    double held;             /* bytes the traces and pictures shown hold meanwhile */
    int traces;              /* traces made: 2 when the compare view's is made with it */
    int layer;               /* the layer shown (a long prompt keeps its attention weights) */
    int step;                /* the decode step asked (0: not decoding), clamped by app_plan_run */
    int decode_len;          /* decoding: tokens of the longest row */
    double budget;           /* bytes the settings may take */
    bool made;               /* app_plan_run has made the config run */
    char *load;              /* the model to load in place of the app's (owned); NULL: none */
    struct attn_model *model; /* loaded for it (owned until installed) */
    attn_model_variant variants[ATTN_MAX_VARIANTS]; /* its MHA / GQA / MQA / MLA variants */
    int n_variants;
    app_training train;      /* its training checkpoints (read with it, on the worker) */
} app_plan;
int app_plan_make(const struct app_state *app, const attn_config *next, int step, lesson_view_mode mode, app_plan *plan,
                  attn_error *err);
int app_plan_run(app_plan *plan, const attn_config *next, attn_config *run, attn_error *err);
void app_plan_free(app_plan *plan);
void app_install(struct app_state *app, attn_trace *tr, attn_config *next, app_plan *plan, attn_trace *alt);
/* The worker's trace tr (its first `layers` layers written), with its model
 * m (loaded under key) and settings next, shown in place of the app's own
 * while the worker goes on, borrowed (app->partial); app_partial_end puts the
 * app's own back, before the worker's are let go. Returns 0, or -1 when out
 * of memory (nothing changed). */
int app_partial_begin(struct app_state *app, const attn_trace *tr, struct attn_model *m, char *key,
                      const attn_config *next, int layers);
void app_partial_end(struct app_state *app);
/* All three here and now (app_edit_config, app_job.c, stops the worker
 * first): settings next (ownership moves in) planned, run and installed;
 * returns 0, or -1 with the status line saying why and next freed. */
int app_commit(struct app_state *app, attn_config *next);

/* Frees what the state holds: traces, settings, model (app_free, once
 * nothing under way reads it any more). */
void app_release(struct app_state *app);

/* The status line's message (app_status), about the parts of the view in
 * what (APP_ABOUT_*; app_status_about, app_job.c, records which). */
void app_vstatus(struct app_state *app, bool error, unsigned what, const char *fmt, va_list ap);

/* The status line says where the trace shown first holds a NaN or an
 * infinity that its data put there (nonfinite.h), if it does. nf: what the
 * worker found in it already; NULL: look now. */
void app_note_nonfinite(struct app_state *app, const attn_nonfinite *nf);

/* The compare view's trace (app.c): tr's inputs with the mask `compare` names
 * toggled, into alt; the worker runs it too. app_set_alt installs it (NULL:
 * none; ownership moves). app_alt_async starts it on the worker (app_job.c):
 * 0 when it did, -1 when it must be computed here. */
attn_status app_alt_run(const attn_trace *tr, const struct attn_model *model, int compare, attn_progress *progress,
                        attn_arena *arena,
                        attn_trace *alt, attn_error *err);
void app_set_alt(struct app_state *app, attn_trace *alt);
/* The compare view's trace computed here and now, and the scales reset (app.c).
 * app_install computes it so unless the app is async: then the compare
 * view waits for it and the caller asks the worker with app_alt_follow (app_job.c). */
void app_alt_here(struct app_state *app);
void app_alt_follow(struct app_state *app);
int app_alt_async(struct app_state *app);

/* A lesson step's view once its trace is shown: layer, stage, head, batch
 * row, bar-chart row (app.c). app_show_async asks the worker for the step's
 * settings cfg (freed) and that view (app_job.c); returns 0 once asked. */
void app_show_view(struct app_state *app, const lesson_view *view);
int app_show_async(struct app_state *app, attn_config *cfg, const lesson_view *view);

/* The worker (app_job.c): stops a recomputation under way and waits for it;
 * at the end of the program gives up on one that does not stop within
 * APP_JOB_QUIT_WAIT_MS, returning true when app must then be left as it is.
 * app_job_cancel only asks it to stop (at its next stage boundary) and
 * returns at once: quitting asks first, then closes the window meanwhile. */
#define APP_JOB_QUIT_WAIT_MS 60
void app_job_stop(struct app_state *app);
void app_job_cancel(struct app_state *app);
bool app_job_abandon(struct app_state *app);
/* The one install call (app_job.c): a finished recomputation's trace and
 * settings become the app's, or a newer request starts; true when the
 * picture changed. app_poll (app_loop.c) calls it each turn of the loop.
 * app_job_leave: the worker told to stop and left to the process's end. */
bool app_job_install(struct app_state *app);
void app_job_leave(struct app_state *app);

/* Opening a lesson or a model in the window (app.c; the reading, app_open.c):
 * with app->async, act(arg) is left for app_poll (app_loop.c), after a
 * frame has shown "opening label …"; returns true when it was left so, false
 * when the caller must do it now (no window, or it is being done). */
bool app_open_later(struct app_state *app, app_action act, int arg, const char *label);
/* In the window, the lesson at path is read and checked by a request to the
 * job service (jobs.h), then shown at step (app_poll takes it in). A read under way
 * is given up for the newer one. app_read_drop gives up the one under way
 * and a models' listing (the program ends: each frees itself when done). 0,
 * or -1 when out of memory. */
int app_read_lesson(struct app_state *app, const char *path, int step);
void app_read_drop(struct app_state *app);
/* o in the window: the shipped models are listed by a request of their own
 * (one listing at a time), and app_poll opens the next one once they
 * are. 0, or -1 when out of memory. */
int app_read_models(struct app_state *app);
/* What the loop takes in (app_loop.c's app_poll). app_read_take: the
 * lesson read, once it has been: 1 with it in the player and the step to
 * show in *step, -1 with the reason on the status line, 0 not yet (or none).
 * app_models_ready: the models are listed; app_models_listed then
 * gives their names (NULL with the reason on the status line), kept until
 * app_models_drop, which also gives up a listing under way. */
int app_read_take(struct app_state *app, int *step);
bool app_models_ready(const struct app_state *app);
const char *const *app_models_listed(struct app_state *app, int *n);
void app_models_drop(struct app_state *app);
/* What o opens next after model `now` (NULL: the built-in example) among the
 * models names (sorted), as the notice names it ("model tang"), into buf. */
void app_next_model_label(const char *now, const char *const *names, int n, char *buf, size_t size);
/* o with the models listed already (app_model.c): as app_next_model. */
int app_next_model_in(struct app_state *app, const char *const *names, int n);

/* The files of the models an opening needs, with a platform fetcher (fetch.h,
 * app_fetch.c). app_fetch_opening, for the pending opening once its notice is
 * on screen: 0 when they are here (or nothing is fetched), 1 while they
 * come (opening.fetching and .fetched say how far), -1 when one could not
 * be downloaded (the status line says so). app_fetch_later, for j and m:
 * true when act(arg) was left for app_poll, behind the notice `label`,
 * until model's files (its checkpoints) are here, or refused on the status
 * line; false: do it now. app_fetch_drop forgets the wait. */
int app_fetch_opening(struct app_state *app);
bool app_fetch_later(struct app_state *app, const char *model, bool checkpoints, app_action act, int arg,
                     const char *label);
void app_fetch_drop(struct app_state *app);

/* The lesson and picker actions (app_lesson.c). */
bool app_lesson_do(struct app_state *app, app_action act, int arg);

/* The training control's actions, APP_ACT_TRAIN_* (app_train.c). */
bool app_train_do(struct app_state *app, app_action act, int arg);

/* APP_ACT_CYCLE: setting i of the settings table steps to its next value (app_actions.c). */
bool app_cycle(struct app_state *app, int i);

/* Takes the player's message, if it left one, onto the status line. */
void app_take_note(struct app_state *app);

#endif
