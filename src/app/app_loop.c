/* app_loop.c — what the platform's loop calls between events, and the app's end.
 *
 * The loop's turn: app_poll takes in what ended meanwhile (a progress
 * save, the picker's list, an opening whose notice is on screen) and then a
 * finished recomputation, through the job's one install call
 * (app_job_install); app_pending says whether to come back without an
 * event. At the end, app_free waits for (or gives up on) what is under
 * way, and app_leave leaves it to the process's end. This is the only
 * room that calls both the actions and the job: a key press goes input ->
 * action -> state -> request, a result comes back here. */
#include "app.h"

#include "app_impl.h"
#include "i18n.h"

/* ---- an opening, once its notice is on screen (app_open.c reads it) */

/* The program ends with this status, the message on the status line, when
 * the lesson it was started with cannot be opened. */
static void open_failed(app_state *app)
{
    if (!app->opening.fail_exit) return;
    app->req.quit = true;
    app->req.exit_code = app->opening.fail_exit;
}


/* The lesson read, once it has been: shown at its step (on the worker), or
 * the reason it cannot be on the status line. Returns whether it was taken. */
static bool read_poll(app_state *app)
{
    int step, got = app_read_take(app, &step);
    if (!got) return false;
    int rc = -1;
    if (got > 0) {
        app->opening.running = true;
        rc = app_lesson_go(app, step);
        app->opening.running = false;
        if (rc) app_player_close(&app->lesson); /* the step cannot be shown: no half-open lesson */
    }
    if (rc) {
        open_failed(app);
        app->opening.label[0] = '\0';
    }
    app->opening.fail_exit = 0; /* a lesson opened later falls back to the one shown */
    app->dirty = true;
    return true;
}

/* o, once the models are listed: the next one's name on the notice, and it opens. */
static int models_next(app_state *app)
{
    if (!app->opening.models) return app_next_model(app) ? -1 : 0; /* out of memory for the request's: listed here */
    int n, rc = -1;
    const char *const *names = app_models_listed(app, &n);
    if (names) {
        /* the next after the newest model asked for, as app_next_model_in takes it */
        app_next_model_label(app_settings(app)->model, names, n, app->opening.label, sizeof app->opening.label);
        rc = app_next_model_in(app, names, n);
    }
    app_models_drop(app);
    return rc;
}

/* What was left for after the opening notice's frame (app_open_later), once
 * it has been drawn; true when the picture changed. */
static bool open_poll(app_state *app)
{
    if (read_poll(app)) return true;
    if (app_models_ready(app) && !(app->opening.pending && app->opening.act == APP_ACT_MODEL_NEXT))
        app_models_drop(app); /* o's opening was replaced by another meanwhile */
    if (!app->opening.pending) {
        if (!app->opening.label[0] || app->job || app->opening.reading) return false;
        app->opening.label[0] = '\0'; /* what it opened is on screen */
        app->dirty = true;
        return true;
    }
    if (!app->opening.shown) return false; /* the notice first */
    if (app->opening.act == APP_ACT_MODEL_NEXT && app->opening.models && !app_models_ready(app))
        return false; /* o: the models' names first */
    int files = app_fetch_opening(app); /* the files of the models it needs first (fetch.h) */
    if (files > 0) return false;        /* coming: the notice shows how far */
    app->opening.pending = false;
    if (files < 0) {
        open_failed(app);
        app->opening.label[0] = '\0';
        app->dirty = true;
        return true;
    }
    app->opening.running = true;
    int rc = 0;
    char err[700];
    if (app->opening.has_cfg) { /* the settings the program was started with (app_init_later) */
        attn_config cfg = app->opening.cfg;
        app->opening.has_cfg = false;
        rc = app_open_settings(app, &cfg);
        attn_config_free(&cfg);
        if (rc) open_failed(app);
        else if (!app->job) app_show_wanted_layer(app); /* opened at once (no worker): --layer's */
        app->opening.act = APP_ACT_NONE;
        app->opening.path[0] = '\0';
    } else switch (app->opening.act) {
    case APP_ACT_NONE: /* a lesson by its path (attnlab lesson FILE) */
        rc = app_lesson_open(app, app->opening.path, app->opening.arg, err, sizeof err);
        if (rc) app_status(app, true, "%s", err);
        if (rc) open_failed(app); /* nothing to fall back to: the program ends, saying why */
        if (!app->opening.reading) app->opening.fail_exit = 0; /* a lesson opened later falls back to the one shown */
        break;
    case APP_ACT_LESSON_RESTORE:
        rc = app_lesson_go(app, app->opening.arg);
        if (rc) app_player_close(&app->lesson); /* the step cannot be shown: no half-open lesson */
        break;
    case APP_ACT_MODEL_NEXT: rc = models_next(app); break;
    default: rc = app_do(app, app->opening.act, app->opening.arg) ? 0 : -1; break;
    }
    app->opening.running = false;
    if (rc || (!app->job && !app->opening.reading)) app->opening.label[0] = '\0'; /* done already, or failed */
    app->dirty = true;
    return true;
}


/* ---- the loop */

bool app_poll(app_state *app)
{
    app_player *p = &app->lesson;
    if (app_player_poll(p)) app_take_note(app); /* a progress save or the picker's list that ended */
    if (p->pick_listed && !app_player_listing(p)) { /* Enter came before the list */
        p->pick_listed = false;
        if (p->picker && p->have_catalog) app_do(app, APP_ACT_PICK, p->sel);
        return true;
    }
    if (open_poll(app)) return true; /* a lesson or model to open, once its notice is on screen */
    bool installed = app_job_install(app);
    if (installed) app_generate_queued(app); /* a ] pressed while that token computed */
    return installed;
}

bool app_pending(const app_state *app)
{
    return app->opening.pending || app->opening.reading || app->opening.models || app_job_running(app) ||
           app_player_saving(&app->lesson) || app_player_listing(&app->lesson);
}

void app_leave(app_state *app)
{
    app_player_finish(&app->lesson); /* the progress save under way, and what is left, written first */
    app_read_drop(app);             /* a lesson being read is left to finish on its own */
    app_job_leave(app);
}

void app_free(app_state *app)
{
    app_fetch_drop(app);
    app_read_drop(app); /* it reads nothing of the app: left to free itself */
    if (app_job_abandon(app)) return; /* the worker still reads it all: the process is ending */
    app_release(app);
}
