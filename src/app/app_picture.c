/* app_picture.c — the app in the state a command line's picture asks for:
 * `attnlab render` and `attnlab bench` (sdl/offscreen.c) call it before they
 * draw. */
#include "app_picture.h"

#include <stdio.h>
#include <string.h>

#include "engine/trace/stages.h"

void app_picture_init(app_picture *p)
{
    memset(p, 0, sizeof *p);
    p->view = lesson_view_default();
    /* not given: the stage the trace opens on, its first layer, head and batch row */
    p->view.stage[0] = '\0';
    p->view.layer = p->view.head = p->view.batch = -1;
    p->tile = -1;
}

static void stage_list(const attn_trace *tr, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < tr->n_tensors && n + 2 < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", tr->tensors[i].name);
        if (w < 0 || (size_t)w >= size - n) break;
        n += (size_t)w;
    }
}

/* Whether contract tensor t has an axis called name ("b", "h", "g"). */
static bool has_axis(const attn_tensor *t, const char *name)
{
    char axes[ATTN_MAX_NDIM][8];
    int n = t->info ? attn_stage_axes(t->info->dims, axes, ATTN_MAX_NDIM) : 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(axes[i], name)) return true;
    return false;
}

/* Decode mode at step v->decode_step, as k and [ ] would get there: past the
 * end of a model's text it writes on, as ] does, up to the model's </s>.
 * Returns 0, or 2 (the command line's problem) with the reason in err. */
static int go_to_decode_step(app_state *app, const lesson_view *v, char *err, size_t errsize)
{
    if (!app_do(app, APP_ACT_DECODE, 0)) {
        snprintf(err, errsize, "decode: %s", app->status);
        return 2;
    }
    /* k opens a model at its last token, the built-in example at its first: then to the step asked for */
    if (app->view.decode_step != v->decode_step && app_edit_config_step(app, NULL, NULL, v->decode_step)) {
        snprintf(err, errsize, "decode: %s", app->status);
        return 2;
    }
    const attn_trace *tr = &app->trace;
    bool ended = false;
    while (app->model && tr->token_ids && tr->dims.b == 1 && app->view.decode_step < v->decode_step &&
           app->view.decode_step == app->decode_len &&
           !(ended = tr->token_ids[tr->tokens.len - 1] == app->model->cfg.eos) && app_generate(app) == 0) {}
    if (app->view.decode_step != v->decode_step && ended) {
        snprintf(err, errsize, "--decode-step: %d is past the end of the text: %s wrote its end (</s>) at step %d",
                 v->decode_step, app->model->name, app->decode_len);
        return 2;
    }
    if (app->view.decode_step != v->decode_step) {
        snprintf(err, errsize, "--decode-step: %d is beyond the %d tokens of the longest row", v->decode_step,
                 app->decode_len);
        return 2;
    }
    return 0;
}

/* The layer and the stage asked for (when given). Returns 0, or 2 with the
 * reason in err when the trace has no such layer or stage. */
static int go_to_layer_and_stage(app_state *app, const lesson_view *v, char *err, size_t errsize)
{
    if (v->layer >= app->trace.n_layers) {
        snprintf(err, errsize, "--layer: %d is out of range (this trace has %d layer%s: 0 to %d)", v->layer,
                 app->trace.n_layers, app->trace.n_layers == 1 ? "" : "s", app->trace.n_layers - 1);
        return 2;
    }
    if (v->layer >= 0) app_set_layer(app, v->layer);
    if (v->stage[0] && app_set_stage(app, v->stage)) {
        char list[600];
        stage_list(&app->trace, list, sizeof list);
        snprintf(err, errsize, "--stage: this trace has no stage '%s' (it has %s)", v->stage, list);
        return 2;
    }
    return 0;
}

/* Whether the tensor shown has the head, batch row and query row asked for.
 * Returns 0; or, with the reason in err, 2 when a flag asked for what the
 * trace lacks (the command line's problem), 1 when the trace lacks what the
 * picture needs and no flag asked (the file's). */
static int check_indices(const app_state *app, const lesson_view *v, char *err, size_t errsize)
{
    const attn_dims *d = &app->trace.dims;
    const char *file = app->file_path ? app->file_path : "the trace";
    const attn_tensor *shown = app_tensor(app);
    if (!shown) {
        snprintf(err, errsize, "%s: this trace has no tensor to draw", file);
        return 1;
    }
    if (v->head >= d->h || (v->head < 0 && d->h <= 0 && (has_axis(shown, "h") || has_axis(shown, "g")))) {
        if (v->head >= 0)
            snprintf(err, errsize, "--head: %d is out of range (h = %d: heads 0 to %d)", v->head, d->h, d->h - 1);
        else
            snprintf(err, errsize, "%s: a broken trace: %s has a head axis but the trace has no heads (h = 0)", file,
                     shown->name);
        return v->head >= 0 ? 2 : 1;
    }
    if (v->batch >= d->b || (v->batch < 0 && d->b <= 0 && has_axis(shown, "b"))) {
        if (v->batch >= 0)
            snprintf(err, errsize, "--batch-index: %d is out of range (b = %d: rows 0 to %d)", v->batch, d->b, d->b - 1);
        else
            snprintf(err, errsize, "%s: a broken trace: %s has a batch axis but the trace has no batch rows (b = 0)",
                     file, shown->name);
        return v->batch >= 0 ? 2 : 1;
    }
    if (v->row >= d->s) {
        snprintf(err, errsize, "--row: %d is out of range (s = %d: queries 0 to %d)", v->row, d->s, d->s - 1);
        return 2;
    }
    return 0;
}

/* The head, batch row, query row and view mode asked for. Returns 0, or (with
 * the status in err) 1 or 2 when the compare view's toggled trace would be over
 * the memory budget. */
static int open_view(app_state *app, const lesson_view *v, char *err, size_t errsize)
{
    app->view.head = v->head > 0 ? v->head : 0;
    app->view.batch = v->batch > 0 ? v->batch : 0;
    app->view.row = v->row;
    app->view.compare = v->compare;
    if (v->mode == LESSON_VIEW_GRID) app_do(app, APP_ACT_GRID, 0);
    else if (v->mode == LESSON_VIEW_COMPARE) {
        app_do(app, APP_ACT_COMPARE, 0);
        if (app->alt_status == ATTN_ERR_NOMEM) { /* its toggled trace over the budget: refused, not drawn without it */
            snprintf(err, errsize, "%s", app->status);
            return app->from_file ? 1 : 2;
        }
    } else if (v->mode == LESSON_VIEW_GEOMETRY) app_do(app, APP_ACT_GEOMETRY, 0);
    else if (v->mode == LESSON_VIEW_TRAINING) app_do(app, APP_ACT_CURVES, 0);
    else if (v->mode == LESSON_VIEW_TILES && app_do(app, APP_ACT_TILES, 0) && app->view.mode != LESSON_VIEW_TILES) {
        snprintf(err, errsize, "--view tiles: %s", app->status); /* a trace without tiles: F's own refusal */
        return app->from_file ? 1 : 2;
    } else if (v->mode == LESSON_VIEW_EXPERTS && app_do(app, APP_ACT_EXPERTS, 0) &&
               app->view.mode != LESSON_VIEW_EXPERTS) {
        snprintf(err, errsize, "--view experts: %s", app->status); /* a trace without experts: E's own refusal */
        return app->from_file ? 1 : 2;
    }
    return 0;
}

/* --tile N: the FlashAttention view (opened if --view named none) at key
 * tile N, counted from 1 as the view's caption and a lesson's `tile =` count
 * them: ] pressed N - 1 times from the first. Returns 0, or 2
 * with the reason in err: another view asked for, no tiles, N past the last. */
static int go_to_tile(app_state *app, const app_picture *p, char *err, size_t errsize)
{
    if (p->view.mode != LESSON_VIEW_TILES && p->view.mode != LESSON_VIEW_SINGLE) {
        snprintf(err, errsize, "--tile: steps the FlashAttention view's key tiles; it goes with --view tiles, not --view %s",
                 lesson_view_names[p->view.mode]);
        return 2;
    }
    if (app->view.mode != LESSON_VIEW_TILES && app_do(app, APP_ACT_TILES, 0) && app->view.mode != LESSON_VIEW_TILES) {
        snprintf(err, errsize, "--tile: %s", app->status);
        return 2;
    }
    int T = attn_config_key_tiles(&app->trace.cfg, app->trace.dims.t);
    if (p->tile > T) {
        snprintf(err, errsize, "--tile: %d is out of range (this trace has %d key tile%s: 1 to %d)", p->tile, T,
                 T == 1 ? "" : "s", T);
        return 2;
    }
    for (int i = 1; i < p->tile; i++) app_do(app, APP_ACT_DECODE_NEXT, 0); /* ] */
    return 0;
}

int app_picture_apply(app_state *app, const app_picture *p, char *err, size_t errsize)
{
    const lesson_view *v = &p->view;
    int rc;
    if (v->decode_step > 0 && (rc = go_to_decode_step(app, v, err, errsize))) return rc;
    /* a flag asking for what the trace lacks is the command line's problem (exit 2);
     * a trace that lacks what the picture needs when no flag asked is the file's (exit 1) */
    if ((rc = go_to_layer_and_stage(app, v, err, errsize)) || (rc = check_indices(app, v, err, errsize)) ||
        (rc = open_view(app, v, err, errsize)) || (p->tile > 0 && (rc = go_to_tile(app, p, err, errsize))))
        return rc;
    if (p->font_scale > 0) app->font_scale = p->font_scale;
    if (app->train.problem[0]) /* the picture is still drawn, without the training panel */
        fprintf(stderr, "attnlab: %s (drawn without the training panel)\n", app->train.problem);
    app->status[0] = '\0';
    app->status_error = false;
    return 0;
}

int app_picture_open(app_state *app, const app_picture *p, const char *lang, char *err, size_t errsize)
{
    int rc = 0;
    app_player_init(&app->lesson, lang, NULL);
    app->lesson.keep_progress = false; /* a picture does not count as studying */
    if (p->lesson && app_lesson_open(app, p->lesson, p->step > 0 ? p->step - 1 : 0, err, errsize)) return 2;
    if (p->lesson && p->step > app->lesson.ls.n_steps) {
        snprintf(err, errsize, "--step: %s has %d steps, not %d", p->lesson, app->lesson.ls.n_steps, p->step);
        return 2;
    }
    if (p->picker && app_lesson_picker(app)) {
        snprintf(err, errsize, "%s", app->status);
        return 1;
    }
    if (p->font_scale > 0) app->font_scale = p->font_scale;
    if (!p->lesson && (rc = app_picture_apply(app, p, err, errsize))) return rc;
    if (p->present) app_do(app, APP_ACT_PRESENT, 0); /* after --font-scale: at least 1.5×, or more if asked */
    return 0;
}
