/* app_job.c — recomputing away from the frame, so the window never freezes.
 *
 * One worker at a time, a request to the platform's job service (jobs.h: a
 * thread on the desktop; without one it runs here and now). The main thread
 * plans the run (app_plan_make: inputs borrowed from the trace shown, the
 * budget) and starts the worker, which
 * loads the model the settings name if it is not the one shown, makes the
 * config run (app_plan_run), runs attn_trace_run into its own trace and sets
 * `done`. The main thread never touches what the worker reads until it is
 * joined: the trace shown, the model and the loaded file stay as they are,
 * and a recomputation here and now (app_edit_config without the window)
 * stops the worker first. app_job_install, the one way a result comes
 * back (the loop's app_poll calls it), joins a finished worker and
 * installs its trace and model, unless a newer request came meanwhile: then
 * that one starts instead.
 *
 * The requests that change the settings or the view live here too (the
 * edits, a lesson step's settings, a layer or stage on demand), and the
 * status line about the view as asked: all of them read the newest request. */
#include "app.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_impl.h"
#include "engine/attention/ops.h"
#include "engine/base/clock.h"
#include "engine/run/forward.h"
#include "i18n.h"
#include "view.h"

/* What a request computes for, and where the view goes once it is installed. */
typedef struct {
    int step;                /* the decode step */
    int layer;               /* the layer whose attention weights a long prompt keeps ... */
    bool move_layer;         /* ... and, for , and ., the layer the view moves to */
    bool set_view;           /* a lesson step: the view it sets */
    lesson_view view;
} app_target;

typedef struct app_job {
    const app_jobs *jobs;    /* the service it runs on ... */
    app_task *task;          /* ... as this request; NULL: it ran here */
    atomic_bool done;        /* the worker has finished: result and status are its last writes */
    attn_progress progress;  /* cancel, and where the run is */
    double started;          /* attn_clock_ms() at the start */
    app_plan plan;           /* its inputs borrowed from the app's trace or file: untouched until joined */
    attn_config run;         /* what the worker runs (its own copy, made by app_plan_run) */
    bool have_run;
    attn_trace result;
    attn_status status;
    attn_error err;
    attn_config next;        /* the settings that become app->cfg */
    app_target target;
    char stage[ATTN_MAX_NAME]; /* the stage shown: the worker also computes its colour range, */
    int scale_idx;           /* ... for this tensor of result (-1: none), */
    app_scale scale;         /* ... so the frame that installs it does not scan it on the main thread */
    attn_nonfinite nf;       /* where result first holds a NaN, found here for the same reason */
    bool want_loss;          /* alt_only: also the losses of alt_from, per batch row (the trace shown's) */
    app_loss *loss;
    /* the compare view's trace: made after result (want_alt), or alone from
     * the trace shown (alt_only: alt_from, untouched until joined) */
    bool want_alt, alt_only;
    int compare;
    const attn_trace *alt_from;
    attn_trace alt;
    attn_status alt_status;
    attn_error alt_err;
    bool all_cores;          /* the program's first picture: nothing else to draw, every core computes */
    bool has_pending;        /* a newer request, started when this one ends */
    attn_config pending;
    app_target pending_target;
} app_job;

static bool work(void *arg)
{
    app_job *j = arg;
    /* one core stays with the window, so that it keeps drawing at its pace; the
     * first picture (a notice, then its layers as they come) takes them all */
    int cores = attn_ops_cores(), was = attn_ops_threads(cores > 1 && !j->all_cores ? cores - 1 : cores);
    if (!j->alt_only) {
        j->plan.in.progress = &j->progress; /* a model loaded reports its reading too */
        j->have_run = j->have_run || !app_plan_run(&j->plan, &j->next, &j->run, &j->err);
        j->status = !j->have_run ? (j->err.status ? j->err.status : ATTN_ERR_CONFIG)
                    : atomic_load(&j->progress.cancel) ? ATTN_ERR_CANCELLED
                                                       : attn_trace_run(&j->run, &j->plan.in, &j->result, &j->err);
    }
    const attn_trace *from = j->alt_only ? j->alt_from : j->status == ATTN_OK ? &j->result : NULL;
    if (j->want_alt && from && !atomic_load(&j->progress.cancel))
        j->alt_status = app_alt_run(from, j->plan.in.model, j->compare, &j->progress, j->plan.in.arena, &j->alt,
                                        &j->alt_err);
    attn_ops_threads(was);
    const attn_tensor *t = j->status == ATTN_OK && !j->alt_only ? attn_trace_find(&j->result, j->stage) : NULL;
    if (t) {
        j->scale = app_view_scale(t);
        j->scale_idx = (int)(t - j->result.tensors);
    }
    if (j->status == ATTN_OK && !j->alt_only) attn_nonfinite_find(&j->result, &j->nf);
    if (j->want_loss) j->loss = app_trace_losses(j->alt_from, &j->progress.cancel);
    atomic_store(&j->done, true);
    return false;
}

static void job_free(app_job *j)
{
    if (j->status == ATTN_OK && !j->alt_only) attn_trace_free(&j->result);
    if (j->want_alt && j->alt_status == ATTN_OK) attn_trace_free(&j->alt);
    if (j->have_run) attn_config_free(&j->run);
    app_plan_free(&j->plan);
    free(j->loss);
    attn_config_free(&j->next);
    if (j->has_pending) attn_config_free(&j->pending);
    free(j);
}

/* A job for the view as it is: nothing run yet, the compare trace wanted
 * when the compare view is open. NULL when out of memory. */
static app_job *job_new(const app_state *app)
{
    app_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    snprintf(j->stage, sizeof j->stage, "%s", app->view.stage);
    j->scale_idx = -1;
    j->want_alt = app->view.mode == LESSON_VIEW_COMPARE;
    j->compare = app->view.compare;
    j->status = j->alt_status = ATTN_ERR_CANCELLED; /* until it runs */
    atomic_init(&j->done, false);
    attn_progress_init(&j->progress);
    return j;
}

/* Starts j's worker (or, with no service to be had, runs it here) and makes it the app's. */
static void launch(app_state *app, app_job *j)
{
    j->started = attn_clock_ms();
    j->jobs = app->jobs;
    j->task = app_jobs_start(j->jobs, work, j);
    if (!j->task) app_task_finish(work, j); /* no service: compute here */
    app->job = j;
    app->dirty = true;
}

/* Starts settings next (ownership moves in) on a new worker; on failure the
 * status line says why and next is freed. */
static int start(app_state *app, attn_config *next, const app_target *t)
{
    app_job *j = job_new(app);
    attn_error err;
    if (!j) {
        attn_config_free(next);
        app_status(app, true, "%s", "out of memory");
        return -1;
    }
    j->next = *next;
    j->target = *t;
    j->all_cores = app->opening.first;
    if (t->set_view) { /* the compare trace as the lesson step's view wants it */
        j->want_alt = t->view.mode == LESSON_VIEW_COMPARE;
        j->compare = t->view.compare;
    }
    /* planned for the target's decode step (which the worker may clamp) and
     * view mode; the view shows what is installed until this is */
    if (app_plan_make(app, &j->next, t->step, t->set_view ? t->view.mode : app->view.mode, &j->plan, &err)) {
        app_status(app, true, "%s", err.msg);
        job_free(j);
        return -1;
    }
    j->plan.layer = t->layer;
    if (!j->plan.load) { /* the model is loaded (or none): the run is made here, a refusal said at once */
        if (app_plan_run(&j->plan, &j->next, &j->run, &err)) {
            app_status(app, true, "%s", err.msg);
            job_free(j);
            return -1;
        }
        j->have_run = true;
        j->target.step = j->plan.step; /* the decode step clamped, and the tokens there are, known now */
        if (j->plan.step > 0) app->decode_len = j->plan.decode_len;
    }
    launch(app, j);
    return 0;
}

/* A job over the trace shown, nothing run: the compare trace (want_alt),
 * its losses (want_loss), or both. NULL when out of memory. */
static app_job *side_job(app_state *app, bool want_alt, bool want_loss)
{
    app_job *j = job_new(app);
    if (!j) return NULL;
    j->alt_only = true;
    j->want_alt = want_alt;
    j->want_loss = want_loss;
    j->alt_from = &app->trace;
    j->status = ATTN_OK;
    j->target.step = app->view.decode_step;
    j->target.layer = app->view.layer;
    j->plan.in.model = app->model;
    launch(app, j);
    return j;
}

/* The losses of the trace shown, on the worker: they read every row of the
 * logits (app_loss_of). A request meanwhile cancels it between chunks. */
static void losses_async(app_state *app)
{
    (void)side_job(app, false, true);
}

/* Joins the finished worker and takes its job off the app (the app's own
 * trace back in place first, if the job's was shown layer by layer). */
static app_job *take(app_state *app)
{
    app_job *j = app->job;
    app_partial_end(app);
    app_jobs_join(j->jobs, j->task);
    j->task = NULL;
    app->job = NULL;
    return j;
}

void app_show_wanted_layer(app_state *app)
{
    int want = app->partial.want;
    if (want < 0 || (app->partial.on && want >= app->partial.layers) || app->opening.first) return;
    app->partial.want = -1;
    if (want < app->trace.n_layers && want != app->view.layer) app_set_layer(app, want);
}

/* The first picture, layer by layer: once the worker has written its first
 * layer (and two or more are left, so that it is nowhere near the head,
 * whose writes the trace's fields take), the trace being made is shown,
 * borrowed, its layers ready counted up as they are written. */
static bool partial_poll(app_state *app)
{
    app_job *j = app->job;
    if (!j || j->alt_only || j->has_pending || atomic_load(&j->progress.cancel)) return false;
    if (atomic_load(&j->progress.phase) != ATTN_PHASE_TRACING) return false;
    int done = atomic_load_explicit(&j->progress.layers_done, memory_order_acquire);
    if (app->partial.on) {
        if (done == app->partial.layers) return false;
        app->partial.layers = done;
        app_show_wanted_layer(app);
        return true;
    }
    int layers = atomic_load(&j->progress.layers), first = app->partial.want > 0 ? app->partial.want + 1 : 1;
    if (!app->opening.first || done < first || done > layers - 2 || !j->plan.model || j->target.set_view)
        return false;
    if (app_partial_begin(app, &j->result, j->plan.model, j->plan.load, &j->next, done)) return false;
    app_show_wanted_layer(app);
    return true;
}

bool app_job_install(app_state *app)
{
    app_job *j = app->job;
    if (!j && app_losses_wanted(app)) losses_async(app); /* a trace shown without a worker's (a file, a lesson) */
    if (j && !atomic_load(&j->done)) return partial_poll(app);
    if (!j) return false;
    take(app);
    if (j->has_pending) { /* superseded: the newer request runs now */
        attn_config next = j->pending;
        app_target t = j->pending_target;
        j->has_pending = false;
        job_free(j);
        start(app, &next, &t);
        return true;
    }
    if (!j->alt_only) j->target.step = j->plan.step; /* as the worker clamped it */
    if (j->target.set_view && j->status == ATTN_OK && !j->alt_only) { /* a lesson step: its mode and mask toggle */
        app->view.mode = j->target.view.mode;
        app->view.compare = j->target.view.compare;
    }
    /* the compare trace made with it, if the view still wants that one */
    bool compare = app->view.mode == LESSON_VIEW_COMPARE, fresh = j->compare == app->view.compare;
    bool alt = j->want_alt && j->alt_status == ATTN_OK && compare && fresh;
    if (j->want_alt && fresh && j->alt_status != ATTN_OK && j->alt_status != ATTN_ERR_CANCELLED)
        app_status(app, true, "%s", j->alt_err.msg);
    if (j->alt_only) {
        if (alt) {
            app_set_alt(app, &j->alt);
            j->alt_status = ATTN_ERR_CANCELLED; /* moved into the app */
        }
        if (j->want_loss && j->loss) app_take_losses(app, &app->trace, j->loss);
        else if (j->want_loss && !atomic_load(&j->progress.cancel)) /* out of memory: not asked again */
            for (int i = 0; i < app->trace.dims.b && app->losses; i++) app->losses[i] = (app_loss){0, 0, true};
    } else if (j->status == ATTN_OK) {
        const app_target *t = &j->target;
        if (t->move_layer) { /* the view goes to the layer computed, on the stage it was asked on */
            const char *base = j->stage;
            attn_tensor_name_layer(j->stage, &base);
            app->view.layer = t->layer;
            attn_tensor_name(t->layer, j->result.n_layers, base, app->view.stage, sizeof app->view.stage);
        }
        app_install(app, &j->result, &j->next, &j->plan, alt ? &j->alt : NULL);
        app_alt_follow(app);
        app_show_wanted_layer(app);
        if (t->move_layer) app_show_layer(app, t->layer, j->stage);
        if (t->set_view) app_show_view(app, &t->view);
        memset(&j->next, 0, sizeof j->next); /* both moved into the app */
        if (alt) j->alt_status = ATTN_ERR_CANCELLED;
        if (j->scale_idx >= 0 && j->scale_idx < app->trace.n_tensors && app->scales)
            app->scales[j->scale_idx] = j->scale;
        app_note_nonfinite(app, &j->nf);
        j->status = ATTN_ERR_CANCELLED;
    } else if (j->status != ATTN_ERR_CANCELLED) {
        app->partial.want = -1;
        app_status(app, true, "%s", j->err.msg);
        if (app->opening.first) { /* what the program was started with cannot be shown: it ends, saying why */
            app->req.quit = true;
            app->req.exit_code = j->status == ATTN_ERR_CONFIG ? 2 : 1;
        }
    }
    job_free(j);
    if (compare && !fresh && !app->has_alt && !app->job) app_alt_async(app); /* the toggle changed meanwhile */
    if (!app->job && app_losses_wanted(app)) losses_async(app);
    app->dirty = true;
    return true;
}

int app_newest_step(const app_state *app)
{
    const app_job *j = app->job;
    return !j ? app->view.decode_step : j->has_pending ? j->pending_target.step : j->target.step;
}

const attn_config *app_settings(const app_state *app)
{
    const app_job *j = app->job;
    return !j ? &app->cfg : j->has_pending ? &j->pending : j->alt_only ? &app->cfg : &j->next;
}

int app_alt_async(app_state *app)
{
    if (!app->async) return -1;
    if (app->job) return 0; /* it makes the compare trace when it ends, or app_poll starts it */
    return side_job(app, true, false) ? 0 : -1; /* only the compare trace, from the trace shown */
}

/* The target of the newest request (the pending one, else the one running),
 * else the view's: a change asked for now keeps where that one was going. */
static app_target newest_target(const app_state *app)
{
    const app_job *j = app->job;
    if (j && j->has_pending) return j->pending_target;
    if (j && !j->alt_only) return j->target;
    return (app_target){.step = app->view.decode_step, .layer = app->view.layer};
}

int app_newest_layer(const app_state *app)
{
    app_target t = newest_target(app);
    return t.move_layer ? t.layer : t.set_view && t.view.layer >= 0 ? t.view.layer : app->view.layer;
}

/* A request for settings change(arg) computed for target t. */
static int request(app_state *app, app_config_change change, const void *arg, const app_target *t)
{
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, app_settings(app), &err) || (change && change(&next, arg, &err))) {
        attn_config_free(&next);
        app_status(app, true, "%s", err.msg);
        return -1;
    }
    app_job *j = app->job;
    if (!j) return start(app, &next, t);
    if (j->has_pending) attn_config_free(&j->pending);
    j->pending = next;
    j->pending_target = *t;
    j->has_pending = true;
    atomic_store(&j->progress.cancel, 1); /* the older request is of no use now */
    return 0;
}

static int take_settings(attn_config *next, const void *arg, attn_error *err);

int app_open_settings(app_state *app, const attn_config *cfg)
{
    return app_edit_config_async(app, take_settings, cfg);
}

int app_edit_config_async(app_state *app, app_config_change change, const void *arg)
{
    if (!app->async) return app_edit_config(app, change, arg);
    app_target t = newest_target(app);
    return request(app, change, arg, &t);
}

int app_layer_async(app_state *app, int layer)
{
    app_target t = newest_target(app);
    t.layer = layer;
    t.move_layer = true;
    return request(app, NULL, NULL, &t);
}

int app_edit_config_step(app_state *app, app_config_change change, const void *arg, int step)
{
    if (app->async) {
        app_target t = newest_target(app);
        t.step = step;
        return request(app, change, arg, &t);
    }
    int was = app->view.decode_step;
    app->view.decode_step = step;
    int rc = app_edit_config(app, change, arg);
    if (rc) app->view.decode_step = was;
    return rc;
}

/* The lesson step's settings replace all of them. */
static int take_settings(attn_config *next, const void *arg, attn_error *err)
{
    attn_config_free(next);
    return attn_config_copy(next, arg, err) ? -1 : 0;
}

int app_show_async(app_state *app, attn_config *cfg, const lesson_view *view)
{
    app_target t = {.step = view->decode_step, .layer = view->layer >= 0 ? view->layer : 0, .set_view = true,
                   .view = *view};
    int rc = request(app, take_settings, cfg, &t);
    attn_config_free(cfg);
    return rc;
}

bool app_busy(const app_state *app, int *layer, int *stage, double *ms)
{
    app_job *j = app->job;
    if (!j || (j->alt_only && !j->want_alt)) return false; /* the losses: nothing shown is being recomputed */
    if (layer) *layer = atomic_load(&j->progress.layer);
    if (stage) *stage = atomic_load(&j->progress.stage);
    if (ms) *ms = attn_clock_ms() - j->started;
    return true;
}

bool app_progress_now(const app_state *app, app_progress *p)
{
    app_job *j = app->job;
    memset(p, 0, sizeof *p);
    p->left_ms = -1;
    if (!app_busy(app, &p->layer, NULL, &p->ms)) return false;
    const attn_progress *w = &j->progress;
    p->phase = atomic_load(&w->phase);
    p->layers = atomic_load(&w->layers);
    if (p->layers < 1) p->layers = 1;
    p->bytes_done = (double)atomic_load(&w->bytes_done);
    p->bytes_total = (double)atomic_load(&w->bytes_total);
    p->fraction = attn_progress_fraction(w, &p->left_ms);
    return true;
}

bool app_job_running(const app_state *app)
{
    return app->job != NULL;
}

void app_job_cancel(app_state *app)
{
    if (app->job) atomic_store(&app->job->progress.cancel, 1);
}

void app_job_stop(app_state *app)
{
    if (!app->job) return;
    atomic_store(&app->job->progress.cancel, 1);
    job_free(take(app));
}

/* The abandoned job and a copy of the app it reads, kept reachable for the
 * rest of the process (whose end reclaims them). */
static app_job *abandoned_job;
static app_state *abandoned_app;

static bool left; /* app_leave was called */

bool app_job_abandoned(void)
{
    return abandoned_job != NULL || left;
}

void app_job_leave(app_state *app)
{
    app_job *j = app->job;
    if (j) { /* told to stop, and left to finish (or not) on its own */
        atomic_store(&j->progress.cancel, 1);
        if (j->task) app_jobs_leave(j->jobs, j->task);
        else job_free(j), j = NULL;
        abandoned_job = j;
    }
    app->job = NULL;
    if (!abandoned_app && (abandoned_app = malloc(sizeof *app))) *abandoned_app = *app; /* kept reachable */
    left = true;
}

bool app_job_abandon(app_state *app)
{
    app_job *j = app->job;
    if (!j) return false;
    atomic_store(&j->progress.cancel, 1);
    for (int i = 0; i < APP_JOB_QUIT_WAIT_MS && !atomic_load(&j->done); i++) nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (atomic_load(&j->done)) {
        job_free(take(app));
        return false;
    }
    app_jobs_leave(j->jobs, j->task);
    abandoned_job = j;
    abandoned_app = malloc(sizeof *app);
    if (abandoned_app) *abandoned_app = *app;
    app->job = NULL;
    return true;
}

/* ---- requests that change the settings or the view (the state's own, app.c, runs them here and now) */

void app_alt_follow(app_state *app)
{
    if (app->async && app->view.mode == LESSON_VIEW_COMPARE && !app->has_alt) app_refresh_alt(app);
}

int app_edit_config(app_state *app, app_config_change change, const void *arg)
{
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, app_settings(app), &err)) {
        app_status(app, true, "%s", err.msg);
        return -1;
    }
    if (change && change(&next, arg, &err)) {
        attn_config_free(&next);
        app_status(app, true, "%s", err.msg);
        return -1;
    }
    app_job_stop(app); /* here and now: the worker stopped first */
    if (app_commit(app, &next)) return -1;
    app_alt_follow(app);
    return 0;
}


int app_show(app_state *app, attn_config *cfg, const lesson_view *view)
{
    lesson_view was = app->view;
    if (app->from_file) {
        attn_config_free(cfg);
        app_status(app, true, "%s", _("a lesson cannot drive a trace file"));
        return -1;
    }
    if (app->edit.open) app_edit_stop(app);
    if (app->async) return app_show_async(app, cfg, view); /* the view follows when it is computed */
    app->view.decode_step = view->decode_step;
    app->view.mode = view->mode;
    app->view.compare = view->compare;
    app_job_stop(app);
    if (app_commit(app, cfg)) { /* not async: the compare trace made with it */
        app->view = was;
        app_refresh_alt(app);
        return -1;
    }
    app_show_view(app, view);
    return 0;
}


static int set_key(attn_config *next, const void *arg, attn_error *err)
{
    const char *const *kv = arg;
    return attn_config_set(next, kv[0], kv[1], err) ? -1 : 0;
}


int app_set(app_state *app, const char *key, const char *value)
{
    const char *kv[2] = {key, value};
    return app_edit_config_async(app, set_key, kv);
}


int app_set_layer(app_state *app, int layer)
{
    if (layer < 0 || layer >= app->trace.n_layers) return -1;
    if (app->partial.on && layer >= app->partial.layers) {
        app->partial.want = layer;
        app_status(app, false, _("layer %d is being traced: it is shown as soon as it is"), layer);
        return -1;
    }
    app->partial.want = -1; /* another layer asked for since */
    bool other = app->trace.cfg.qk_keep && app->trace.cfg.qk_keep != layer + 1 && !app->from_file &&
                 !app->partial.on; /* the layers traced so far, as they are */
    if (app->async && other)
        return app_layer_async(app, layer); /* that layer's weights, on the worker; the view follows */
    const attn_tensor *t = app_tensor(app);
    char name[ATTN_MAX_NAME];
    const char *stage = t ? t->name : "";
    attn_tensor_name_layer(stage, &stage);
    snprintf(name, sizeof name, "%s", stage);
    stage = name; /* the trace it came from may be replaced below */
    int was = app->view.layer;
    char was_stage[sizeof app->view.stage];
    snprintf(was_stage, sizeof was_stage, "%s", app->view.stage);
    app->view.layer = layer;
    if (other) {
        /* that layer's attention weights are computed on demand; the stage shown moves there first */
        attn_tensor_name(layer, app->trace.n_layers, stage, app->view.stage, sizeof app->view.stage);
        if (app_edit_config(app, NULL, NULL)) {
            app->view.layer = was;
            snprintf(app->view.stage, sizeof app->view.stage, "%s", was_stage);
            return -1;
        }
    }
    app_show_layer(app, layer, stage);
    return 0;
}


void app_refresh_alt(app_state *app)
{
    if (app->async && app->view.mode == LESSON_VIEW_COMPARE) {
        app_set_alt(app, NULL); /* the one shown no longer matches: its pane waits for the new one */
        if (!app_alt_async(app)) return;
    }
    app_alt_here(app);
}


/* ---- the status line about the view as asked (the newest layer, app_newest_layer) */

void app_status_about(app_state *app, unsigned what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    app_vstatus(app, false, what, fmt, ap);
    va_end(ap);
    app->status_about.layer = app_newest_layer(app);
    app->status_about.head = app->view.head;
    app->status_about.batch = app->view.batch;
    snprintf(app->status_about.stage, sizeof app->status_about.stage, "%s", app->view.stage);
    app->dirty = true;
}


const char *app_status_text(const app_state *app)
{
    unsigned w = app->status_about.what;
    const lesson_view *v = &app->view;
    if (((w & APP_ABOUT_LAYER) && app_newest_layer(app) != app->status_about.layer) ||
        ((w & APP_ABOUT_HEAD) && v->head != app->status_about.head) ||
        ((w & APP_ABOUT_BATCH) && v->batch != app->status_about.batch) ||
        ((w & APP_ABOUT_STAGE) && strcmp(v->stage, app->status_about.stage)))
        return "";
    return app->status;
}

void app_show_view(app_state *app, const lesson_view *view)
{
    app->view.panels = view->panels;
    app->view.layer = view->layer >= 0 && view->layer < app->trace.n_layers ? view->layer : 0;
    if (view->stage[0]) app_set_stage(app, view->stage);
    const attn_dims *d = &app->trace.dims;
    app->view.head = view->head >= 0 && view->head < d->h ? view->head : 0;
    app->view.batch = view->batch >= 0 && view->batch < d->b ? view->batch : 0;
    app->view.row = view->row >= 0 && view->row < d->s ? view->row : -1;
    app->tile_step = view->tile; /* the FlashAttention view's key tile (tiles_view.c clamps it) */
    app->help = false;
    app->stage_scroll = 0;
    app->dirty = true;
}


/* A full name ("layers.2.weights"), or a stage of the viewed layer ("weights"). */
int app_set_stage(app_state *app, const char *name)
{
    const attn_tensor *t = attn_trace_find(&app->trace, name);
    if (!t) t = attn_trace_get(&app->trace, app->view.layer, name);
    const char *rest;
    int layer = attn_tensor_name_layer(name, &rest);
    if (!t && app->trace.cfg.qk_keep && layer >= 0 && layer < app->trace.n_layers && layer + 1 != app->trace.cfg.qk_keep &&
        !app_set_layer(app, layer)) /* a layer whose attention weights a long prompt computes on demand */
        t = attn_trace_find(&app->trace, name);
    if (!t) return -1;
    snprintf(app->view.stage, sizeof app->view.stage, "%s", t->name);
    if (t->layer >= 0) app->view.layer = t->layer;
    app->dirty = true;
    return 0;
}

