/* app_open.c — opening a lesson or a model without a frozen window.
 *
 * Reading a lesson checks every step (each runs its configuration, a model's
 * too) and a model's files are read on the main thread: together seconds on a
 * slow machine. So in the window (app->async) an opening is not done when it
 * is asked: the app remembers it and a frame says "opening … " first; the
 * window loop comes back at once (ui_app_pending) and ui_app_poll does it.
 * The notice stays, with the worker's progress, until the first picture of
 * what opened is installed. Without a window (tests, render) it happens at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "i18n.h"
#include "model.h"

bool ui_app_open_later(ui_app *app, ui_action act, int arg, const char *label)
{
    if (!app->async || app->opening.running) return false;
    app->opening.pending = true;
    app->opening.shown = false;
    app->opening.act = act;
    app->opening.arg = arg;
    snprintf(app->opening.label, sizeof app->opening.label, "%s", label);
    app->dirty = true;
    return true;
}

bool ui_app_open_poll(ui_app *app)
{
    if (!app->opening.pending) {
        if (!app->opening.label[0] || app->job) return false;
        app->opening.label[0] = '\0'; /* what it opened is on screen */
        app->dirty = true;
        return true;
    }
    if (!app->opening.shown) return false; /* the notice first */
    app->opening.pending = false;
    app->opening.running = true;
    int rc = 0;
    char err[700];
    switch (app->opening.act) {
    case UI_ACT_NONE: /* a lesson by its path (attnlab lesson FILE) */
        rc = ui_app_lesson_open(app, app->opening.path, app->opening.arg, err, sizeof err);
        if (rc) ui_app_status(app, true, "%s", err);
        if (rc && app->opening.fail_exit) { /* nothing to fall back to: the program ends, saying why */
            app->req.quit = true;
            app->req.exit_code = app->opening.fail_exit;
        }
        app->opening.fail_exit = 0; /* a lesson opened later falls back to the one shown */
        break;
    case UI_ACT_LESSON_RESTORE:
        rc = ui_app_lesson_go(app, app->opening.arg);
        if (rc) ui_player_close(&app->lesson); /* the step cannot be shown: no half-open lesson */
        break;
    default: rc = ui_app_do(app, app->opening.act, app->opening.arg) ? 0 : -1; break;
    }
    app->opening.running = false;
    if (rc || !app->job) app->opening.label[0] = '\0'; /* done already, or failed (the status line says why) */
    app->dirty = true;
    return true;
}

void ui_app_next_model_label(const ui_app *app, char *buf, size_t size)
{
    char **names = NULL;
    int n = 0, at = -1;
    attn_error err;
    snprintf(buf, size, "%s", _("the built-in example"));
    if (attn_model_list(&names, &n, &err)) return;
    for (int i = 0; i < n; i++)
        if (app->cfg.model && !strcmp(names[i], app->cfg.model)) at = i;
    /* TRANSLATORS: what opens: a trained model by its name */
    if (at + 1 < n) snprintf(buf, size, _("model %s"), names[at + 1]);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

bool ui_app_pending(const ui_app *app)
{
    return app->opening.pending || ui_app_busy(app, NULL, NULL, NULL) || ui_player_saving(&app->lesson);
}
