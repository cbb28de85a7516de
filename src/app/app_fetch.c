/* app_fetch.c — an opening waits for the files of the models it needs.
 *
 * With a platform fetcher (fetch.h: the web page), a lesson, o, m or j does
 * not open a shipped model whose files are not here yet. The opening stays
 * pending behind its notice, which shows the download's bytes, and app_poll
 * (app_loop.c) asks again each turn; it goes on by itself once every model
 * it needs is here, or ends on the status line, in plain words, if one could
 * not be downloaded. Which models: those a lesson's steps and measures name
 * (their checkpoints when a step sets one), o's next model, m's variant, the
 * model j steps through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "i18n.h"
#include "lesson.h"

#define FETCH_MODELS 12

typedef struct {
    char name[64];
    bool checkpoints;
} fetch_want;

/* What the pending opening needs, worked out once for its act, arg and path. */
typedef struct app_fetch_wait {
    app_action act;
    int arg;
    char path[PATH_MAX];
    fetch_want want[FETCH_MODELS];
    int n;
} app_fetch_wait;

static int add(fetch_want *w, int n, const char *name, bool checkpoints)
{
    if (!name || !attn_model_is_bare(name) || strlen(name) >= sizeof w->name) return n;
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].name, name)) {
            w[i].checkpoints = w[i].checkpoints || checkpoints;
            return n;
        }
    if (n == FETCH_MODELS) return n;
    snprintf(w[n].name, sizeof w[n].name, "%s", name);
    w[n].checkpoints = checkpoints;
    return n + 1;
}

/* The models lesson `path` names: its steps' (with their checkpoints when a
 * step sets one) and its measures'. */
static int lesson_wants(const char *path, fetch_want *w)
{
    lesson ls;
    lesson_diags dg = {0};
    lesson_load(path, &ls, &dg); /* parsing only: the checks come with the reading */
    int n = 0;
    const char *model = NULL;
    for (int s = -1; s < ls.n_steps; s++) {
        const lesson_step *st = s < 0 ? &ls.intro : &ls.steps[s];
        bool checkpoint = false;
        for (int i = 0; i < st->n_settings; i++) {
            if (!strcmp(st->settings[i].key, "model")) model = st->settings[i].value;
            if (!strcmp(st->settings[i].key, "checkpoint")) checkpoint = true;
        }
        n = add(w, n, model, checkpoint);
        for (int i = 0; i < st->n_measures; i++)
            if (st->measures[i].model[0]) n = add(w, n, st->measures[i].model, false);
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
    return n;
}

/* o: the model app_next_model_in opens next, once the shipped ones are listed. */
static int next_model_wants(app_state *app, fetch_want *w)
{
    if (!app_models_ready(app)) return 0;
    int n, at = -1;
    const char *const *names = app_models_listed(app, &n);
    const char *now = app_settings(app)->model;
    if (!names) return 0;
    for (int i = 0; i < n; i++)
        if (now && !strcmp(names[i], now)) at = i;
    return at + 1 < n ? add(w, 0, names[at + 1], false) : 0;
}

static int opening_wants(app_state *app, fetch_want *w)
{
    const app_player *p = &app->lesson;
    int arg = app->opening.arg;
    switch (app->opening.act) {
    case APP_ACT_NONE: return lesson_wants(app->opening.path, w);
    case APP_ACT_PICK:
        return p->have_catalog && arg >= 0 && arg < p->catalog.n ? lesson_wants(p->catalog.items[arg].path, w) : 0;
    case APP_ACT_LESSON_ONWARD: return p->next.path ? lesson_wants(p->next.path, w) : 0;
    case APP_ACT_MODEL_NEXT: return next_model_wants(app, w);
    case APP_ACT_MODE: return add(w, 0, app->opening.path, false); /* m: the variant, named in path */
    case APP_ACT_TRAIN_PREV:
    case APP_ACT_TRAIN_NEXT:
    case APP_ACT_TRAIN_AT: return app->model ? add(w, 0, app->model->name, true) : 0;
    default: return 0;
    }
}

void app_fetch_drop(app_state *app)
{
    free(app->opening.waiting);
    app->opening.waiting = NULL;
    app->opening.fetching[0] = '\0';
}

/* The wait for the pending opening: the one made for it, else a new one. */
static app_fetch_wait *wait_for(app_state *app)
{
    app_fetch_wait *f = app->opening.waiting;
    if (f && f->act == app->opening.act && f->arg == app->opening.arg && !strcmp(f->path, app->opening.path))
        return f;
    app_fetch_drop(app);
    if (!(f = calloc(1, sizeof *f))) return NULL;
    f->act = app->opening.act;
    f->arg = app->opening.arg;
    snprintf(f->path, sizeof f->path, "%s", app->opening.path);
    f->n = opening_wants(app, f->want);
    app->opening.waiting = f;
    return f;
}

/* Checkpoints that came after their model was opened: read now, for j. */
static void training_arrived(app_state *app)
{
    app_training t;
    attn_error err;
    if (app->train.n || !app->model || app_training_read(app->model->name, &t, &err)) return;
    app_training_free(&app->train);
    app->train = t;
}

int app_fetch_opening(app_state *app)
{
    if (!app->fetch) return 0;
    app_fetch_wait *f = wait_for(app);
    if (!f) return 0; /* out of memory: the opening goes on, and says what it misses */
    app_fetch_progress sum = {0}, p;
    bool coming = false;
    for (int i = 0; i < f->n; i++) {
        memset(&p, 0, sizeof p);
        switch (app->fetch->want(app->fetch->ctx, f->want[i].name, f->want[i].checkpoints, &p)) {
        case APP_FETCH_HERE: break;
        case APP_FETCH_COMING:
            if (!coming) snprintf(app->opening.fetching, sizeof app->opening.fetching, "%s", f->want[i].name);
            coming = true;
            sum.done += p.done, sum.total += p.total;
            break;
        case APP_FETCH_FAILED:
            /* TRANSLATORS: a model's files could not be downloaded; the model's name, then why */
            app_status(app, true, _("%s could not be downloaded (%s): check the connection, then open it again."),
                       f->want[i].name, p.why[0] ? p.why : "?");
            app_fetch_drop(app);
            return -1;
        }
    }
    if (coming) {
        app->opening.fetched = sum;
        return 1;
    }
    bool trains = f->act == APP_ACT_TRAIN_PREV || f->act == APP_ACT_TRAIN_NEXT || f->act == APP_ACT_TRAIN_AT;
    app_fetch_drop(app);
    if (trains) training_arrived(app);
    return 0;
}

bool app_fetch_later(app_state *app, const char *model, bool checkpoints, app_action act, int arg,
                     const char *label)
{
    app_fetch_progress p = {0};
    if (!app->fetch || !app->async || app->opening.running || !model) return false;
    app_fetch_state st = app->fetch->want(app->fetch->ctx, model, checkpoints, &p);
    if (st == APP_FETCH_HERE) return false;
    if (st == APP_FETCH_FAILED) {
        app_status(app, true, _("%s could not be downloaded (%s): check the connection, then open it again."), model,
                   p.why[0] ? p.why : "?");
        return true;
    }
    if (!app_open_later(app, act, arg, label)) return false;
    snprintf(app->opening.path, sizeof app->opening.path, "%s", checkpoints ? "" : model);
    return true;
}
