/* app.c — the visualizer's state: settings, recomputation and event handling. */
#include "app.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"
#include "i18n.h"
#include "trace_io.h"
#include "utf8.h"
#include "view.h"

#define EXAMPLE_SOURCE "you are a cat girl | I love AI"
#define MAX_HEADS_OFFERED 64

void ui_app_status(ui_app *app, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(app->status, sizeof app->status, fmt, ap);
    va_end(ap);
    app->status_error = error;
    app->dirty = true;
}

const char *ui_toggle_name(ui_toggle t)
{
    switch (t) {
    /* TRANSLATORS: the mask the compare view toggles; also in "%s toggled" */
    case UI_TOGGLE_CAUSAL: return _("causal mask");
    case UI_TOGGLE_PADDING: return _("padding mask");
    default: return _("fill value");
    }
}

const attn_tensor *ui_app_tensor(const ui_app *app)
{
    if (app->stage < 0 || app->stage >= app->trace.n_tensors) return NULL;
    return &app->trace.tensors[app->stage];
}

const char *ui_app_compare_stage(const ui_app *app)
{
    const attn_tensor *t = ui_app_tensor(app);
    if (t && (!strcmp(t->name, "weights") || !strcmp(t->name, "weights_dropout") || !strcmp(t->name, "context")))
        return t->name;
    return "weights";
}

ui_scale ui_app_scale(const ui_app *app, const attn_tensor *t)
{
    int n = app->trace.n_tensors;
    int idx = -1;
    if (t >= app->trace.tensors && t < app->trace.tensors + n) idx = (int)(t - app->trace.tensors);
    else if (app->has_alt && t >= app->alt.tensors && t < app->alt.tensors + app->alt.n_tensors)
        idx = n + (int)(t - app->alt.tensors);
    if (idx < 0 || !app->scales) return ui_view_scale(t);
    /* computed once per trace: lo > hi marks an entry not yet filled */
    if (app->scales[idx].lo > app->scales[idx].hi) app->scales[idx] = ui_view_scale(t);
    return app->scales[idx];
}

const char *ui_app_title(const ui_app *app, char *buf, size_t size)
{
    const attn_tensor *t = ui_app_tensor(app);
    /* ASCII only: SDL 2.26 on X11 writes a non-ASCII title as Latin-1 WM_NAME
     * and leaves _NET_WM_NAME alone unless the locale is UTF-8 */
    int n = snprintf(buf, size, "attnlab - %s - head %d - batch row %d%s", t ? t->name : "?", app->head, app->batch,
                     app->decode ? " - decoding" : "");
    if (app->lesson.open && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " - lesson step %d/%d", app->lesson.step + 1, app->lesson.ls.n_steps);
    return buf;
}

/* ---- computing ------------------------------------------------------------ */

/* The config actually run: the settings, or in decode mode the first
 * decode_step tokens with all but the last already in the KV cache. */
static int effective_config(ui_app *app, const attn_config *base, attn_config *out, attn_error *err)
{
    if (!app->decode) return attn_config_copy(out, base, err) ? -1 : 0;
    if (attn_config_decode(base, app->decode_step, out, &app->decode_len, err)) return -1;
    if (app->decode_step > app->decode_len) app->decode_step = app->decode_len;
    if (app->decode_step < 1) app->decode_step = 1;
    return 0;
}

static int stage_index(const attn_trace *tr, const char *name)
{
    const attn_tensor *t = attn_trace_find(tr, name);
    return t ? (int)(t - tr->tensors) : -1;
}

/* After a new trace: the same stage if it still exists, else the nearest
 * earlier one in the pipeline; head, batch row and selected row clamped. */
static void keep_place(ui_app *app, const char *old_stage)
{
    int idx = stage_index(&app->trace, old_stage);
    if (idx < 0) {
        int want = attn_stage_index(old_stage);
        idx = 0;
        for (int i = 0; i < app->trace.n_tensors; i++) {
            int p = attn_stage_index(app->trace.tensors[i].name);
            if (p >= 0 && p <= want) idx = i;
        }
    }
    app->stage = idx;
    if (app->head >= app->trace.dims.h) app->head = app->trace.dims.h - 1;
    if (app->head < 0) app->head = 0;
    if (app->batch >= app->trace.dims.b) app->batch = app->trace.dims.b - 1;
    if (app->batch < 0) app->batch = 0;
    if (app->sel_row >= app->trace.dims.s) app->sel_row = -1;
}

static void reset_scales(ui_app *app)
{
    free(app->scales);
    int n = app->trace.n_tensors + (app->has_alt ? app->alt.n_tensors : 0);
    app->scales = malloc((size_t)(n ? n : 1) * sizeof *app->scales);
    for (int i = 0; app->scales && i < n; i++) app->scales[i] = (ui_scale){UI_CMAP_DIVERGING, 1.0f, -1.0f};
    app->generation++;
    app->dirty = true;
    /* what was on screen no longer matches: no cell to hover or click until the next frame */
    ui_layout_clear(&app->layout);
    app->hover_area = app->hover_i = app->hover_j = -1;
}

/* What `c` does to the causal mask: on ⇄ off, and a reversed (pitfall) mask
 * is corrected to on. */
static attn_causal causal_toggled(attn_causal c)
{
    return c == ATTN_CAUSAL_OFF ? ATTN_CAUSAL_ON : c == ATTN_CAUSAL_ON ? ATTN_CAUSAL_OFF : ATTN_CAUSAL_ON;
}

/* Compare view: the same inputs with one mask toggled. */
static void compute_alt(ui_app *app)
{
    if (app->has_alt) attn_trace_free(&app->alt);
    app->has_alt = false;
    if (app->view != UI_VIEW_COMPARE) return;
    attn_config c;
    attn_error err;
    if (attn_config_copy(&c, &app->trace.cfg, &err)) return;
    switch (app->compare_with) {
    case UI_TOGGLE_CAUSAL: c.causal = causal_toggled(c.causal); break;
    case UI_TOGGLE_PADDING: c.pad_mask = !c.pad_mask; break;
    default: c.mask_value = isinf(c.mask_value) ? -1e9f : -INFINITY; break;
    }
    attn_inputs in;
    attn_inputs_from_trace(&app->trace, &in);
    if (app->trace.dims.cross && app->compare_with == UI_TOGGLE_CAUSAL)
        ui_app_status(app, true, "%s", _("cross-attention has no causal mask to toggle: its keys are the source"));
    else if (attn_trace_run(&c, &in, &app->alt, &err))
        ui_app_status(app, true, _("compare: %s"), err.msg);
    else
        app->has_alt = true;
    attn_config_free(&c);
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Whether `next` makes the same inputs (embeddings, weights) as the current
 * trace: then a toggle recomputes only the attention, not the seeded inputs. */
static bool same_inputs(const ui_app *app, const attn_config *a, const attn_config *b)
{
    int step = app->decode ? app->decode_step : 0;
    return same_str(a->tokens, b->tokens) && same_str(a->source_tokens, b->source_tokens) && a->seq == b->seq &&
           a->batch == b->batch && a->d_model == b->d_model && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->mode == b->mode && a->pad_side == b->pad_side && a->past == b->past && a->seed == b->seed &&
           same_str(a->weights_path, b->weights_path) && same_str(a->input_path, b->input_path) &&
           step == app->trace_step && app->trace.n_tensors > 0;
}

/* Runs settings `next`; on success they become app->cfg (ownership moves),
 * on failure nothing changes and the status line says why. */
static int commit(ui_app *app, attn_config *next)
{
    attn_config run;
    attn_error err;
    attn_trace tr;
    char old_stage[ATTN_MAX_NAME];
    const attn_tensor *cur = ui_app_tensor(app);
    snprintf(old_stage, sizeof old_stage, "%s", cur ? cur->name : "weights");

    int saved_step = app->decode_step;
    bool reuse = same_inputs(app, &app->cfg, next);
    if (effective_config(app, next, &run, &err)) goto fail;
    attn_inputs in;
    if (app->from_file) attn_inputs_from_trace(&app->file, &in);
    else if (reuse) attn_inputs_from_trace(&app->trace, &in);
    attn_status st = attn_trace_run(&run, app->from_file || reuse ? &in : NULL, &tr, &err);
    attn_config_free(&run);
    if (st) goto fail;

    attn_trace_free(&app->trace);
    app->trace = tr;
    app->trace_step = app->decode ? app->decode_step : 0;
    attn_config_free(&app->cfg);
    app->cfg = *next;
    keep_place(app, old_stage);
    compute_alt(app);
    reset_scales(app);
    return 0;
fail:
    app->decode_step = saved_step;
    attn_config_free(next);
    ui_app_status(app, true, "%s", err.msg);
    return -1;
}

static void stop_edit(ui_app *app);

int ui_app_show(ui_app *app, attn_config *cfg, const ui_show *s)
{
    bool decode = app->decode;
    int step = app->decode_step;
    ui_view_mode view = app->view;
    ui_toggle cmp = app->compare_with;
    if (app->from_file) {
        attn_config_free(cfg);
        ui_app_status(app, true, "%s", _("a lesson cannot drive a trace file"));
        return -1;
    }
    if (app->editing) stop_edit(app);
    app->decode = s->decode_step > 0;
    app->decode_step = s->decode_step;
    app->view = s->view;
    app->compare_with = s->compare;
    if (commit(app, cfg)) {
        app->decode = decode;
        app->decode_step = step;
        app->view = view;
        app->compare_with = cmp;
        compute_alt(app);
        reset_scales(app);
        return -1;
    }
    if (s->stage) ui_app_set_stage(app, s->stage);
    const attn_dims *d = &app->trace.dims;
    app->head = s->head >= 0 && s->head < d->h ? s->head : 0;
    app->batch = s->batch >= 0 && s->batch < d->b ? s->batch : 0;
    app->sel_row = s->row >= 0 && s->row < d->s ? s->row : -1;
    app->help = false;
    app->stage_scroll = 0;
    app->dirty = true;
    return 0;
}

int ui_app_set(ui_app *app, const char *key, const char *value)
{
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, &app->cfg, &err)) {
        ui_app_status(app, true, "%s", err.msg);
        return -1;
    }
    if (attn_config_set(&next, key, value, &err)) {
        attn_config_free(&next);
        ui_app_status(app, true, "%s", err.msg);
        return -1;
    }
    return commit(app, &next);
}

static void init_common(ui_app *app)
{
    memset(app, 0, sizeof *app);
    app->sel_row = -1;
    app->hover_area = app->hover_i = app->hover_j = -1;
    app->mouse_x = app->mouse_y = -1;
    app->font_scale = 1.0f;
    app->pixel_ratio = 1.0f;
    app->dirty = true;
    ui_player_init(&app->lesson, "en", NULL);
}

int ui_app_init(ui_app *app, const attn_config *cfg, char *err_out, size_t errsize)
{
    attn_error err;
    init_common(app);
    if (attn_config_copy(&app->cfg, cfg, &err) || attn_trace_run(&app->cfg, NULL, &app->trace, &err)) {
        snprintf(err_out, errsize, "%s", err.msg);
        attn_config_free(&app->cfg);
        return -1;
    }
    keep_place(app, "weights");
    reset_scales(app);
    return 0;
}

int ui_app_init_file(ui_app *app, const char *path, char *err_out, size_t errsize)
{
    attn_error err;
    init_common(app);
    if (attn_trace_load(path, &app->file, &err)) {
        snprintf(err_out, errsize, "%s", err.msg);
        return -1;
    }
    app->from_file = true;
    app->file_path = strdup(path);
    /* the loaded trace is shown as it is; a change recomputes from its inputs */
    if (attn_trace_load(path, &app->trace, &err) ||
        attn_config_copy(&app->cfg, &app->file.cfg, &err) != ATTN_OK) {
        snprintf(err_out, errsize, "%s", err.msg);
        ui_app_free(app);
        return -1;
    }
    if (app->cfg.tokens == NULL && app->file.tokens.rows) app->cfg.tokens = attn_tokens_text(&app->file.tokens, 0);
    if (app->file.dims.cross && app->file.source.rows && !app->cfg.source_tokens) app->cfg.source_tokens = attn_tokens_text(&app->file.source, 0);
    keep_place(app, "weights");
    reset_scales(app);
    return 0;
}

void ui_app_free(ui_app *app)
{
    ui_player_free(&app->lesson);
    attn_trace_free(&app->trace);
    if (app->has_alt) attn_trace_free(&app->alt);
    if (app->from_file) attn_trace_free(&app->file);
    attn_config_free(&app->cfg);
    free(app->file_path);
    free(app->scales);
    app->scales = NULL;
    app->file_path = NULL;
    app->has_alt = app->from_file = false;
}

int ui_app_set_stage(ui_app *app, const char *name)
{
    int i = stage_index(&app->trace, name);
    if (i < 0) return -1;
    app->stage = i;
    app->dirty = true;
    return 0;
}

/* ---- actions -------------------------------------------------------------- */

/* A settings change that a trace loaded from a file cannot take. */
static bool refuse_in_file(ui_app *app, const char *what)
{
    if (!app->from_file) return false;
    ui_app_status(app, true,
                  _("%s: a trace opened from a file keeps its shapes and inputs; run `attnlab --%s ...` to change it"),
                  what, what);
    return true;
}

static int next_divisor(int n, int from, int dir, int limit)
{
    for (int x = from + dir; x >= 1 && x <= limit; x += dir)
        if (n % x == 0) return x;
    return from;
}

static int change_heads(ui_app *app, int dir)
{
    const attn_dims *d = &app->trace.dims;
    int limit = d->d < MAX_HEADS_OFFERED ? d->d : MAX_HEADS_OFFERED;
    int h = next_divisor(d->d, d->h, dir, limit);
    if (h == d->h) {
        ui_app_status(app, false,
                      dir > 0 ? _("heads: %d is the largest divisor of d_model = %d on offer")
                              : _("heads: %d is the smallest divisor of d_model = %d on offer"),
                      d->h, d->d);
        return -1;
    }
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, &app->cfg, &err)) return -1;
    next.heads = h;
    attn_mode m = d->mode;
    next.kv_heads = 0;
    next.mode = m;
    if (m == ATTN_MODE_GQA && !attn_gqa_default_groups(h)) {
        next.mode = ATTN_MODE_MHA;
        ui_app_status(app, false, _("h = %d has no divisor between 1 and %d, so GQA becomes MHA"), h, h);
    } else if (m == ATTN_MODE_GQA && h % d->g == 0 && d->g > 1 && d->g < h) {
        next.kv_heads = d->g;
        next.mode = ATTN_MODE_AUTO;
    }
    return commit(app, &next);
}

static int change_kv(ui_app *app, int dir)
{
    const attn_dims *d = &app->trace.dims;
    int g = next_divisor(d->h, d->g, dir, d->h);
    if (g == d->g) {
        ui_app_status(app, false,
                      dir > 0 ? _("kv_heads: %d is the largest divisor of heads = %d")
                              : _("kv_heads: %d is the smallest divisor of heads = %d"),
                      d->g, d->h);
        return -1;
    }
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, &app->cfg, &err)) return -1;
    next.kv_heads = g;
    next.mode = ATTN_MODE_AUTO;
    return commit(app, &next);
}

static int cycle_mode(ui_app *app)
{
    const attn_dims *d = &app->trace.dims;
    attn_mode m = d->mode == ATTN_MODE_MHA ? ATTN_MODE_GQA : d->mode == ATTN_MODE_GQA ? ATTN_MODE_MQA : ATTN_MODE_MHA;
    if (m == ATTN_MODE_GQA && !attn_gqa_default_groups(d->h)) {
        m = ATTN_MODE_MQA;
        ui_app_status(app, false, _("h = %d has no divisor between 1 and %d: no GQA, so MHA → MQA"), d->h, d->h);
    }
    if (d->h == 1) {
        ui_app_status(app, false, "%s", _("with one head MHA and MQA are the same: add heads with h"));
        return -1;
    }
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, &app->cfg, &err)) return -1;
    next.mode = m;
    next.kv_heads = 0;
    return commit(app, &next);
}

static int toggle_cross(ui_app *app)
{
    attn_config next;
    attn_error err;
    if (app->decode) {
        ui_app_status(app, true, "%s", _("cross-attention has no KV-cache decoding here: leave decode mode (k) first"));
        return -1;
    }
    if (attn_config_copy(&next, &app->cfg, &err)) return -1;
    if (next.source_tokens) {
        free(next.source_tokens);
        next.source_tokens = NULL;
        next.causal = true;
        int rc = commit(app, &next);
        if (!rc) ui_app_status(app, false, "%s", _("self-attention: keys are the sentence itself, causal mask back on"));
        return rc;
    }
    if (next.tokens) { /* the user's own sentence: ask for the source */
        attn_config_free(&next);
        app->editing = true;
        app->edit_field = 1;
        snprintf(app->edit[1], UI_EDIT_MAX, "%s", "");
        app->edit_cursor = 0;
        SDL_StartTextInput();
        ui_app_status(app, false, "%s",
                      _("type the source sentence (one row per target row, rows split by |), then Enter"));
        return 0;
    }
    next.source_tokens = strdup(EXAMPLE_SOURCE);
    next.causal = false;
    next.rope = false;
    next.past = 0;
    int rc = commit(app, &next);
    if (!rc)
        ui_app_status(app, false, _("cross-attention: keys and values come from the source \"%s\"; no causal mask"),
                      EXAMPLE_SOURCE);
    return rc;
}

static void start_edit(ui_app *app)
{
    char *text = app->cfg.tokens ? strdup(app->cfg.tokens) : attn_tokens_text(&app->trace.tokens, 0);
    if (app->decode) {
        free(text);
        attn_dims d;
        attn_tokens tk = {0}, src = {0};
        attn_error err;
        text = NULL;
        if (!attn_config_resolve(&app->cfg, &d, &tk, &src, &err)) text = attn_tokens_text(&tk, 0);
        attn_tokens_free(&tk);
        attn_tokens_free(&src);
    }
    snprintf(app->edit[0], UI_EDIT_MAX, "%s", text ? text : "");
    free(text);
    snprintf(app->edit[1], UI_EDIT_MAX, "%s", app->cfg.source_tokens ? app->cfg.source_tokens : "");
    app->edit_field = 0;
    app->edit_cursor = (int)strlen(app->edit[0]);
    app->compose[0] = '\0';
    app->editing = true;
    SDL_StartTextInput();
}

static void stop_edit(ui_app *app)
{
    app->editing = false;
    app->compose[0] = '\0';
    SDL_StopTextInput();
    app->dirty = true;
}

static void apply_edit(ui_app *app)
{
    attn_config next;
    attn_error err;
    if (attn_config_copy(&next, &app->cfg, &err)) return;
    if (attn_config_set(&next, "tokens", app->edit[0], &err) ||
        (app->edit[1][0] ? attn_config_set(&next, "source_tokens", app->edit[1], &err) : 0)) {
        attn_config_free(&next);
        ui_app_status(app, true, "%s", err.msg);
        return;
    }
    if (next.source_tokens && !app->edit[1][0]) {
        free(next.source_tokens);
        next.source_tokens = NULL;
        next.causal = true;
    }
    if (next.source_tokens) {
        next.causal = false;
        next.rope = false;
    }
    next.seq = next.batch = 0;
    if (commit(app, &next) == 0) {
        stop_edit(app);
        ui_app_status(app, false, _("tokens: %s"), app->edit[0]);
    }
}

static int toggle_decode(ui_app *app)
{
    if (app->decode) {
        app->decode = false;
        attn_config same;
        attn_error err;
        if (attn_config_copy(&same, &app->cfg, &err)) return -1;
        int rc = commit(app, &same);
        if (!rc) ui_app_status(app, false, "%s", _("decode mode off: the full pass again"));
        return rc;
    }
    if (app->from_file) return refuse_in_file(app, "past"), -1;
    if (app->trace.dims.cross) {
        ui_app_status(app, true, "%s", _("decode mode is for self-attention: switch cross-attention off (x) first"));
        return -1;
    }
    app->decode = true;
    app->decode_step = 1;
    attn_config same;
    attn_error err;
    if (attn_config_copy(&same, &app->cfg, &err)) return -1;
    if (commit(app, &same)) {
        app->decode = false;
        return -1;
    }
    ui_app_set_stage(app, "weights");
    app->sel_row = -1;
    ui_app_status(app, false, "%s", _("decode mode: ] next token, [ previous; the new query row reads every cached key"));
    return 0;
}

static int decode_step(ui_app *app, int dir)
{
    if (!app->decode) {
        ui_app_status(app, false, "%s", _("press k for KV-cache decode mode first"));
        return -1;
    }
    int step = app->decode_step + dir;
    if (step < 1 || step > app->decode_len) return -1;
    app->decode_step = step;
    attn_config same;
    attn_error err;
    if (attn_config_copy(&same, &app->cfg, &err)) return -1;
    return commit(app, &same);
}

static bool config_action(ui_app *app, ui_action act)
{
    attn_config next;
    attn_error err;
    switch (act) {
    case UI_ACT_MODE: return !refuse_in_file(app, "mode") && cycle_mode(app) == 0;
    case UI_ACT_HEADS_UP: return !refuse_in_file(app, "heads") && change_heads(app, +1) == 0;
    case UI_ACT_HEADS_DOWN: return !refuse_in_file(app, "heads") && change_heads(app, -1) == 0;
    case UI_ACT_KV_UP: return !refuse_in_file(app, "kv-heads") && change_kv(app, +1) == 0;
    case UI_ACT_KV_DOWN: return !refuse_in_file(app, "kv-heads") && change_kv(app, -1) == 0;
    case UI_ACT_CROSS: return !refuse_in_file(app, "source-tokens") && toggle_cross(app) == 0;
    default: break;
    }
    if (attn_config_copy(&next, &app->cfg, &err)) return false;
    bool was_reversed = app->cfg.causal == ATTN_CAUSAL_REVERSED;
    switch (act) {
    case UI_ACT_CAUSAL: next.causal = causal_toggled(next.causal); break;
    case UI_ACT_ROPE: next.rope = !next.rope; break;
    case UI_ACT_FILL: next.mask_value = isinf(next.mask_value) ? -1e9f : -INFINITY; break;
    case UI_ACT_TRAIN:
        next.train = !next.train;
        if (next.train && next.dropout <= 0.0f) next.dropout = 0.1f;
        break;
    case UI_ACT_PADDING: /* right → left → off → right */
        if (!next.pad_mask) {
            next.pad_mask = true;
            next.pad_side = ATTN_PAD_RIGHT;
        } else if (next.pad_side == ATTN_PAD_RIGHT) {
            if (app->from_file) {
                next.pad_mask = false;
            } else {
                next.pad_side = ATTN_PAD_LEFT;
            }
        } else {
            next.pad_mask = false;
            next.pad_side = ATTN_PAD_RIGHT;
        }
        break;
    default: attn_config_free(&next); return false;
    }
    if (commit(app, &next)) return false;
    const attn_config *c = &app->cfg;
    switch (act) {
    case UI_ACT_CAUSAL:
        ui_app_status(app, false, "%s", was_reversed ? _("causal mask on: the reversed mask is corrected")
                                        : c->causal  ? _("causal mask on")
                                                     : _("causal mask off"));
        break;
    case UI_ACT_ROPE: ui_app_status(app, false, "%s", c->rope ? _("RoPE on") : _("RoPE off")); break;
    case UI_ACT_FILL:
        ui_app_status(app, false, _("masked scores filled with %s"), isinf(c->mask_value) ? "−∞" : "−1e9");
        break;
    case UI_ACT_TRAIN:
        if (c->train) ui_app_status(app, false, _("training: dropout p = %g on the weights and the output"), c->dropout);
        else ui_app_status(app, false, "%s", _("evaluation: no dropout"));
        break;
    default:
        ui_app_status(app, false, "%s", !c->pad_mask ? _("padding mask off: queries may attend to <pad> keys")
                                        : c->pad_side == ATTN_PAD_LEFT ? _("padding on the left, masked")
                                                                       : _("padding on the right, masked"));
        break;
    }
    return true;
}

bool ui_app_do(ui_app *app, ui_action act, int arg)
{
    int n = app->trace.n_tensors;
    const attn_dims *d = &app->trace.dims;
    app->dirty = true;
    switch (act) {
    case UI_ACT_NONE: return false;
    case UI_ACT_STAGE:
        if (arg < 0 || arg >= n) return false;
        app->stage = arg;
        return true;
    case UI_ACT_STAGE_PREV:
        if (app->stage <= 0) return false;
        app->stage--;
        return true;
    case UI_ACT_STAGE_NEXT:
        if (app->stage >= n - 1) return false;
        app->stage++;
        return true;
    case UI_ACT_HEAD:
        if (arg < 0 || arg >= d->h) return false;
        app->head = arg;
        return true;
    case UI_ACT_HEAD_PREV: app->head = (app->head + d->h - 1) % d->h; return true;
    case UI_ACT_HEAD_NEXT: app->head = (app->head + 1) % d->h; return true;
    case UI_ACT_BATCH_NEXT:
        app->batch = (app->batch + 1) % d->b;
        ui_app_status(app, false, _("batch row %d of %d"), app->batch, d->b);
        return true;
    case UI_ACT_GRID:
        app->view = app->view == UI_VIEW_GRID ? UI_VIEW_SINGLE : UI_VIEW_GRID;
        if (app->has_alt) { /* leaving the compare view: its toggled trace goes */
            compute_alt(app);
            reset_scales(app);
        }
        return true;
    case UI_ACT_COMPARE:
        app->view = app->view == UI_VIEW_COMPARE ? UI_VIEW_SINGLE : UI_VIEW_COMPARE;
        compute_alt(app);
        reset_scales(app);
        return true;
    case UI_ACT_COMPARE_WITH:
        app->compare_with = arg >= 0 && arg < UI_TOGGLE_COUNT ? (ui_toggle)arg
                                                               : (ui_toggle)((app->compare_with + 1) % UI_TOGGLE_COUNT);
        if (app->view != UI_VIEW_COMPARE) app->view = UI_VIEW_COMPARE;
        compute_alt(app);
        reset_scales(app);
        return true;
    case UI_ACT_EDIT:
        if (app->from_file) return refuse_in_file(app, "tokens"), true;
        start_edit(app);
        return true;
    case UI_ACT_DECODE: return toggle_decode(app) == 0;
    case UI_ACT_DECODE_PREV: return decode_step(app, -1) == 0;
    case UI_ACT_DECODE_NEXT: return decode_step(app, +1) == 0;
    case UI_ACT_SAVE: app->save_requested = true; return true;
    case UI_ACT_FULLSCREEN:
        app->fullscreen = !app->fullscreen;
        app->fullscreen_changed = true;
        return true;
    case UI_ACT_FONT_UP:
        if (app->font_scale >= 3.0f) return false;
        app->font_scale = fminf(3.0f, app->font_scale + 0.25f);
        return true;
    case UI_ACT_FONT_DOWN:
        if (app->font_scale <= 0.75f) return false;
        app->font_scale = fmaxf(0.75f, app->font_scale - 0.25f);
        return true;
    case UI_ACT_HELP: app->help = !app->help; return true;
    case UI_ACT_ROW:
        app->sel_row = (arg == app->sel_row || arg < 0 || arg >= d->s) ? -1 : arg;
        return true;
    case UI_ACT_QUIT: app->quit = true; return true;
    case UI_ACT_LESSON_NEXT: return ui_player_go(app, app->lesson.step + 1) == 0;
    case UI_ACT_LESSON_PREV: return ui_player_go(app, app->lesson.step - 1) == 0;
    case UI_ACT_LESSON_RESTORE: return ui_player_go(app, app->lesson.step) == 0;
    case UI_ACT_LESSON_CHOICE: ui_player_choice(app, arg >> 8, arg & 255); return true;
    case UI_ACT_LESSON_CHECK: ui_player_check(app, arg); return true;
    case UI_ACT_LESSON_REVEAL: ui_player_reveal(app, arg); return true;
    case UI_ACT_LESSON_FIELD: /* arg -1: leave the field */
        if (arg >= 0 && app->lesson.focus < 0) SDL_StartTextInput();
        if (arg < 0 && app->lesson.focus >= 0) SDL_StopTextInput();
        app->lesson.focus = arg;
        return true;
    case UI_ACT_PICKER:
        if (app->lesson.picker) {
            app->lesson.picker = false;
            return true;
        }
        return ui_player_picker(app) == 0;
    case UI_ACT_PICK: return ui_player_pick(app, arg) == 0;
    case UI_ACT_PICKER_RESET:
        if (!app->lesson.confirm_reset) {
            app->lesson.confirm_reset = true;
            return true;
        }
        app->lesson.confirm_reset = false;
        ui_player_reset_progress(app);
        return true;
    default: return config_action(app, act);
    }
}

/* ---- events --------------------------------------------------------------- */


static bool find_cell(const ui_app *app, int x, int y, int *area, int *i, int *j)
{
    for (int a = 0; a < app->layout.n_areas; a++) {
        const ui_heat_area *h = &app->layout.areas[a];
        if (ui_rect_contains(h->r, x, y) &&
            ui_heat_cell_at(h->r.w, h->r.h, h->rows, h->cols, x - h->r.x, y - h->r.y, i, j) == 0) {
            *area = a;
            return true;
        }
    }
    return false;
}

static void edit_insert(ui_app *app, const char *text)
{
    char *s = app->edit[app->edit_field];
    size_t len = strlen(s), add = strlen(text);
    if (len + add >= UI_EDIT_MAX) {
        ui_app_status(app, true, _("tokens: the text field holds at most %d bytes"), UI_EDIT_MAX - 1);
        return;
    }
    memmove(s + app->edit_cursor + add, s + app->edit_cursor, len - (size_t)app->edit_cursor + 1);
    memcpy(s + app->edit_cursor, text, add);
    app->edit_cursor += (int)add;
}

static bool edit_key(ui_app *app, const SDL_KeyboardEvent *k)
{
    char *s = app->edit[app->edit_field];
    bool ctrl = (k->keysym.mod & KMOD_CTRL) != 0;
    if (app->compose[0]) return false; /* the IME owns the keys while composing */
    switch (k->keysym.sym) {
    case SDLK_ESCAPE: stop_edit(app); ui_app_status(app, false, "%s", _("edit cancelled")); return true;
    case SDLK_RETURN:
    case SDLK_KP_ENTER: apply_edit(app); return true;
    case SDLK_BACKSPACE: {
        int p = (int)attn_utf8_prev(s, (size_t)app->edit_cursor);
        memmove(s + p, s + app->edit_cursor, strlen(s) - (size_t)app->edit_cursor + 1);
        app->edit_cursor = p;
        return true;
    }
    case SDLK_DELETE: {
        int p = (int)attn_utf8_next(s, strlen(s), (size_t)app->edit_cursor);
        memmove(s + app->edit_cursor, s + p, strlen(s) - (size_t)p + 1);
        return true;
    }
    case SDLK_LEFT: app->edit_cursor = (int)attn_utf8_prev(s, (size_t)app->edit_cursor); return true;
    case SDLK_RIGHT: app->edit_cursor = (int)attn_utf8_next(s, strlen(s), (size_t)app->edit_cursor); return true;
    case SDLK_HOME: app->edit_cursor = 0; return true;
    case SDLK_END: app->edit_cursor = (int)strlen(s); return true;
    case SDLK_TAB:
        if (app->cfg.source_tokens || app->edit_field == 1 || app->edit[1][0]) {
            app->edit_field = !app->edit_field;
            app->edit_cursor = (int)strlen(app->edit[app->edit_field]);
        }
        return true;
    case SDLK_u:
        if (ctrl) { s[0] = '\0'; app->edit_cursor = 0; return true; }
        return false;
    case SDLK_v:
        if (ctrl && SDL_HasClipboardText()) {
            char *clip = SDL_GetClipboardText();
            if (clip) {
                for (char *c = clip; *c; c++)
                    if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
                edit_insert(app, clip);
                SDL_free(clip);
            }
            return true;
        }
        return false;
    default: return false;
    }
}

static ui_action key_action(const SDL_Keysym *ks, int *arg)
{
    bool shift = (ks->mod & KMOD_SHIFT) != 0;
    *arg = 0;
    switch (ks->sym) {
    case SDLK_LEFT: return UI_ACT_STAGE_PREV;
    case SDLK_RIGHT: return UI_ACT_STAGE_NEXT;
    case SDLK_UP: return UI_ACT_HEAD_PREV;
    case SDLK_DOWN: return UI_ACT_HEAD_NEXT;
    case SDLK_b: return UI_ACT_BATCH_NEXT;
    case SDLK_c: return UI_ACT_CAUSAL;
    case SDLK_p: return UI_ACT_PADDING;
    case SDLK_m: return UI_ACT_MODE;
    case SDLK_r: return UI_ACT_ROPE;
    case SDLK_d: return UI_ACT_TRAIN;
    case SDLK_i: return UI_ACT_FILL;
    case SDLK_x: return UI_ACT_CROSS;
    case SDLK_h: return shift ? UI_ACT_HEADS_DOWN : UI_ACT_HEADS_UP;
    case SDLK_v: return shift ? UI_ACT_KV_DOWN : UI_ACT_KV_UP;
    case SDLK_g: return UI_ACT_GRID;
    case SDLK_TAB: return UI_ACT_COMPARE;
    case SDLK_t: *arg = -1; return UI_ACT_COMPARE_WITH;
    case SDLK_e: return UI_ACT_EDIT;
    case SDLK_k: return UI_ACT_DECODE;
    case SDLK_RIGHTBRACKET: return UI_ACT_DECODE_NEXT;
    case SDLK_LEFTBRACKET: return UI_ACT_DECODE_PREV;
    case SDLK_s: return UI_ACT_SAVE;
    case SDLK_f: return UI_ACT_FULLSCREEN;
    case SDLK_PLUS:
    case SDLK_KP_PLUS: return UI_ACT_FONT_UP;
    case SDLK_EQUALS: return shift ? UI_ACT_FONT_UP : UI_ACT_NONE;
    case SDLK_MINUS:
    case SDLK_KP_MINUS: return UI_ACT_FONT_DOWN;
    case SDLK_QUESTION:
    case SDLK_F1: return UI_ACT_HELP;
    case SDLK_SLASH: return shift ? UI_ACT_HELP : UI_ACT_NONE;
    case SDLK_q: return UI_ACT_QUIT;
    default: return UI_ACT_NONE;
    }
}

static bool mouse_down(ui_app *app, int x, int y)
{
    const ui_layout *L = &app->layout;
    if (app->lesson.focus >= 0) ui_app_do(app, UI_ACT_LESSON_FIELD, -1); /* a click leaves the answer field */
    if (app->lesson.picker) { /* the picker covers the window: only its rows take clicks */
        for (int h = L->n_hits - 1; h >= 0; h--)
            if (L->hits[h].action == UI_ACT_PICK && ui_rect_contains(L->hits[h].r, x, y))
                return ui_app_do(app, UI_ACT_PICK, L->hits[h].arg);
        return false;
    }
    for (int h = L->n_hits - 1; h >= 0; h--) /* later hits are drawn on top */
        if (ui_rect_contains(L->hits[h].r, x, y)) return ui_app_do(app, L->hits[h].action, L->hits[h].arg);
    if (app->help) return ui_app_do(app, UI_ACT_HELP, 0); /* a click anywhere closes the help */
    int area, i, j;
    if (!find_cell(app, x, y, &area, &i, &j)) return false;
    const ui_heat_area *a = &L->areas[area];
    if (a->pane == 0 && ui_player_cell(app, a->stage, a->head, i, j)) return true;
    if (app->view == UI_VIEW_GRID && a->head != app->head) return ui_app_do(app, UI_ACT_HEAD, a->head);
    ui_view_slice v;
    if (ui_view_make(&app->trace, a->stage, app->batch, a->head, &v) == 0 && v.row_axis == UI_AXIS_QUERY)
        return ui_app_do(app, UI_ACT_ROW, i);
    return false;
}

/* Keys of the lesson panel and picker; true when the key was theirs. */
static bool lesson_key(ui_app *app, const SDL_Keysym *ks)
{
    ui_player *p = &app->lesson;
    SDL_Keycode k = ks->sym;
    if (p->picker) {
        int n = p->have_catalog ? p->catalog.n : 0;
        switch (k) {
        case SDLK_UP: p->sel = n ? (p->sel + n - 1) % n : 0; break;
        case SDLK_DOWN: p->sel = n ? (p->sel + 1) % n : 0; break;
        case SDLK_RETURN:
        case SDLK_KP_ENTER:
        case SDLK_SPACE: ui_app_do(app, UI_ACT_PICK, p->sel); break;
        case SDLK_ESCAPE:
        case SDLK_l: p->picker = false; break;
        case SDLK_DELETE: ui_app_do(app, UI_ACT_PICKER_RESET, 0); return true;
        case SDLK_q: return false;
        default: return true; /* the picker is modal */
        }
        p->confirm_reset = false;
        app->dirty = true;
        return true;
    }
    if (p->open && p->focus >= 0) { /* typing a numeric answer */
        switch (k) {
        case SDLK_BACKSPACE: ui_player_backspace(app); return true;
        case SDLK_RETURN:
        case SDLK_KP_ENTER: ui_app_do(app, UI_ACT_LESSON_CHECK, p->focus); return true;
        case SDLK_ESCAPE:
        case SDLK_TAB: ui_app_do(app, UI_ACT_LESSON_FIELD, -1); return true;
        default: return true; /* text arrives as SDL_TEXTINPUT */
        }
    }
    if (k == SDLK_l) return ui_app_do(app, UI_ACT_PICKER, 0), true;
    if (!p->open) return false;
    switch (k) {
    case SDLK_SPACE:
    case SDLK_PAGEDOWN:
        if (k == SDLK_PAGEDOWN && (ks->mod & KMOD_SHIFT)) break;
        if (p->step + 1 < p->ls.n_steps) ui_app_do(app, UI_ACT_LESSON_NEXT, 0);
        else ui_app_status(app, false, _("That was the last step. l opens the lesson list."));
        return true;
    case SDLK_BACKSPACE:
    case SDLK_PAGEUP:
        if (p->step > 0) ui_app_do(app, UI_ACT_LESSON_PREV, 0);
        return true;
    default: break;
    }
    return false;
}

bool ui_app_event(ui_app *app, const SDL_Event *ev)
{
    switch (ev->type) {
    case SDL_QUIT: app->quit = true; return true;
    case SDL_WINDOWEVENT:
        if (ev->window.event == SDL_WINDOWEVENT_LEAVE) {
            app->mouse_x = app->mouse_y = -1;
            bool had = app->hover_area >= 0;
            app->hover_area = -1;
            return had;
        }
        if (ev->window.event == SDL_WINDOWEVENT_SIZE_CHANGED || ev->window.event == SDL_WINDOWEVENT_EXPOSED ||
            ev->window.event == SDL_WINDOWEVENT_RESTORED || ev->window.event == SDL_WINDOWEVENT_MAXIMIZED) {
            app->dirty = true;
            return true;
        }
        return false;
    case SDL_MOUSEMOTION: {
        app->mouse_x = (int)(ev->motion.x * app->pixel_ratio);
        app->mouse_y = (int)(ev->motion.y * app->pixel_ratio);
        int area = -1, i = -1, j = -1;
        if (!app->help && !app->editing) find_cell(app, app->mouse_x, app->mouse_y, &area, &i, &j);
        if (area < 0) i = j = -1;
        if (area == app->hover_area && i == app->hover_i && j == app->hover_j) return false;
        app->hover_area = area;
        app->hover_i = i;
        app->hover_j = j;
        app->dirty = true;
        return true;
    }
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button != SDL_BUTTON_LEFT) return false;
        if (app->editing) return false;
        return mouse_down(app, (int)(ev->button.x * app->pixel_ratio), (int)(ev->button.y * app->pixel_ratio));
    case SDL_MOUSEWHEEL: {
        if (app->lesson.open && app->mouse_x >= app->width) { /* over the lesson panel */
            int s = app->lesson.scroll - (int)(ev->wheel.y * 48 * app->pixel_ratio);
            if (s > app->lesson.content_h) s = app->lesson.content_h;
            if (s < 0) s = 0;
            if (s == app->lesson.scroll) return false;
            app->lesson.scroll = s;
            app->dirty = true;
            return true;
        }
        int n = app->trace.n_tensors;
        int s = app->stage_scroll - ev->wheel.y;
        if (s < 0) s = 0;
        if (s > n - 1) s = n - 1;
        if (s == app->stage_scroll) return false;
        app->stage_scroll = s;
        app->dirty = true;
        return true;
    }
    case SDL_TEXTEDITING:
        if (!app->editing) return false;
        snprintf(app->compose, sizeof app->compose, "%s", ev->edit.text);
        app->dirty = true;
        return true;
    case SDL_TEXTINPUT:
        if (!app->editing && app->lesson.focus >= 0) {
            ui_player_type(app, ev->text.text);
            return true;
        }
        if (!app->editing) return false;
        edit_insert(app, ev->text.text);
        app->compose[0] = '\0';
        app->dirty = true;
        return true;
    case SDL_KEYDOWN: {
        if (app->editing) {
            bool changed = edit_key(app, &ev->key);
            if (changed) app->dirty = true;
            return changed;
        }
        if (lesson_key(app, &ev->key.keysym)) return true;
        if (ev->key.keysym.sym == SDLK_ESCAPE) {
            if (app->help) return ui_app_do(app, UI_ACT_HELP, 0);
            if (app->sel_row >= 0) return ui_app_do(app, UI_ACT_ROW, -1);
            return ui_app_do(app, UI_ACT_QUIT, 0);
        }
        int arg;
        ui_action act = key_action(&ev->key.keysym, &arg);
        if (act == UI_ACT_NONE) return false;
        if (app->help && act != UI_ACT_HELP && act != UI_ACT_QUIT) app->help = false;
        return ui_app_do(app, act, arg);
    }
    default: return false;
    }
}
