/* app_actions.c — what an action does: every key and button ends here. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "engine/model/model.h"
#include "i18n.h"
#include "experts_view.h"
#include "tiles_view.h"

#define EXAMPLE_SOURCE "you are a cat girl | I love AI"
#define MAX_HEADS_OFFERED 64

/* A settings change that a trace loaded from a file cannot take. */
static bool refuse_in_file(app_state *app, const char *what)
{
    if (!app->from_file) return false;
    app_status(app, true,
               _("%s: a trace opened from a file keeps its shapes and inputs; run `attnlab --%s ...` to change it"),
               what, what);
    return true;
}

/* ---- head layout ---------------------------------------------------------- */

typedef struct {
    int heads;            /* 0: keep */
    int kv_heads;
    attn_mode mode;
} head_layout;

static int set_head_layout(attn_config *next, const void *arg, attn_error *err)
{
    const head_layout *h = arg;
    (void)err;
    if (h->heads) next->heads = h->heads;
    next->kv_heads = h->kv_heads;
    next->mode = h->mode;
    if (h->mode != ATTN_MODE_MLA) next->kv_rank = next->rope_dim = 0, next->mla_absorb = false; /* MLA's own */
    return 0;
}

static int next_divisor(int n, int from, int dir, int limit)
{
    for (int x = from + dir; x >= 1 && x <= limit; x += dir)
        if (n % x == 0) return x;
    return from;
}

/* The head layout a change starts from: that of the settings being computed
 * when a recomputation is under way (so h pressed twice goes two steps), else
 * the trace's. */
static attn_dims newest_dims(const app_state *app)
{
    attn_dims d = app->trace.dims, r;
    attn_tokens t = {0}, src = {0};
    attn_error e;
    if (app->job && !app->model && attn_config_resolve(app_settings(app), &r, &t, &src, &e) == ATTN_OK) d = r;
    attn_tokens_free(&t);
    attn_tokens_free(&src);
    return d;
}

static int change_heads(app_state *app, int dir)
{
    attn_dims now = newest_dims(app);
    const attn_dims *d = &now;
    int limit = d->d < MAX_HEADS_OFFERED ? d->d : MAX_HEADS_OFFERED;
    int h = next_divisor(d->d, d->h, dir, limit);
    if (h == d->h) {
        app_status(app, false,
                   dir > 0 ? _("heads: %d is the largest divisor of d_model = %d on offer")
                              : _("heads: %d is the smallest divisor of d_model = %d on offer"),
                      d->h, d->d);
        return -1;
    }
    head_layout next = {h, 0, d->mode};
    if (d->mode == ATTN_MODE_GQA && !attn_gqa_default_groups(h)) {
        next.mode = ATTN_MODE_MHA;
        app_status(app, false, _("h = %d has no divisor between 1 and %d, so GQA becomes MHA"), h, h);
    } else if (d->mode == ATTN_MODE_GQA && h % d->g == 0 && d->g > 1 && d->g < h) {
        next.kv_heads = d->g;
        next.mode = ATTN_MODE_AUTO;
    }
    return app_edit_config_async(app, set_head_layout, &next);
}

static int change_kv(app_state *app, int dir)
{
    attn_dims now = newest_dims(app);
    const attn_dims *d = &now;
    if (d->mode == ATTN_MODE_MLA) { /* not a way out of MLA that drops its settings unasked */
        app_status(app, false, "%s", _("MLA has no kv heads: every head reads the one latent and RoPE key (m: MHA)"));
        return -1;
    }
    int g = next_divisor(d->h, d->g, dir, d->h);
    if (g == d->g) {
        app_status(app, false,
                   dir > 0 ? _("kv_heads: %d is the largest divisor of heads = %d")
                              : _("kv_heads: %d is the smallest divisor of heads = %d"),
                      d->g, d->h);
        return -1;
    }
    return app_edit_config_async(app, set_head_layout, &(head_layout){0, g, ATTN_MODE_AUTO});
}

static int cycle_mode(app_state *app)
{
    attn_dims now = newest_dims(app);
    const attn_dims *d = &now;
    attn_mode m = d->mode == ATTN_MODE_MHA   ? ATTN_MODE_GQA
                : d->mode == ATTN_MODE_GQA ? ATTN_MODE_MQA
                : d->mode == ATTN_MODE_MQA ? ATTN_MODE_MLA
                                           : ATTN_MODE_MHA; /* MLA: the latent's defaults, R = 4·dₖ, D = dₖ/2 */
    if (m == ATTN_MODE_GQA && !attn_gqa_default_groups(d->h)) {
        m = ATTN_MODE_MQA;
        app_status(app, false, _("h = %d has no divisor between 1 and %d: no GQA, so MHA → MQA"), d->h, d->h);
    }
    if (d->h == 1 && m != ATTN_MODE_MLA) {
        app_status(app, false, "%s", _("with one head MHA and MQA are the same: add heads with h"));
        return -1;
    }
    return app_edit_config_async(app, set_head_layout, &(head_layout){0, 0, m});
}

/* ---- cross-attention ------------------------------------------------------ */

static int drop_source(attn_config *next, const void *arg, attn_error *err)
{
    (void)arg, (void)err;
    free(next->source_tokens);
    next->source_tokens = NULL;
    next->causal = ATTN_CAUSAL_ON;
    return 0;
}

static int example_source(attn_config *next, const void *arg, attn_error *err)
{
    (void)arg;
    free(next->source_tokens);
    next->source_tokens = strdup(EXAMPLE_SOURCE);
    if (!next->source_tokens) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"), -1;
    next->causal = ATTN_CAUSAL_OFF;
    next->rope = false;
    next->past = 0;
    return 0;
}

static int toggle_cross(app_state *app)
{
    const attn_config *now = app_settings(app); /* those being computed, if any */
    if (app_newest_step(app) > 0) {
        app_status(app, true, "%s", _("cross-attention has no KV-cache decoding here: leave decode mode (k) first"));
        return -1;
    }
    if (now->source_tokens) {
        int rc = app_edit_config_async(app, drop_source, NULL);
        if (!rc) app_status(app, false, "%s", _("self-attention: keys are the sentence itself, causal mask back on"));
        return rc;
    }
    if (now->tokens) { /* the user's own sentence: ask for the source */
        app_edit_start(app, 1);
        app_status(app, false, "%s",
                   _("type the source sentence (one row per target row, rows split by |), then Enter"));
        return 0;
    }
    int rc = app_edit_config_async(app, example_source, NULL);
    if (!rc)
        app_status(app, false, _("cross-attention: keys and values come from the source \"%s\"; no causal mask"),
                   EXAMPLE_SOURCE);
    return rc;
}

/* ---- toggles -------------------------------------------------------------- */

/* What a toggle key does to the settings. */
typedef struct {
    app_action act;
    bool from_file;       /* a trace file keeps its padding side: padding goes right → off */
} toggle_change;

static int toggle(attn_config *next, const void *arg, attn_error *err)
{
    const toggle_change *t = arg;
    (void)err;
    switch (t->act) {
    case APP_ACT_CAUSAL: next->causal = app_causal_toggled(next->causal); break;
    case APP_ACT_ROPE: next->rope = !next->rope; break;
    case APP_ACT_FILL: next->mask_value = app_fill_toggled(next->mask_value); break;
    case APP_ACT_TRAIN:
        next->train = !next->train;
        if (next->train && next->dropout <= 0.0f) next->dropout = 0.1f;
        break;
    default: /* APP_ACT_PADDING: right → left → off → right */
        if (!next->pad_mask) {
            next->pad_mask = true;
            next->pad_side = ATTN_PAD_RIGHT;
        } else if (next->pad_side == ATTN_PAD_RIGHT && !t->from_file) {
            next->pad_side = ATTN_PAD_LEFT;
        } else {
            next->pad_mask = false;
            next->pad_side = ATTN_PAD_RIGHT;
        }
        break;
    }
    return 0;
}

/* The status line after a toggle went through. */
static void toggled(app_state *app, app_action act, bool was_reversed)
{
    const attn_config *c = app_settings(app); /* what was asked for, computed or being computed */
    switch (act) {
    case APP_ACT_CAUSAL:
        app_status(app, false, "%s", was_reversed ? _("causal mask on: the reversed mask is corrected")
                                        : c->causal  ? _("causal mask on")
                                                     : _("causal mask off"));
        break;
    case APP_ACT_ROPE: app_status(app, false, "%s", c->rope ? _("RoPE on") : _("RoPE off")); break;
    case APP_ACT_FILL:
        app_status(app, false, _("masked scores filled with %s"), isinf(c->mask_value) ? "−∞" : "−1e9");
        break;
    case APP_ACT_TRAIN:
        if (c->train) app_status(app, false, _("training: dropout p = %g on the weights and the output"), c->dropout);
        else app_status(app, false, "%s", _("evaluation: no dropout"));
        break;
    default:
        app_status(app, false, "%s", !c->pad_mask ? _("padding mask off: queries may attend to <pad> keys")
                                        : c->pad_side == ATTN_PAD_LEFT ? _("padding on the left, masked")
                                                                       : _("padding on the right, masked"));
        break;
    }
}

/* A trained model fixes its heads, RoPE and self-attention: say so. */
static bool refuse_in_model(app_state *app, app_action act)
{
    if (!app->model) return false;
    if (act == APP_ACT_HEADS_UP || act == APP_ACT_HEADS_DOWN || act == APP_ACT_KV_UP || act == APP_ACT_KV_DOWN)
        app_status(app, false, _("%s was trained with %d heads sharing %d K/V heads: m switches to its other variants"),
                   app->model->name, app->model->cfg.heads, app->model->cfg.kv_heads);
    else if (act == APP_ACT_ROPE || act == APP_ACT_CROSS)
        app_status(app, false, _("%s was trained with RoPE, as a decoder: that stays as it was trained"),
                   app->model->name);
    else
        return false;
    return true;
}

static bool config_action(app_state *app, app_action act)
{
    if (refuse_in_model(app, act)) return false;
    switch (act) {
    case APP_ACT_MODE:
        if (app->model) return app_next_variant(app) == 0;
        return !refuse_in_file(app, "mode") && cycle_mode(app) == 0;
    case APP_ACT_HEADS_UP: return !refuse_in_file(app, "heads") && change_heads(app, +1) == 0;
    case APP_ACT_HEADS_DOWN: return !refuse_in_file(app, "heads") && change_heads(app, -1) == 0;
    case APP_ACT_KV_UP: return !refuse_in_file(app, "kv-heads") && change_kv(app, +1) == 0;
    case APP_ACT_KV_DOWN: return !refuse_in_file(app, "kv-heads") && change_kv(app, -1) == 0;
    case APP_ACT_CROSS: return !refuse_in_file(app, "source-tokens") && toggle_cross(app) == 0;
    case APP_ACT_CAUSAL:
    case APP_ACT_ROPE:
    case APP_ACT_FILL:
    case APP_ACT_TRAIN:
    case APP_ACT_PADDING: break;
    default: return false;
    }
    bool was_reversed = app_settings(app)->causal == ATTN_CAUSAL_REVERSED;
    if (app_edit_config_async(app, toggle, &(toggle_change){act, app->from_file})) return false;
    toggled(app, act, was_reversed);
    return true;
}

/* ---- decoding ------------------------------------------------------------- */

static int toggle_decode(app_state *app)
{
    if (app_newest_step(app) > 0) {
        int rc = app_edit_config_step(app, NULL, NULL, 0);
        if (!rc) app_status(app, false, "%s", _("decode mode off: the full pass again"));
        return rc;
    }
    if (app->from_file) return refuse_in_file(app, "past"), -1;
    if (app->trace.dims.cross) {
        app_status(app, true, "%s", _("decode mode is for self-attention: switch cross-attention off (x) first"));
        return -1;
    }
    app_set_stage(app, attn_stage_get(ATTN_STAGE_WEIGHTS)->name);
    app->view.row = -1;
    /* a trained model starts at its text's last token, whose row predicts what
     * comes next: ] writes on at once, [ walks back through the cached text;
     * the built-in example starts at its first token, an empty cache */
    bool model = app_settings(app)->model != NULL;
    if (app_edit_config_step(app, NULL, NULL, model ? ATTN_MAX_SEQ : 1)) return -1;
    if (model)
        app_status(app, false, "%s", _("decode mode at the last token: ] writes the next one, [ steps back through the cache"));
    else
        app_status(app, false, "%s", _("decode mode: ] next token, [ previous; the new query row reads every cached key"));
    return 0;
}

/* [ and ] in the FlashAttention view: the key tile before or after, wrapping. */
static int tile_step(app_state *app, int dir)
{
    if (!app_tiles_step(app, dir)) return -1;
    /* TRANSLATORS: the FlashAttention view's status; %d of %d: the key tile shown, of all */
    app_status(app, false, _("key tile %d of %d: m, ℓ and the output after it"), app->tile_step + 1,
               attn_config_key_tiles(&app->trace.cfg, app->trace.dims.t));
    return 0;
}

static int decode_step(app_state *app, int dir)
{
    if (app->view.mode == LESSON_VIEW_TILES) return tile_step(app, dir);
    int now = app_newest_step(app);
    /* ] on a trained model's full pass: decode mode at the text's end, and the next token written */
    if (now < 1 && dir > 0 && app->model && !app->from_file && attn_trace_is_model(&app->trace))
        return app_generate(app);
    if (now < 1) {
        app_status(app, false, "%s", _("press k for KV-cache decode mode first"));
        return -1;
    }
    int step = now + dir;
    if (app->model && dir > 0 && step > app->decode_len) return app_generate(app); /* write on */
    if (step < 1 || step > app->decode_len) return -1;
    return app_edit_config_step(app, NULL, NULL, step);
}

/* ---- cycling a setting --------------------------------------------------- */

#define KEEP_FIRST_WINDOW 3 /* the window the kept first keys get when none is set */

/* The kept first keys stand beside a sliding window: stepping them on with no
 * window sets one, and the window stepped off takes them away with it. */
static int cycle_row(attn_config *next, const void *row, attn_error *err)
{
    if (attn_setting_cycle(next, row, err)) return -1;
    const char *name = ((const attn_setting *)row)->name;
    if (!strcmp(name, "keep_first") && next->keep_first && !next->sliding_window)
        next->sliding_window = KEEP_FIRST_WINDOW;
    if (!strcmp(name, "sliding_window") && !next->sliding_window) next->keep_first = 0;
    return 0;
}

/* APP_ACT_CYCLE: setting i of the settings table steps to the next value its row's cycle lists. */
bool app_cycle(app_state *app, int i)
{
    const attn_setting *row = i >= 0 && i < attn_setting_count() ? attn_setting_at(i) : NULL;
    char text[160], value[64];
    if (!row || !row->cycle || refuse_in_file(app, row->name)) return false;
    if (app_edit_config_async(app, cycle_row, row)) return false;
    const attn_config *asked = app_settings(app);
    attn_setting_describe(asked, row, text, sizeof text);
    if (!text[0]) snprintf(text, sizeof text, "%s %s", row->name, attn_setting_format(asked, row, value, sizeof value));
    app_status(app, false, "%s", text);
    return true;
}

/* ---- what is shown -------------------------------------------------------- */

/* Stage, head, batch row and bar-chart row: moving within the trace. */
static bool move(app_state *app, app_action act, int arg)
{
    lesson_view *v = &app->view;
    const attn_dims *d = &app->trace.dims;
    int n = app->trace.n_tensors, s = app_stage(app);
    switch (act) {
    case APP_ACT_STAGE: break;
    case APP_ACT_STAGE_PREV: /* the previous / next stage of the viewed layer */
        for (arg = s - 1; arg >= 0 && !app_in_layer(app, arg); arg--) {}
        break;
    case APP_ACT_STAGE_NEXT:
        for (arg = s + 1; arg < n && !app_in_layer(app, arg); arg++) {}
        break;
    case APP_ACT_LAYER_PREV:
    case APP_ACT_LAYER_NEXT:
        if (app_set_layer(app, app_newest_layer(app) + (act == APP_ACT_LAYER_NEXT ? 1 : -1))) return false;
        app_status_about(app, APP_ABOUT_LAYER, _("layer %d of %d"), app_newest_layer(app), app->trace.n_layers);
        return true;
    case APP_ACT_HEAD:
        if (arg < 0 || arg >= d->h) return false;
        v->head = arg;
        return true;
    case APP_ACT_HEAD_PREV:
    case APP_ACT_HEAD_NEXT: /* a trace without heads (another program's, h = 0) has none to step through */
        if (d->h <= 0) return false;
        v->head = (v->head + (act == APP_ACT_HEAD_NEXT ? 1 : d->h - 1)) % d->h;
        return true;
    case APP_ACT_BATCH_NEXT:
        if (d->b <= 0) return false;
        v->batch = (v->batch + 1) % d->b;
        app_status_about(app, APP_ABOUT_BATCH, _("batch row %d of %d"), v->batch, d->b);
        return true;
    default: /* APP_ACT_ROW */
        v->row = (arg == v->row || arg < 0 || arg >= d->s) ? -1 : arg;
        return true;
    }
    if (arg < 0 || arg >= n) return false;
    snprintf(v->stage, sizeof v->stage, "%s", app->trace.tensors[arg].name);
    if (app->trace.tensors[arg].layer >= 0) v->layer = app->trace.tensors[arg].layer;
    return true;
}

static bool view_mode(app_state *app, app_action act, int arg)
{
    lesson_view *v = &app->view;
    switch (act) {
    case APP_ACT_SCALE_HEAD:
        app->scale_head = !app->scale_head;
        app_status(app, false, "%s", app->scale_head ? _("colour scale: this head's own range") :
                                                         _("colour scale: shared by all heads"));
        return true;
    case APP_ACT_VOCAB_VIEW:
        app->vocab_heatmap = !app->vocab_heatmap;
        app_status(app, false, "%s", app->vocab_heatmap ? _("logits and probs: the full heatmap (wheel to zoom; y: ranked)")
                                                          : _("logits and probs: each row's top tokens, ranked (y: the full heatmap)"));
        return true;
    case APP_ACT_GRID:
        v->mode = v->mode == LESSON_VIEW_GRID ? LESSON_VIEW_SINGLE : LESSON_VIEW_GRID;
        if (app->has_alt) app_refresh_alt(app); /* leaving the compare view: its toggled trace goes */
        return true;
    case APP_ACT_COMPARE:
        v->mode = v->mode == LESSON_VIEW_COMPARE ? LESSON_VIEW_SINGLE : LESSON_VIEW_COMPARE;
        app_refresh_alt(app);
        return true;
    case APP_ACT_GEOMETRY:
        v->mode = v->mode == LESSON_VIEW_GEOMETRY ? LESSON_VIEW_SINGLE : LESSON_VIEW_GEOMETRY;
        app->geom_hover = -1;
        if (app->has_alt) app_refresh_alt(app);
        return true;
    case APP_ACT_CURVES:
        v->mode = v->mode == LESSON_VIEW_TRAINING ? LESSON_VIEW_SINGLE : LESSON_VIEW_TRAINING;
        if (app->has_alt) app_refresh_alt(app);
        return true;
    case APP_ACT_TILES:
        if (v->mode != LESSON_VIEW_TILES && !app_tiles_ok(app))
            return app_status(app, true, "%s", _("the FlashAttention view needs tiles: --tiles BQxBK, or the settings row tiles")), true;
        v->mode = v->mode == LESSON_VIEW_TILES ? LESSON_VIEW_SINGLE : LESSON_VIEW_TILES;
        app->tile_step = 0;
        if (app->has_alt) app_refresh_alt(app);
        return true;
    case APP_ACT_EXPERTS:
        if (v->mode != LESSON_VIEW_EXPERTS && app_experts_kind_of(app) == APP_EXPERTS_NONE)
            /* TRANSLATORS: E on a trace without a mixture of experts: one status line */
            return app_status(app, true, "%s", _("the expert view (E) needs a mixture-of-experts model (DeepSeek-V2/V3, "
                                                 "gpt-oss): this trace has no routed layer")), true;
        v->mode = v->mode == LESSON_VIEW_EXPERTS ? LESSON_VIEW_SINGLE : LESSON_VIEW_EXPERTS;
        if (app->has_alt) app_refresh_alt(app);
        return true;
    default: /* APP_ACT_COMPARE_WITH: arg -1 is the next one */
        v->compare = arg >= 0 && arg < attn_compare_count() ? arg : (v->compare + 1) % attn_compare_count();
        if (arg < 0 && app->trace.dims.mode != ATTN_MODE_MLA && v->compare == attn_compare_find("mla_absorb"))
            v->compare = (v->compare + 1) % attn_compare_count(); /* t: MLA's toggle only in mode mla */
        v->mode = LESSON_VIEW_COMPARE;
        app_refresh_alt(app);
        return true;
    }
}

/* Saving, fullscreen, text size, overlays, quitting: the window's part. */
static bool window_action(app_state *app, app_action act, int arg)
{
    switch (act) {
    case APP_ACT_SAVE:
    case APP_ACT_SAVE_AS:
        app->save_menu.open = false;
        app->req.save = true;
        app->req.save_kind = act == APP_ACT_SAVE || arg < 0 || arg >= APP_SAVE_KINDS ? APP_SAVE_PNG : (app_save_kind)arg;
        return true;
    case APP_ACT_SAVE_MENU:
        app->save_menu.open = !app->save_menu.open;
        app->save_menu.choice = 0;
        return true;
    case APP_ACT_FULLSCREEN: app->req.fullscreen = !app->req.fullscreen; return true;
    case APP_ACT_FONT_UP:
        if (app->font_scale >= 3.0f) return false;
        app->font_scale = fminf(3.0f, app->font_scale + 0.25f);
        return true;
    case APP_ACT_FONT_DOWN:
        if (app->font_scale <= 0.75f) return false;
        app->font_scale = fmaxf(0.75f, app->font_scale - 0.25f);
        return true;
    case APP_ACT_HELP: app->help = !app->help; return true;
    case APP_ACT_MENU: app->menu_open = !app->menu_open; return true;
    case APP_ACT_DIVIDER: return false; /* a drag, not a click: app_mouse_down starts it */
    case APP_ACT_LESSON_WIDTH: {
        if (!app->lesson.open || app->full_width <= 0) return false;
        int now = app->lesson_width > 0 ? app->lesson_width : app->full_width - app->width;
        app->lesson_width = now + arg * app->full_width / 20;
        return true;
    }
    case APP_ACT_PANELS: /* from what the last frame drew: auto's choice is the one to flip */
        app->view.panels = app->layout.panels_shown ? LESSON_PANELS_HIDDEN : LESSON_PANELS_SHOWN;
        app_status(app, false, "%s",
                   app->view.panels == LESSON_PANELS_SHOWN ? _("stage list and side panel shown (n hides them)")
                                                     : _("stage list and side panel hidden: the picture takes their room (n)"));
        return true;
    case APP_ACT_PRESENT:
        app->present = !app->present;
        app->req.fullscreen = app->present;
        app->toolbar_shown = false;
        if (app->present) {
            app->font_before = app->font_scale;
            app->font_scale = fmaxf(app->font_scale, APP_PRESENT_FONT_SCALE);
        } else {
            app->font_scale = app->font_before;
        }
        return true;
    case APP_ACT_BACK: /* one layer out, innermost first; never quits (q does) */
        if (app->quit_confirm) {
            app->quit_confirm = false;
            return true;
        }
        if (app->help) return window_action(app, APP_ACT_HELP, 0);
        if (app->menu_open) return window_action(app, APP_ACT_MENU, 0);
        if (app->save_menu.open) return window_action(app, APP_ACT_SAVE_MENU, 0);
        if (app->view.row >= 0) return move(app, APP_ACT_ROW, -1);
        if (app->lesson.open) {
            app_player_close(&app->lesson);
            /* TRANSLATORS: the status line after Esc closed a lesson */
            app_status(app, false, "%s", _("lesson closed: the picture stays to explore · l opens the lessons · q quits"));
            return true;
        }
        app_status(app, false, "%s", _("nothing to close · q quits"));
        return true;
    default: /* APP_ACT_QUIT: a lesson open asks first, so that a stray q does not end a class */
        if (app->lesson.open && !app->quit_confirm) {
            app->quit_confirm = true;
            return true;
        }
        app->quit_confirm = false;
        app->req.quit = true;
        app_job_cancel(app); /* the worker stops at its next stage while the window closes */
        return true;
    }
}

/* z: the single view's whole picture again; false when it shows it already. */
static bool zoom_reset(app_state *app)
{
    if (!app->zoom.level && !app->zoom.rows) return false;
    app_zoom_to(app, 0, -1, 0, -1);
    app_status(app, false, "%s", _("the whole picture"));
    return true;
}

/* What acts before the first picture is shown (app_init_later): the keys
 * that need no picture (the help, the lessons, the window's own); the others
 * would act on the example computed under the notice. */
static bool acts_without_picture(app_action act)
{
    switch (act) {
    case APP_ACT_HELP: case APP_ACT_PICKER: case APP_ACT_PICK: case APP_ACT_PICK_SHOW: case APP_ACT_PICKER_RESET:
    case APP_ACT_FULLSCREEN: case APP_ACT_FONT_UP: case APP_ACT_FONT_DOWN: case APP_ACT_PRESENT:
    case APP_ACT_BACK: case APP_ACT_QUIT: return true;
    default: return false;
    }
}

/* What acts on the first picture while it comes layer by layer: those,
 * and moving among the stages, layers and heads ready. */
static bool acts_on_partial(app_action act)
{
    switch (act) {
    case APP_ACT_STAGE: case APP_ACT_STAGE_PREV: case APP_ACT_STAGE_NEXT: case APP_ACT_LAYER_PREV:
    case APP_ACT_LAYER_NEXT: case APP_ACT_HEAD: case APP_ACT_HEAD_PREV: case APP_ACT_HEAD_NEXT:
    case APP_ACT_BATCH_NEXT: case APP_ACT_ROW: case APP_ACT_ZOOM_RESET: case APP_ACT_SCALE_HEAD: case APP_ACT_PANELS:
    case APP_ACT_MENU: return true;
    default: return acts_without_picture(act);
    }
}

/* Whether act waits for the first picture (app->opening.first) or for all of its layers (app->partial). */
static bool refused_now(app_state *app, app_action act)
{
    if (app->opening.first) return !acts_without_picture(act);
    if (!app->partial.on || acts_on_partial(act)) return false;
    /* the worker's trace, being made: looked at, not changed */
    app_status(app, false, "%s", _("the layers are still being traced: this works once they all are"));
    return true;
}

bool app_do(app_state *app, app_action act, int arg)
{
    app->dirty = true;
    if (refused_now(app, act)) return false;
    switch (act) {
    case APP_ACT_NONE: return false;
    case APP_ACT_STAGE:
    case APP_ACT_STAGE_PREV:
    case APP_ACT_STAGE_NEXT:
    case APP_ACT_LAYER_PREV:
    case APP_ACT_LAYER_NEXT:
    case APP_ACT_HEAD:
    case APP_ACT_HEAD_PREV:
    case APP_ACT_HEAD_NEXT:
    case APP_ACT_BATCH_NEXT:
    case APP_ACT_ROW: return move(app, act, arg);
    case APP_ACT_ZOOM_RESET: return zoom_reset(app);
    case APP_ACT_SCALE_HEAD:
    case APP_ACT_VOCAB_VIEW:
    case APP_ACT_GRID:
    case APP_ACT_COMPARE:
    case APP_ACT_GEOMETRY:
    case APP_ACT_CURVES:
    case APP_ACT_TILES:
    case APP_ACT_EXPERTS:
    case APP_ACT_COMPARE_WITH: return view_mode(app, act, arg);
    case APP_ACT_EDIT:
        if (app->from_file) return refuse_in_file(app, "tokens"), true;
        app_edit_start(app, 0);
        return true;
    case APP_ACT_MODEL_NEXT:
        if (app->from_file) return refuse_in_file(app, "model"), true;
        /* in the window: a frame that says so while the models are listed, then the model */
        if (!app->opening.running && app_open_later(app, APP_ACT_MODEL_NEXT, 0, _("the next model"))) {
            if (app_read_models(app)) app->opening.pending = false, app_status(app, true, "%s", "out of memory");
            return true;
        }
        return app_next_model(app) == 0;
    case APP_ACT_DECODE: return toggle_decode(app) == 0;
    case APP_ACT_DECODE_PREV: return decode_step(app, -1) == 0;
    case APP_ACT_DECODE_NEXT: return decode_step(app, +1) == 0;
    case APP_ACT_PRESENT:
    case APP_ACT_SAVE:
    case APP_ACT_SAVE_MENU:
    case APP_ACT_SAVE_AS:
    case APP_ACT_FULLSCREEN:
    case APP_ACT_FONT_UP:
    case APP_ACT_FONT_DOWN:
    case APP_ACT_HELP:
    case APP_ACT_MENU:
    case APP_ACT_PANELS:
    case APP_ACT_LESSON_WIDTH:
    case APP_ACT_DIVIDER:
    case APP_ACT_BACK:
    case APP_ACT_QUIT: return window_action(app, act, arg);
    case APP_ACT_LESSON_NEXT:
    case APP_ACT_LESSON_PREV:
    case APP_ACT_LESSON_RESTORE:
    case APP_ACT_LESSON_CHOICE:
    case APP_ACT_LESSON_CHECK:
    case APP_ACT_LESSON_FIELD:
    case APP_ACT_LESSON_REVEAL:
    case APP_ACT_LESSON_ONWARD:
    case APP_ACT_LESSON_MORE:
    case APP_ACT_PICKER:
    case APP_ACT_PICK:
    case APP_ACT_PICKER_RESET:
    case APP_ACT_PICK_SHOW: return app_lesson_do(app, act, arg);
    case APP_ACT_CYCLE: return app_cycle(app, arg);
    case APP_ACT_TRAIN_PREV:
    case APP_ACT_TRAIN_NEXT:
    case APP_ACT_TRAIN_AT:
    case APP_ACT_TRAIN_METRIC:
    case APP_ACT_TRAIN_HEAD:
        if (app->from_file) return refuse_in_file(app, "model"), true;
        return app_train_do(app, act, arg);
    default: return config_action(app, act);
    }
}
