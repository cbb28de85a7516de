/* app_loop.c — what the platform's loop calls between events, and the app's end.
 *
 * The loop's turn: ui_app_poll takes in what ended meanwhile (a progress
 * save, the picker's list, an opening whose notice is on screen) and then a
 * finished recomputation, through the job's one install call
 * (ui_app_job_install); ui_app_pending says whether to come back without an
 * event. At the end, ui_app_free waits for (or gives up on) what is under
 * way, and ui_app_leave leaves it to the process's end. This is the only
 * room that calls both the actions and the job: a key press goes input ->
 * action -> state -> request, a result comes back here. */
#include "app.h"

#include "app_impl.h"
#include "i18n.h"

/* ---- an opening, once its notice is on screen (app_open.c reads it) */

/* The program ends with this status, the message on the status line, when
 * the lesson it was started with cannot be opened. */
static void open_failed(ui_app *app)
{
    if (!app->opening.fail_exit) return;
    app->req.quit = true;
    app->req.exit_code = app->opening.fail_exit;
}


/* The lesson read, once it has been: shown at its step (on the worker), or
 * the reason it cannot be on the status line. Returns whether it was taken. */
static bool read_poll(ui_app *app)
{
    int step, got = ui_app_read_take(app, &step);
    if (!got) return false;
    int rc = -1;
    if (got > 0) {
        app->opening.running = true;
        rc = ui_app_lesson_go(app, step);
        app->opening.running = false;
        if (rc) ui_player_close(&app->lesson); /* the step cannot be shown: no half-open lesson */
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
static int models_next(ui_app *app)
{
    if (!app->opening.models) return ui_app_next_model(app) ? -1 : 0; /* out of memory for the request's: listed here */
    int n, rc = -1;
    const char *const *names = ui_app_models_listed(app, &n);
    if (names) {
        /* the next after the newest model asked for, as ui_app_next_model_in takes it */
        ui_app_next_model_label(ui_app_settings(app)->model, names, n, app->opening.label, sizeof app->opening.label);
        rc = ui_app_next_model_in(app, names, n);
    }
    ui_app_models_drop(app);
    return rc;
}

/* What was left for after the opening notice's frame (ui_app_open_later), once
 * it has been drawn; true when the picture changed. */
static bool open_poll(ui_app *app)
{
    if (read_poll(app)) return true;
    if (ui_app_models_ready(app) && !(app->opening.pending && app->opening.act == UI_ACT_MODEL_NEXT))
        ui_app_models_drop(app); /* o's opening was replaced by another meanwhile */
    if (!app->opening.pending) {
        if (!app->opening.label[0] || app->job || app->opening.reading) return false;
        app->opening.label[0] = '\0'; /* what it opened is on screen */
        app->dirty = true;
        return true;
    }
    if (!app->opening.shown) return false; /* the notice first */
    if (app->opening.act == UI_ACT_MODEL_NEXT && app->opening.models && !ui_app_models_ready(app))
        return false; /* o: the models' names first */
    app->opening.pending = false;
    app->opening.running = true;
    int rc = 0;
    char err[700];
    switch (app->opening.act) {
    case UI_ACT_NONE: /* a lesson by its path (attnlab lesson FILE) */
        rc = ui_app_lesson_open(app, app->opening.path, app->opening.arg, err, sizeof err);
        if (rc) ui_app_status(app, true, "%s", err);
        if (rc) open_failed(app); /* nothing to fall back to: the program ends, saying why */
        if (!app->opening.reading) app->opening.fail_exit = 0; /* a lesson opened later falls back to the one shown */
        break;
    case UI_ACT_LESSON_RESTORE:
        rc = ui_app_lesson_go(app, app->opening.arg);
        if (rc) ui_player_close(&app->lesson); /* the step cannot be shown: no half-open lesson */
        break;
    case UI_ACT_MODEL_NEXT: rc = models_next(app); break;
    default: rc = ui_app_do(app, app->opening.act, app->opening.arg) ? 0 : -1; break;
    }
    app->opening.running = false;
    if (rc || (!app->job && !app->opening.reading)) app->opening.label[0] = '\0'; /* done already, or failed */
    app->dirty = true;
    return true;
}


/* ---- the loop */

bool ui_app_poll(ui_app *app)
{
    ui_player *p = &app->lesson;
    if (ui_player_poll(p)) ui_app_take_note(app); /* a progress save or the picker's list that ended */
    if (p->pick_listed && !ui_player_listing(p)) { /* Enter came before the list */
        p->pick_listed = false;
        if (p->picker && p->have_catalog) ui_app_do(app, UI_ACT_PICK, p->sel);
        return true;
    }
    if (open_poll(app)) return true; /* a lesson or model to open, once its notice is on screen */
    return ui_app_job_install(app);
}

bool ui_app_pending(const ui_app *app)
{
    return app->opening.pending || app->opening.reading || app->opening.models || ui_app_job_running(app) ||
           ui_player_saving(&app->lesson) || ui_player_listing(&app->lesson);
}

void ui_app_leave(ui_app *app)
{
    ui_player_finish(&app->lesson); /* the progress save under way, and what is left, written first */
    ui_app_read_drop(app);          /* a lesson being read is left to finish on its own */
    ui_app_job_leave(app);
}

void ui_app_free(ui_app *app)
{
    ui_app_read_drop(app); /* it reads nothing of the app: left to free itself */
    if (ui_app_job_abandon(app)) return; /* the worker still reads it all: the process is ending */
    ui_app_release(app);
}
