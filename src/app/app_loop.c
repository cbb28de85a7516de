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

bool ui_app_poll(ui_app *app)
{
    ui_player *p = &app->lesson;
    if (ui_player_poll(p)) ui_app_take_note(app); /* a progress save or the picker's list that ended */
    if (p->pick_listed && !ui_player_listing(p)) { /* Enter came before the list */
        p->pick_listed = false;
        if (p->picker && p->have_catalog) ui_app_do(app, UI_ACT_PICK, p->sel);
        return true;
    }
    if (ui_app_open_poll(app)) return true; /* a lesson or model to open, once its notice is on screen */
    return ui_app_job_install(app);
}

bool ui_app_pending(const ui_app *app)
{
    return app->opening.pending || app->opening.reading || app->opening.models || ui_app_busy(app, NULL, NULL, NULL) ||
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
