/* app_open.c — opening a lesson or a model without a frozen window.
 *
 * Reading a lesson checks every step (each runs its configuration, a model's
 * too), and a model's files are read and its tokenizer built: together
 * seconds on a slow machine. So in the window (app->async) an opening is not
 * done when it is asked: the app remembers it and a frame says "opening … "
 * first; the window loop comes back at once (app_pending) and app_poll
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
static void run(const app_state *app, app_task **t, app_task_fn *work, void *arg)
{
    *t = app_jobs_start(app->jobs, work, arg);
    if (!*t) app_task_finish(work, arg);
}

/* ---- a lesson read by a request of its own (jobs.h) */

typedef struct app_lesson_read {
    app_task *task;          /* the request reading it; NULL: read here, or joined */
    atomic_int refs;         /* the app's and the request's: the last to let go frees it */
    atomic_bool done;
    char path[1024];
    int step;
    bool begun;              /* the request's first piece has run */
    app_player_reading reading;
    lesson ls;               /* read and checked, when rc is 0 */
    lesson_entry next;       /* the course's lesson after it, read with it */
    int rc;
    char err[700];
} app_lesson_read;

static void read_release(app_lesson_read *r)
{
    if (atomic_fetch_sub(&r->refs, 1) != 1) return;
    if (atomic_load(&r->done) && !r->rc) lesson_free(&r->ls);
    lesson_entry_free(&r->next);
    free(r);
}

/* A piece: the file read and parsed, then one of its steps checked a call. */
static bool read_work(void *arg)
{
    app_lesson_read *r = arg;
    int cores = attn_ops_cores();
    int was = attn_ops_threads(cores > 1 ? cores - 1 : 1); /* one core stays with the window */
    bool more = true;
    if (!r->begun) {
        app_player_read_begin(&r->reading, r->path);
        r->begun = true;
    } else {
        if (atomic_load(&r->refs) == 1) app_player_read_stop(&r->reading); /* the app let go: no more steps */
        more = app_player_read_step(&r->reading);
    }
    attn_ops_threads(was);
    if (more) return true;
    r->rc = app_player_read_end(&r->reading, r->path, &r->ls, r->err, sizeof r->err);
    if (!r->rc) lesson_catalog_next(r->path, &r->next); /* none (or none readable): no offer */
    atomic_store(&r->done, true);
    read_release(r);
    return false;
}

/* ---- the shipped models' names (o), listed by a request of its own */

typedef struct app_model_names {
    app_task *task;          /* the request listing them; NULL: listed here, or joined */
    atomic_int refs;         /* the app's and the request's: the last to let go frees it */
    atomic_bool done;
    char **names;            /* sorted (attn_model_list) */
    int n;
    attn_status st;
    attn_error err;
} app_model_names;

static void names_release(app_model_names *m)
{
    if (atomic_fetch_sub(&m->refs, 1) != 1) return;
    for (int i = 0; i < m->n; i++) free(m->names[i]);
    free(m->names);
    free(m);
}

static bool names_work(void *arg)
{
    app_model_names *m = arg;
    m->st = attn_model_list(&m->names, &m->n, &m->err);
    atomic_store(&m->done, true);
    names_release(m);
    return false;
}

void app_models_drop(app_state *app)
{
    app_model_names *m = app->opening.models;
    if (!m) return;
    app->opening.models = NULL;
    app_jobs_leave(app->jobs, m->task);
    names_release(m);
}

int app_read_models(app_state *app)
{
    if (app->opening.models) return 0; /* one listing serves the o presses made while it runs */
    app_model_names *m = calloc(1, sizeof *m);
    if (!m) return -1;
    atomic_init(&m->refs, 2);
    atomic_init(&m->done, false);
    run(app, &m->task, names_work, m);
    app->opening.models = m;
    return 0;
}

void app_read_drop(app_state *app)
{
    app_models_drop(app);
    app_lesson_read *r = app->opening.reading;
    if (!r) return;
    app->opening.reading = NULL;
    app_jobs_leave(app->jobs, r->task);
    read_release(r);
}

int app_read_lesson(app_state *app, const char *path, int step)
{
    app_read_drop(app); /* the newer request wins */
    app_lesson_read *r = calloc(1, sizeof *r);
    if (!r) return -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->step = step;
    atomic_init(&r->refs, 2);
    atomic_init(&r->done, false);
    run(app, &r->task, read_work, r);
    app->opening.reading = r;
    return 0;
}

void app_next_model_label(const char *now, const char *const *names, int n, char *buf, size_t size)
{
    int at = -1;
    snprintf(buf, size, "%s", _("the built-in example"));
    for (int i = 0; i < n; i++)
        if (now && !strcmp(names[i], now)) at = i;
    /* TRANSLATORS: what opens: a trained model by its name */
    if (at + 1 < n) snprintf(buf, size, _("model %s"), names[at + 1]);
}

/* ---- what the loop takes in (app_loop.c) */

int app_read_take(app_state *app, int *step)
{
    app_lesson_read *r = app->opening.reading;
    if (!r || !atomic_load(&r->done)) return 0;
    app_jobs_join(app->jobs, r->task);
    app->opening.reading = NULL;
    int got = r->rc ? -1 : 1;
    if (r->rc) {
        app_status(app, true, "%s", r->err);
    } else {
        app_player *p = &app->lesson;
        app_player_adopt(p, &r->ls, r->path, &r->next);
        r->rc = -1; /* the lesson moved into the player */
        *step = r->step < p->ls.n_steps ? r->step : p->ls.n_steps - 1;
        if (*step < 0) *step = 0;
    }
    read_release(r);
    return got;
}

bool app_models_ready(const app_state *app)
{
    return app->opening.models && atomic_load(&app->opening.models->done);
}

const char *const *app_models_listed(app_state *app, int *n)
{
    app_model_names *m = app->opening.models;
    app_jobs_join(app->jobs, m->task);
    m->task = NULL; /* joined: app_models_drop must not leave it */
    if (m->st) {
        app_status(app, true, "%s", m->err.msg);
        return NULL;
    }
    *n = m->n;
    return (const char *const *)m->names;
}
