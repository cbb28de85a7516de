/* app_open.c — opening a lesson or a model without a frozen window.
 *
 * Reading a lesson checks every step (each runs its configuration, a model's
 * too), and a model's files are read and its tokenizer built: together
 * seconds on a slow machine. So in the window (app->async) an opening is not
 * done when it is asked: the app remembers it and a frame says "opening … "
 * first; the window loop comes back at once (ui_app_pending) and ui_app_poll
 * starts it: a lesson is read as a request of its own to the platform's job
 * service (jobs.h), a model by the worker
 * that computes its first picture. The notice stays, with the worker's
 * progress, until that picture is installed. Which model o opens next
 * comes from the shipped models' folder, listed by a request of its own too.
 * Without a window (tests, render) it happens at once. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "engine/attention/ops.h"
#include "engine/model/model.h"
#include "i18n.h"

/* Runs work(arg) as a request to the app's job service, in *t, or, with no
 * service to be had, here (*t is then NULL: nothing to join or leave). */
static void run(const ui_app *app, ui_task **t, ui_task_fn *work, void *arg)
{
    *t = ui_jobs_start(app->jobs, work, arg);
    if (!*t) ui_task_finish(work, arg);
}

/* ---- a lesson read by a request of its own (jobs.h) */

typedef struct ui_lesson_read {
    ui_task *task;           /* the request reading it; NULL: read here, or joined */
    atomic_int refs;         /* the app's and the request's: the last to let go frees it */
    atomic_bool done;
    char path[1024];
    int step;
    bool begun;              /* the request's first piece has run */
    ui_player_reading reading;
    lesson ls;               /* read and checked, when rc is 0 */
    int rc;
    char err[700];
} ui_lesson_read;

static void read_release(ui_lesson_read *r)
{
    if (atomic_fetch_sub(&r->refs, 1) != 1) return;
    if (atomic_load(&r->done) && !r->rc) lesson_free(&r->ls);
    free(r);
}

/* A piece: the file read and parsed, then one of its steps checked a call. */
static bool read_work(void *arg)
{
    ui_lesson_read *r = arg;
    int cores = attn_ops_cores();
    int was = attn_ops_threads(cores > 1 ? cores - 1 : 1); /* one core stays with the window */
    bool more = true;
    if (!r->begun) {
        ui_player_read_begin(&r->reading, r->path);
        r->begun = true;
    } else {
        if (atomic_load(&r->refs) == 1) ui_player_read_stop(&r->reading); /* the app let go: no more steps */
        more = ui_player_read_step(&r->reading);
    }
    attn_ops_threads(was);
    if (more) return true;
    r->rc = ui_player_read_end(&r->reading, r->path, &r->ls, r->err, sizeof r->err);
    atomic_store(&r->done, true);
    read_release(r);
    return false;
}

/* ---- the shipped models' names (o), listed by a request of its own */

typedef struct ui_model_names {
    ui_task *task;           /* the request listing them; NULL: listed here, or joined */
    atomic_int refs;         /* the app's and the request's: the last to let go frees it */
    atomic_bool done;
    char **names;            /* sorted (attn_model_list) */
    int n;
    attn_status st;
    attn_error err;
} ui_model_names;

static void names_release(ui_model_names *m)
{
    if (atomic_fetch_sub(&m->refs, 1) != 1) return;
    for (int i = 0; i < m->n; i++) free(m->names[i]);
    free(m->names);
    free(m);
}

static bool names_work(void *arg)
{
    ui_model_names *m = arg;
    m->st = attn_model_list(&m->names, &m->n, &m->err);
    atomic_store(&m->done, true);
    names_release(m);
    return false;
}

void ui_app_models_drop(ui_app *app)
{
    ui_model_names *m = app->opening.models;
    if (!m) return;
    app->opening.models = NULL;
    ui_jobs_leave(app->jobs, m->task);
    names_release(m);
}

int ui_app_read_models(ui_app *app)
{
    if (app->opening.models) return 0; /* one listing serves the o presses made while it runs */
    ui_model_names *m = calloc(1, sizeof *m);
    if (!m) return -1;
    atomic_init(&m->refs, 2);
    atomic_init(&m->done, false);
    run(app, &m->task, names_work, m);
    app->opening.models = m;
    return 0;
}

void ui_app_read_drop(ui_app *app)
{
    ui_app_models_drop(app);
    ui_lesson_read *r = app->opening.reading;
    if (!r) return;
    app->opening.reading = NULL;
    ui_jobs_leave(app->jobs, r->task);
    read_release(r);
}

int ui_app_read_lesson(ui_app *app, const char *path, int step)
{
    ui_app_read_drop(app); /* the newer request wins */
    ui_lesson_read *r = calloc(1, sizeof *r);
    if (!r) return -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->step = step;
    atomic_init(&r->refs, 2);
    atomic_init(&r->done, false);
    run(app, &r->task, read_work, r);
    app->opening.reading = r;
    return 0;
}

void ui_app_next_model_label(const char *now, const char *const *names, int n, char *buf, size_t size)
{
    int at = -1;
    snprintf(buf, size, "%s", _("the built-in example"));
    for (int i = 0; i < n; i++)
        if (now && !strcmp(names[i], now)) at = i;
    /* TRANSLATORS: what opens: a trained model by its name */
    if (at + 1 < n) snprintf(buf, size, _("model %s"), names[at + 1]);
}

/* ---- what the loop takes in (app_loop.c) */

int ui_app_read_take(ui_app *app, int *step)
{
    ui_lesson_read *r = app->opening.reading;
    if (!r || !atomic_load(&r->done)) return 0;
    ui_jobs_join(app->jobs, r->task);
    app->opening.reading = NULL;
    int got = r->rc ? -1 : 1;
    if (r->rc) {
        ui_app_status(app, true, "%s", r->err);
    } else {
        ui_player *p = &app->lesson;
        ui_player_adopt(p, &r->ls, r->path);
        r->rc = -1; /* the lesson moved into the player */
        *step = r->step < p->ls.n_steps ? r->step : p->ls.n_steps - 1;
        if (*step < 0) *step = 0;
    }
    read_release(r);
    return got;
}

bool ui_app_models_ready(const ui_app *app)
{
    return app->opening.models && atomic_load(&app->opening.models->done);
}

const char *const *ui_app_models_listed(ui_app *app, int *n)
{
    ui_model_names *m = app->opening.models;
    ui_jobs_join(app->jobs, m->task);
    m->task = NULL; /* joined: ui_app_models_drop must not leave it */
    if (m->st) {
        ui_app_status(app, true, "%s", m->err.msg);
        return NULL;
    }
    *n = m->n;
    return (const char *const *)m->names;
}
