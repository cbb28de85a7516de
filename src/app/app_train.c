/* app_train.c — the training control: a model's checkpoints through
 * training, one at a time, with the view kept (training.h). */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "i18n.h"

int app_train_newest(const app_state *app)
{
    return app_training_position(&app->train, app_settings(app)->model);
}

int app_train_go(app_state *app, int at)
{
    const app_training *t = &app->train;
    char dir[PATH_MAX];
    attn_error err;
    if (!t->n) {
        app_status(app, true, "%s", _("this model was not saved during training: no checkpoints to step through "
                                      "(scripts/train_model.py --checkpoints)"));
        return -1;
    }
    if (at < 0 || at > t->n || (at == t->n && !t->final) || at == app_train_newest(app)) return -1;
    if (app_training_path(t, at, dir, sizeof dir, &err)) {
        app_status(app, true, "%s", err.msg);
        return -1;
    }
    /* only the model changes: the text, masks, stage, head and rows stay (keep_place) */
    return app_set(app, "model", dir);
}

/* A shipped model's checkpoints the page has not downloaded yet: fetched
 * first, then act(arg) (app_fetch.c). */
static bool fetch_first(app_state *app, app_action act, int arg)
{
    char label[200];
    /* TRANSLATORS: what the "opening …" notice opens for j: a model's training checkpoints */
    snprintf(label, sizeof label, _("the training checkpoints of %s"), app->model->name);
    return app_fetch_later(app, app->model->name, true, act, arg, label);
}

bool app_train_do(app_state *app, app_action act, int arg)
{
    bool steps = act == APP_ACT_TRAIN_PREV || act == APP_ACT_TRAIN_NEXT || act == APP_ACT_TRAIN_AT;
    if (steps && !app->train.n && app->model && fetch_first(app, act, arg)) return true;
    switch (act) {
    case APP_ACT_TRAIN_PREV:
    case APP_ACT_TRAIN_NEXT: {
        int now = app_train_newest(app);
        if (now < 0) now = app->train.n;
        return app_train_go(app, now + (act == APP_ACT_TRAIN_NEXT ? 1 : -1)) == 0;
    }
    case APP_ACT_TRAIN_AT: return app_train_go(app, arg) == 0;
    case APP_ACT_TRAIN_METRIC:
        app->train_metric = (app->train_metric + 1) % ATTN_METRIC_COUNT;
        return true;
    case APP_ACT_TRAIN_HEAD: {
        int layer = arg >> 16, head = arg & 0xffff;
        if (layer != app->view.layer && app_set_layer(app, layer)) return false;
        if (head < app->trace.dims.h) app->view.head = head;
        app->dirty = true;
        return true;
    }
    default: return false;
    }
}
