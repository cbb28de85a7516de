/* app.c — the visualizer's state: settings, recomputation and what is shown. */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_impl.h"
#include "engine/base/budget.h"
#include "engine/formats/trace_io.h"
#include "engine/model/loss.h"
#include "engine/model/model_run.h"
#include "engine/run/forward.h"
#include "i18n.h"
#include "view.h"

void app_vstatus(app_state *app, bool error, unsigned what, const char *fmt, va_list ap)
{
    vsnprintf(app->status, sizeof app->status, fmt, ap);
    app->status_error = error;
    app->status_nonfinite = false;
    app->status_about.what = what;
    app->dirty = true;
}

void app_status(app_state *app, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    app_vstatus(app, error, 0, fmt, ap);
    va_end(ap);
}

const char *app_compare_name(int t)
{
    const attn_setting *row = attn_compare_at(t);
    return row ? _(row->compare.label) : "";
}

bool app_compare_offered(const app_state *app, int t)
{
    static const char *const masks[] = {"causal", "padding", "fill", "window"};
    const attn_setting *row = attn_compare_at(t);
    if (!row) return false;
    if (!strcmp(row->compare.name, "mla_absorb")) return app->trace.dims.mode == ATTN_MODE_MLA; /* naive / absorbed */
    if (t == app->view.compare) return true;
    for (int i = 0; i < (int)(sizeof masks / sizeof masks[0]); i++)
        if (!strcmp(row->compare.name, masks[i])) return true;
    if (!strcmp(row->compare.name, "keep_first") && app->trace.cfg.sliding_window) return true;
    return !attn_setting_is_default(&app->trace.cfg, row);
}

static int stage_index(const attn_trace *tr, const char *name)
{
    const attn_tensor *t = attn_trace_find(tr, name);
    return t ? (int)(t - tr->tensors) : -1;
}

int app_stage(const app_state *app)
{
    return stage_index(&app->trace, app->view.stage);
}

const attn_tensor *app_tensor(const app_state *app)
{
    int i = app_stage(app);
    return i < 0 ? NULL : attn_tensor_filled(&app->trace.tensors[i]); /* a derived stage's numbers made */
}

const char *app_compare_stage(const app_state *app, char *buf, size_t size)
{
    const attn_tensor *t = app_tensor(app);
    const char *stage = attn_stage_get(attn_stage_compare_view(attn_tensor_stage(t)))->name;
    return attn_tensor_name(t && t->layer >= 0 ? t->layer : 0, app->trace.n_layers, stage, buf, size);
}

/* The slot of tr's batch row in app->losses; NULL: none. */
static app_loss *loss_slot(const app_state *app, const attn_trace *tr, int batch)
{
    if (!app->losses || batch < 0 || batch >= tr->dims.b) return NULL;
    if (tr == &app->trace) return &app->losses[batch];
    if (app->has_alt && tr == &app->alt) return &app->losses[app->trace.dims.b + batch];
    return NULL;
}

static app_loss loss_of(const attn_trace *tr, int batch, const atomic_int *cancel)
{
    app_loss l = {0, 0, true};
    l.mean = attn_trace_loss_cancel(tr, batch, &l.counted, cancel);
    return l;
}

static bool loss_cheap(const app_state *app, const attn_trace *tr)
{
    return (size_t)tr->dims.s * (size_t)tr->dims.V <= app->loss_inline;
}

bool app_losses_wanted(const app_state *app)
{
    if (!app->async || !app->losses || loss_cheap(app, &app->trace) || !attn_trace_stage(&app->trace, -1, ATTN_STAGE_LOGITS))
        return false;
    for (int i = 0; i < app->trace.dims.b; i++)
        if (!app->losses[i].known) return true;
    return false;
}
app_loss app_loss_of(const app_state *app, const attn_trace *tr, int batch)
{
    app_loss *slot = loss_slot(app, tr, batch);
    if (slot && slot->known) return *slot;
    const attn_tensor *lg = attn_trace_stage(tr, -1, ATTN_STAGE_LOGITS);
    if (!lg) return (app_loss){0, 0, true};
    if (app->async && !loss_cheap(app, tr)) return (app_loss){0}; /* the worker's to compute (app_poll) */
    app_loss l = loss_of(tr, batch, NULL);
    if (slot) *slot = l;
    return l;
}

app_loss *app_trace_losses(const attn_trace *tr, const atomic_int *cancel)
{
    int b = tr->dims.b;
    if (b < 1 || !attn_trace_stage(tr, -1, ATTN_STAGE_LOGITS)) return NULL;
    app_loss *l = malloc((size_t)b * sizeof *l);
    for (int i = 0; l && i < b; i++) l[i] = loss_of(tr, i, cancel);
    if (l && cancel && atomic_load(cancel)) {
        free(l);
        return NULL;
    }
    return l;
}

void app_take_losses(app_state *app, const attn_trace *tr, const app_loss *losses)
{
    for (int i = 0; losses && i < tr->dims.b; i++) {
        app_loss *slot = loss_slot(app, tr, i);
        if (slot) *slot = losses[i];
    }
}

app_scale app_scale_of(const app_state *app, const attn_tensor *t)
{
    int n = app->trace.n_tensors;
    int idx = -1;
    if (t >= app->trace.tensors && t < app->trace.tensors + n) idx = (int)(t - app->trace.tensors);
    else if (app->has_alt && t >= app->alt.tensors && t < app->alt.tensors + app->alt.n_tensors)
        idx = n + (int)(t - app->alt.tensors);
    if (idx < 0 || !app->scales) return app_view_scale(t);
    /* computed once per trace: lo > hi marks an entry not yet filled */
    if (app->scales[idx].lo > app->scales[idx].hi) app->scales[idx] = app_view_scale(t);
    return app->scales[idx];
}

const char *app_title(const app_state *app, char *buf, size_t size)
{
    const attn_tensor *t = app_tensor(app);
    /* ASCII only: SDL 2.26 on X11 writes a non-ASCII title as Latin-1 WM_NAME
     * and leaves _NET_WM_NAME alone unless the locale is UTF-8 */
    if (app->opening.first) return snprintf(buf, size, "attnlab - opening %s", app->opening.label), buf;
    int n = snprintf(buf, size, "attnlab - %s%s%s - head %d - batch row %d%s", app_model_name(app),
                     app->model ? " - " : "", t ? t->name : "?", app->view.head, app->view.batch,
                     app_decoding(app) ? " - decoding" : "");
    int T = attn_config_key_tiles(&app->trace.cfg, app->trace.dims.t);
    if (app->view.mode == LESSON_VIEW_TILES && T > 0 && n >= 0 && (size_t)n < size) /* the FlashAttention view */
        n += snprintf(buf + n, size - (size_t)n, " - key tile %d of %d", app->tile_step + 1, T);
    if (app->view.mode == LESSON_VIEW_EXPERTS && n >= 0 && (size_t)n < size) /* the token × expert view */
        n += snprintf(buf + n, size - (size_t)n, " - experts of layer %d", app->view.layer);
    if (app->lesson.open && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " - lesson step %d/%d", app->lesson.step + 1, app->lesson.ls.n_steps);
    if (app->partial.on && n >= 0 && (size_t)n < size) /* the first picture, its layers still coming */
        snprintf(buf + n, size - (size_t)n, " - tracing, %d of %d layers ready", app->partial.layers, app->trace.n_layers);
    return buf;
}

bool app_overview(const app_state *app)
{
    const attn_tensor *t = app_tensor(app);
    app_view_slice v;
    return app->trace.n_layers > 1 && app->trace.dims.h > 0 && t && t->layer >= 0 &&
           !app_view_make(&app->trace, t->name, app->view.batch, 0, &v) && v.head_axis == 'h';
}

bool app_in_layer(const app_state *app, int i)
{
    int layer = app->trace.tensors[i].layer;
    return (layer < 0 || layer == app->view.layer) && app_tensor_ready(app, i);
}

bool app_tensor_ready(const app_state *app, int i)
{
    if (!app->partial.on) return true;
    const attn_tensor *t = &app->trace.tensors[i];
    return t->layer >= 0 ? t->layer < app->partial.layers
                         : t->info && t->info == attn_stage_get(ATTN_STAGE_EMBEDDINGS);
}

/* The view on `stage` of layer `layer` (its first stage when it has none such). */
static void move_to_layer(app_state *app, int layer, const char *stage)
{
    const attn_tensor *there = attn_trace_get(&app->trace, layer, stage);
    if (!there) { /* the first stage of that layer */
        for (int i = 0; i < app->trace.n_tensors && !there; i++)
            if (app->trace.tensors[i].layer == layer) there = &app->trace.tensors[i];
    }
    if (there) snprintf(app->view.stage, sizeof app->view.stage, "%s", there->name);
    app->dirty = true;
}

void app_show_layer(app_state *app, int layer, const char *stage)
{
    if (layer < 0 || layer >= app->trace.n_layers) return;
    char name[ATTN_MAX_NAME];
    attn_tensor_name_layer(stage, &stage);
    snprintf(name, sizeof name, "%s", stage);
    app->view.layer = layer;
    move_to_layer(app, layer, name);
}

/* ---- computing ------------------------------------------------------------ */

/* The config actually run for settings base at decode step *step (0: not
 * decoding): the settings, or the first *step tokens with all but the last
 * already in the KV cache, *step clamped to 1 .. *len (the tokens there are). */
static int run_config(const attn_model *m, const attn_config *base, int *step, int *len, attn_config *out,
                      attn_error *err)
{
    if (*step <= 0) return attn_config_copy(out, base, err) ? -1 : 0;
    if (base->model ? attn_model_decode(m, base, *step, out, len, err)
                    : attn_config_decode(base, *step, out, len, err))
        return -1;
    if (*step > *len) *step = *len;
    if (*step < 1) *step = 1;
    return 0;
}

/* After a new trace: the same stage if it still exists, else the nearest
 * earlier one in the pipeline; head, batch row and selected row clamped. */
static void keep_place(app_state *app)
{
    lesson_view *v = &app->view;
    if (v->layer >= app->trace.n_layers) v->layer = 0;
    /* the stage shown, if the new trace has it (never a recomputation from here) */
    int at = stage_index(&app->trace, v->stage);
    const attn_tensor *same = at >= 0 ? &app->trace.tensors[at] : attn_trace_get(&app->trace, v->layer, v->stage);
    if (same) {
        snprintf(v->stage, sizeof v->stage, "%s", same->name);
        if (same->layer >= 0) v->layer = same->layer;
    } else {
        const char *name = v->stage;
        attn_tensor_name_layer(name, &name);
        int want = attn_stage_index(name), idx = -1;
        for (int i = 0; i < app->trace.n_tensors; i++) {
            const attn_tensor *t = &app->trace.tensors[i];
            int p = t->info ? attn_stage_index(t->info->name) : -1;
            if (app_in_layer(app, i) && (idx < 0 || (p >= 0 && p <= want))) idx = i;
        }
        if (idx < 0) idx = 0;
        if (app->trace.n_tensors > 0) snprintf(v->stage, sizeof v->stage, "%s", app->trace.tensors[idx].name);
    }
    if (v->head >= app->trace.dims.h) v->head = app->trace.dims.h - 1;
    if (v->head < 0) v->head = 0;
    if (v->batch >= app->trace.dims.b) v->batch = app->trace.dims.b - 1;
    if (v->batch < 0) v->batch = 0;
    if (v->row >= app->trace.dims.s) v->row = -1;
}

static void reset_scales(app_state *app)
{
    free(app->scales);
    int n = app->trace.n_tensors + (app->has_alt ? app->alt.n_tensors : 0);
    app->scales = malloc((size_t)(n ? n : 1) * sizeof *app->scales);
    for (int i = 0; app->scales && i < n; i++) app->scales[i] = (app_scale){APP_CMAP_DIVERGING, 1.0f, -1.0f};
    /* none known, but the trace's when only alt changed */
    int b = app->trace.dims.b, rows = b + (app->has_alt ? app->alt.dims.b : 0);
    app_loss *losses = calloc((size_t)(rows > 0 ? rows : 1), sizeof *losses);
    if (losses && app->losses && app->losses_serial == app->trace_serial && b > 0)
        memcpy(losses, app->losses, (size_t)b * sizeof *losses);
    free(app->losses);
    app->losses = losses;
    app->losses_serial = app->trace_serial;
    app->generation++;
    app->dirty = true;
    /* what was on screen no longer matches: no cell to hover or click until the next frame */
    app_layout_clear(&app->layout);
    app->hover_area = app->hover_i = app->hover_j = app->geom_hover = app->hover_hit = -1;
}

/* The compare view's trace is made while the trace it toggles stays shown, so
 * both count against the budget: under the ceiling (--memory-gib, or half the
 * physical memory, less a picture's pixels) tr's bytes are taken off what c
 * may take; under an address-space limit tr is mapped already, which the
 * budget measures. A model's run fits itself in what is left (max_bytes: one
 * layer's attention weights if need be); another over it is refused, in one
 * line, with ATTN_ERR_NOMEM. */
static attn_status alt_budget(const attn_trace *tr, attn_config *c, attn_arena *arena, attn_error *err)
{
    c->max_bytes = 0; /* what the trace shown was given: it holds part of that now */
    attn_budget b = attn_arena_budget(arena, attn_config_budget(c));
    double held = b.source == ATTN_BUDGET_ULIMIT ? 0 : attn_trace_bytes(tr), need = 0;
    char n[32], h[32], bound[200];
    attn_budget_size(held, h, sizeof h);
    attn_budget_text(&b, bound, sizeof bound);
    if (c->model) {
        if (b.bytes - held < 1)
            return attn_fail(err, ATTN_ERR_NOMEM, "the %s of the trace shown leave no room for the toggled one "
                             "within %s", h, bound);
        c->max_bytes = b.bytes - held;
        return ATTN_OK;
    }
    attn_status st = attn_trace_estimate(c, &need, err);
    if (st || need + held <= b.bytes) return st;
    return attn_fail(err, ATTN_ERR_NOMEM, "the toggled trace would need about %s besides the %s of the trace shown: "
                     "over %s", attn_budget_size(need, n, sizeof n), h, bound);
}

attn_status app_alt_run(const attn_trace *tr, const struct attn_model *model, int compare, attn_progress *progress,
                        attn_arena *arena,
                        attn_trace *alt, attn_error *err)
{
    attn_config c;
    attn_status st;
    memset(alt, 0, sizeof *alt);
    if (tr->dims.cross && attn_compare_at(compare)->compare.self_only)
        /* TRANSLATORS: %s: what the compare view toggles ("causal mask") */
        return attn_fail(err, ATTN_ERR_CONFIG, _("cross-attention has no %s to toggle: its keys are the source"),
                         app_compare_name(compare));
    if (!strcmp(attn_compare_at(compare)->name, "keep_first") && !tr->cfg.sliding_window)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s",
                         _("the kept first keys stand beside a sliding window: set one first (w, or --sliding-window W)"));
    if ((st = attn_config_copy(&c, &tr->cfg, err))) return st;
    attn_inputs in;
    attn_inputs_from_trace(tr, &in);
    in.model = model;
    in.progress = progress;
    in.arena = arena;
    if (!(st = attn_compare_apply(&c, compare, err)) && !(st = alt_budget(tr, &c, arena, err)))
        st = attn_trace_run(&c, &in, alt, err);
    attn_config_free(&c);
    if (st && st != ATTN_ERR_CANCELLED) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        attn_fail(err, st, _("compare: %s"), why);
    }
    return st;
}


int app_partial_begin(app_state *app, const attn_trace *tr, attn_model *m, char *key, const attn_config *next,
                      int layers)
{
    attn_config cfg;
    attn_error err;
    if (attn_config_copy(&cfg, next, &err)) return -1;
    app->partial.trace = app->trace;
    app->partial.model = app->model;
    app->partial.model_key = app->model_key;
    app->partial.cfg = app->cfg;
    app->trace = *tr;
    app->model = m;
    app->model_key = key;
    app->cfg = cfg;
    app->partial.on = true;
    app->partial.layers = layers;
    app->opening.first = false;
    app->trace_serial++;
    keep_place(app);
    reset_scales(app);
    return 0;
}

void app_partial_end(app_state *app)
{
    if (!app->partial.on) return;
    attn_config_free(&app->cfg);
    app->trace = app->partial.trace;
    app->model = app->partial.model;
    app->model_key = app->partial.model_key;
    app->cfg = app->partial.cfg;
    app->partial.on = false;
    app->opening.first = true; /* until the worker's picture is installed, or if it is not */
    app->trace_serial++;
    reset_scales(app);
}

void app_set_alt(app_state *app, attn_trace *alt)
{
    if (app->has_alt) attn_trace_free(&app->alt);
    app->has_alt = alt != NULL;
    if (alt) app->alt = *alt;
    reset_scales(app);
}

/* Compare view: the same inputs with one mask toggled, computed here. */
static void compute_alt(app_state *app)
{
    if (app->has_alt) attn_trace_free(&app->alt);
    app->has_alt = false;
    app->alt_status = ATTN_OK;
    if (app->view.mode != LESSON_VIEW_COMPARE) return;
    attn_error err;
    if ((app->alt_status = app_alt_run(&app->trace, app->model, app->view.compare, NULL, app->arena, &app->alt,
                                       &err)))
        app_status(app, true, "%s", err.msg);
    else
        app->has_alt = true;
}

void app_alt_here(app_state *app)
{
    compute_alt(app);
    reset_scales(app);
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Whether `next` makes the same inputs (embeddings, weights) as the current
 * trace: then a toggle recomputes only the attention, not the seeded inputs. */
static bool same_inputs(const app_state *app, const attn_config *a, const attn_config *b)
{
    return same_str(a->tokens, b->tokens) && same_str(a->source_tokens, b->source_tokens) && a->seq == b->seq &&
           a->batch == b->batch && a->d_model == b->d_model && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->mode == b->mode && a->pad_side == b->pad_side && a->past == b->past && a->seed == b->seed &&
           same_str(a->weights_path, b->weights_path) && same_str(a->input_path, b->input_path) &&
           app->trace.n_tensors > 0;
}

int app_plan_make(const app_state *app, const attn_config *next, int step, lesson_view_mode mode, app_plan *plan,
                  attn_error *err)
{
    memset(plan, 0, sizeof *plan);
    plan->step = step;
    plan->layer = app->view.layer; /* a long prompt: the attention weights of the layer shown */
    plan->traces = mode == LESSON_VIEW_COMPARE ? 2 : 1; /* the compare view's is made with it */
    /* the traces shown stay while the new one is made, and the window keeps its
     * heatmap pictures: all count against the budget (what the address-space
     * limit leaves has them taken off already: they are mapped) */
    plan->held = attn_trace_bytes(&app->trace) + (app->has_alt ? attn_trace_bytes(&app->alt) : 0) +
                 app_heat_cache_bytes(app->full_width, app->height);
    /* the same inputs (embeddings, weights): a toggle recomputes only the attention */
    bool reuse = same_inputs(app, &app->cfg, next) && step == app->trace_step;
    if (app->from_file) attn_inputs_from_trace(&app->file, &plan->in);
    else if (reuse) attn_inputs_from_trace(&app->trace, &plan->in);
    if (next->model && !(app->model && app->model_key && !strcmp(app->model_key, next->model))) {
        if (!(plan->load = strdup(next->model))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"), -1;
    } else {
        plan->in.model = next->model ? app->model : NULL;
    }
    plan->in.arena = app->arena;
    return 0;
}

int app_plan_run(app_plan *plan, const attn_config *next, attn_config *run, attn_error *err)
{
    if (plan->made) return 0;
    if (plan->load && !plan->model) { /* the model the settings name, in place of the app's */
        attn_model *m = malloc(sizeof *m);
        if (!m) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"), -1;
        if (attn_model_load_watched(plan->load, m, plan->in.progress, err)) {
            free(m);
            return -1;
        }
        plan->model = m;
        if (attn_model_variants(m, plan->variants, &plan->n_variants, err)) plan->n_variants = 0;
        if (app_training_read(plan->load, &plan->train, err)) memset(&plan->train, 0, sizeof plan->train);
    }
    if (plan->load) plan->in.model = plan->model;
    if (run_config(plan->in.model, next, &plan->step, &plan->decode_len, run, err)) return -1;
    attn_budget b = attn_arena_budget(plan->in.arena, attn_config_budget(next));
    plan->budget = b.bytes;
    run->qk_keep = 0;
    run->qk_prefer = plan->layer;
    double extra = b.source == ATTN_BUDGET_ULIMIT ? 0 : plan->held, need = 0;
    if (next->model) { /* a model's run fits itself in what is left (one layer's weights if need be) */
        run->max_bytes = plan->budget - extra > 1 ? plan->budget - extra : 1;
    } else if (!attn_trace_estimate(run, &need, err) && plan->traces * need + extra > plan->budget) {
        need *= plan->traces;
        char n[32], h[32], bound[200];
        attn_fail(err, ATTN_ERR_CONFIG, "this change needs about %s besides the %s the picture shown holds: over %s; "
                  "use fewer tokens, rows or heads", attn_budget_size(need, n, sizeof n),
                  attn_budget_size(plan->held, h, sizeof h), attn_budget_text(&b, bound, sizeof bound));
        attn_config_free(run);
        return -1;
    }
    plan->made = true;
    return 0;
}

void app_plan_free(app_plan *plan)
{
    if (plan->model) attn_model_free(plan->model);
    free(plan->model);
    free(plan->load);
    app_training_free(&plan->train);
    plan->model = NULL;
    plan->load = NULL;
}

/* Checkpoints read with a newly loaded model become the app's; a broken
 * metrics.json is said once, when its model is first shown. */
static void adopt_training(app_state *app, app_training *t)
{
    bool same = t->n && !strcmp(t->base, app->train.base);
    app_training_free(&app->train);
    app->train = *t;
    memset(t, 0, sizeof *t);
    if (app->train.problem[0] && !same) app_status(app, true, "%s", app->train.problem);
}

/* The plan's model (when it loaded one) becomes the app's, the one shown
 * before freed (also when the settings name none): its trace is about to be
 * replaced. */
static void adopt_model(app_state *app, app_plan *plan, const attn_config *next)
{
    if (!next->model) {
        app_model_sync(app, NULL, NULL);
        app_training_free(&app->train);
    }
    if (!plan->load) return;
    adopt_training(app, &plan->train);
    app_model_sync(app, NULL, NULL);
    app->model = plan->model;
    app->model_key = plan->load;
    plan->model = NULL;
    plan->load = NULL;
    app->n_variants = 0;
    /* m steps from the model shown to its next variant: with the model not
     * among them (tang-nocausal is tang's GQA trained otherwise) none is reachable */
    for (int i = 0; i < plan->n_variants; i++)
        if (!strcmp(plan->variants[i].name, app->model->name)) app->n_variants = plan->n_variants;
    memcpy(app->variants, plan->variants, sizeof app->variants);
}

void app_install(app_state *app, attn_trace *tr, attn_config *next, app_plan *plan, attn_trace *alt)
{
    adopt_model(app, plan, next);
    double budget = plan->budget;
    app->view.decode_step = plan->step;
    if (plan->step > 0) app->decode_len = plan->decode_len;
    attn_trace_free(&app->trace);
    app->trace = *tr;
    app->trace_serial++;
    app->opening.first = false; /* a picture of its own is shown */
    app->gen.end_said = false; /* a text's end is said again for the picture installed */
    app->trace_step = app->view.decode_step;
    attn_config_free(&app->cfg);
    app->cfg = *next;
    keep_place(app);
    if (alt) { /* the compare trace, computed with it */
        app_set_alt(app, alt);
    } else {
        if (app->has_alt) attn_trace_free(&app->alt);
        app->has_alt = false;
        if (app->async && app->view.mode == LESSON_VIEW_COMPARE)
            app_set_alt(app, NULL); /* asked for by the caller, on the worker (app_alt_follow) */
        else
            app_alt_here(app);
    }
    if (app->trace.cfg.qk_keep)
        /* TRANSLATORS: a long prompt; the numbers are GiB */
        app_status(app, false, _("attention weights of layer %d only (every layer's would take %.1f GiB, over the "
                                 "%.1f GiB budget): the , and . keys compute another layer's"),
                      app->trace.cfg.qk_keep - 1, attn_model_trace_full_bytes(&app->trace) / (1 << 30),
                      budget / (1 << 30));
}

void app_note_nonfinite(app_state *app, const attn_nonfinite *nf)
{
    attn_nonfinite found;
    if (!nf) {
        attn_nonfinite_find(&app->trace, &found);
        nf = &found;
    }
    if (!nf->tensor || nf->expected) {
        if (app->status_nonfinite) app_status(app, false, "%s", ""); /* that NaN is gone */
        return;
    }
    char at[200];
    attn_nonfinite_index_text(nf, at, sizeof at);
    /* TRANSLATORS: "NaN first appears in layers.0.scores at [0, 1, 2, 3]": where a value that is not a number
     * (NaN, +inf or -inf) first shows in the stages, in the order they are computed */
    app_status(app, true, _("%s first appears in %s at %s: every stage computed from it can hold it too"),
               attn_nonfinite_kind(nf), nf->tensor->name, at);
    app->status_nonfinite = true;
}

/* Runs settings `next` here and now (a recomputation under way on the worker
 * is stopped first); on success they become app->cfg (ownership moves), on
 * failure next is freed and the status line says why. */
int app_commit(app_state *app, attn_config *next)
{
    attn_config run;
    attn_error err;
    attn_trace tr;
    app_plan plan;
    if (app_plan_make(app, next, app->view.decode_step, app->view.mode, &plan, &err)) goto fail;
    if (app_plan_run(&plan, next, &run, &err)) goto fail;
    attn_status st = attn_trace_run(&run, &plan.in, &tr, &err);
    attn_config_free(&run);
    if (st) goto fail;
    app_install(app, &tr, next, &plan, NULL);
    app_note_nonfinite(app, NULL);
    app_plan_free(&plan);
    return 0;
fail:
    app_plan_free(&plan);
    attn_config_free(next);
    app_status(app, true, "%s", err.msg);
    return -1;
}

/* ---- the model shown, the zoom, the editor, an opening: state the actions set */

static int model_sync(app_state *app, const char *name, attn_progress *watch, attn_error *err);

int app_model_sync(app_state *app, const char *name, attn_error *err)
{
    return model_sync(app, name, NULL, err);
}

static int model_sync(app_state *app, const char *name, attn_progress *watch, attn_error *err)
{
    if (name && app->model && app->model_key && !strcmp(app->model_key, name)) return 0;
    attn_model *m = NULL;
    char *key = NULL;
    if (name) {
        if (!(m = malloc(sizeof *m)) || !(key = strdup(name))) {
            free(m);
            attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
            return -1;
        }
        if (attn_model_load_watched(name, m, watch, err)) {
            free(m);
            free(key);
            return -1;
        }
    }
    if (app->model) attn_model_free(app->model);
    free(app->model);
    free(app->model_key);
    app->model = m;
    app->model_key = key;
    app->n_variants = 0;
    if (m && attn_model_variants(m, app->variants, &app->n_variants, err)) app->n_variants = 0;
    /* m steps from the model shown to its next variant: with the model not
     * among them (tang-nocausal is tang's GQA trained otherwise) none is reachable */
    bool among = false;
    for (int i = 0; i < app->n_variants; i++) among |= !strcmp(app->variants[i].name, m->name);
    if (!among) app->n_variants = 0;
    return 0;
}


const char *app_model_name(const app_state *app)
{
    if (!app->model) return "";
    if (app_training_position(&app->train, app->cfg.model) < 0) return app->model->name;
    const char *slash = strrchr(app->train.base, '/');
    return slash ? slash + 1 : app->train.base;
}


void app_zoom_to(app_state *app, int i0, int i1, int j0, int j1)
{
    bool whole = i1 < 0 && j1 < 0;
    app->zoom.level = 0;
    app->zoom.i0 = i1 < 0 ? 0 : i0;
    app->zoom.j0 = j1 < 0 ? 0 : j0;
    app->zoom.rows = whole ? 0 : i1 < 0 ? INT_MAX : i1 - i0 + 1; /* INT_MAX: every row */
    app->zoom.cols = whole ? 0 : j1 < 0 ? INT_MAX : j1 - j0 + 1;
    app->zoom.dragging = false;
    app->dirty = true;
}


void app_edit_stop(app_state *app)
{
    app->edit.open = false;
    app->edit.compose[0] = '\0';
    app->dirty = true;
}


bool app_open_later(app_state *app, app_action act, int arg, const char *label)
{
    if (!app->async || app->opening.running) return false;
    if (app->opening.has_cfg) attn_config_free(&app->opening.cfg); /* the newer opening wins */
    app->opening.has_cfg = false;
    app->opening.pending = true;
    app->opening.shown = false;
    app->opening.act = act;
    app->opening.arg = arg;
    snprintf(app->opening.label, sizeof app->opening.label, "%s", label);
    app->dirty = true;
    return true;
}


/* ---- life ----------------------------------------------------------------- */

static void init_common(app_state *app)
{
    memset(app, 0, sizeof *app);
    app->view = lesson_view_default();
    app->hover_area = app->hover_i = app->hover_j = app->geom_hover = app->hover_hit = -1;
    app->partial.want = -1;
    app->mouse_x = app->mouse_y = -1;
    app->font_scale = 1.0f;
    app->pixel_ratio = 1.0f;
    app->loss_inline = APP_LOSS_INLINE_NUMBERS;
    app->dirty = true;
    app_player_init(&app->lesson, "en", NULL);
    if ((app->arena = malloc(sizeof *app->arena))) attn_arena_init(app->arena);
}

/* What init_common made, for an init that fails before anything else is held. */
static void drop_arena(app_state *app)
{
    attn_arena_free(app->arena);
    free(app->arena);
    app->arena = NULL;
}

int app_init(app_state *app, const attn_config *cfg, char *err_out, size_t errsize)
{
    return app_init_watched(app, cfg, NULL, err_out, errsize);
}

int app_init_watched(app_state *app, const attn_config *cfg, attn_progress *watch, char *err_out, size_t errsize)
{
    attn_error err;
    init_common(app);
    if (attn_config_copy(&app->cfg, cfg, &err)) {
        snprintf(err_out, errsize, "%s", err.msg);
        drop_arena(app);
        return err.status;
    }
    if (model_sync(app, cfg->model, watch, &err) ||
        attn_trace_run(&app->cfg, &(attn_inputs){.model = app->model, .arena = app->arena, .progress = watch},
                       &app->trace, &err)) {
        snprintf(err_out, errsize, "%s", err.msg);
        app_model_sync(app, NULL, NULL);
        attn_config_free(&app->cfg);
        drop_arena(app);
        return err.status ? err.status : ATTN_ERR_CONFIG;
    }
    keep_place(app);
    reset_scales(app);
    app_note_nonfinite(app, NULL);
    if (!app_training_read(cfg->model, &app->train, &err) && app->train.problem[0])
        app_status(app, true, "%s", app->train.problem);
    return 0;
}

int app_init_later(app_state *app, const attn_config *cfg, int layer, char *err_out, size_t errsize)
{
    attn_config example;
    attn_error err;
    attn_config_init(&example);
    int rc = app_init(app, &example, err_out, errsize);
    attn_config_free(&example);
    if (rc) return rc;
    if (attn_config_copy(&app->opening.cfg, cfg, &err)) {
        snprintf(err_out, errsize, "%s", err.msg);
        app_release(app);
        return err.status;
    }
    /* the notice names the model by its folder's name ("models/tang/": tang) */
    char *label = app->opening.label;
    snprintf(label, sizeof app->opening.label, "%s", cfg->model ? cfg->model : "");
    for (size_t n = strlen(label); n > 1 && label[n - 1] == '/';) label[--n] = '\0';
    const char *slash = strrchr(label, '/');
    if (slash && slash[1]) memmove(label, slash + 1, strlen(slash + 1) + 1);
    app->opening.has_cfg = app->opening.first = app->opening.pending = true;
    app->opening.fail_exit = 1;
    app->partial.want = layer > 0 ? layer : -1;
    app->dirty = true;
    return 0;
}

int app_init_file_with(app_state *app, const char *path, const attn_config *flags, char *err_out, size_t errsize)
{
    attn_error err;
    attn_config defaults;
    init_common(app);
    if (!flags) attn_config_init(&defaults);
    /* F16 or BF16 tensors widen to float32 in memory: refused up front when
     * that is over the budget (--memory-gib), before any is allocated */
    attn_budget budget = attn_config_budget(flags ? flags : &defaults);
    double memory_gib = flags ? flags->memory_gib : defaults.memory_gib;
    if (!flags) attn_config_free(&defaults);
    if (attn_trace_load_within(path, &budget, &app->file, &err)) {
        snprintf(err_out, errsize, "%s", err.msg);
        drop_arena(app);
        return -1;
    }
    app->from_file = true;
    app->file_path = strdup(path);
    if (!app->file.n_tensors) { /* a safetensors file of no tensors: nothing to show */
        snprintf(err_out, errsize, "%s: the trace has no tensors to show", path);
        app_release(app);
        return -1;
    }
    /* the loaded trace is shown as it is (borrowing its data: one copy in
     * memory, not two); a change recomputes from its inputs, within the same budget */
    app->file.cfg.memory_gib = memory_gib;
    if (attn_trace_borrow(&app->file, &app->trace, &err) ||
        attn_config_copy(&app->cfg, &app->file.cfg, &err) != ATTN_OK) {
        snprintf(err_out, errsize, "%s", err.msg);
        app_release(app);
        return -1;
    }
    if (app->cfg.tokens == NULL && app->file.tokens.rows) app->cfg.tokens = attn_tokens_text(&app->file.tokens, 0);
    if (app->file.dims.cross && app->file.source.rows && !app->cfg.source_tokens) app->cfg.source_tokens = attn_tokens_text(&app->file.source, 0);
    keep_place(app);
    reset_scales(app);
    app_note_nonfinite(app, NULL);
    return 0;
}

int app_init_file(app_state *app, const char *path, char *err_out, size_t errsize)
{
    return app_init_file_with(app, path, NULL, err_out, errsize);
}

void app_release(app_state *app)
{
    if (app->opening.has_cfg) attn_config_free(&app->opening.cfg);
    app->opening.has_cfg = false;
    app_player_free(&app->lesson);
    attn_trace_free(&app->trace);
    if (app->has_alt) attn_trace_free(&app->alt);
    if (app->from_file) attn_trace_free(&app->file);
    attn_config_free(&app->cfg);
    app_model_sync(app, NULL, NULL);
    app_training_free(&app->train);
    free(app->file_path);
    free(app->gen.prompt);
    free(app->gen.text);
    app->gen.prompt = app->gen.text = NULL;
    free(app->scales);
    free(app->losses);
    app->scales = NULL;
    app->losses = NULL;
    app->file_path = NULL;
    app->has_alt = app->from_file = false;
    drop_arena(app); /* after every trace it lent to */
}
