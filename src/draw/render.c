/* render.c — one frame: controls, stage navigator, header, picture, status, overlays. */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/attention/attention.h"
#include "engine/model/kv_bytes.h"
#include "i18n.h"
#include "keys.h"
#include "edit_view.h"
#include "lesson_panel.h"
#include "modal.h"
#include "plot.h"
#include "predict.h"
#include "stage_note.h"
#include "train_panel.h"
#include "text_strip.h"
#include "experts_view.h"
#include "tiles_view.h"
#include "view.h"

#define DRAW_MAX_LISTED 512 /* stages the navigator lists: one layer's and the model-level ones */


static void hit(draw_list *dl, int x, int y, int w, int h, app_action act, int arg)
{
    app_layout_hit(dl->layout, (app_rect){x, y, w, h}, act, arg);
}

/* ---- the control bar ------------------------------------------------------ */

/* A clickable arrow button on a text line at y; returns its width. */
static int arrow(draw_list *dl, int x, int y, const char *glyph, app_action act)
{
    int u = draw_line_h(dl), w = draw_text_w(dl, glyph) + u;
    draw_fill(dl, x, y - 2, w, u + 4, DRAW_PANEL_HI);
    draw_text(dl, glyph, x + u / 2, y, DRAW_TEXT);
    hit(dl, x, y - 2, w, u + 4, act, 0);
    return w;
}

/* The toolbar is one row of chips in the order of this list; the chips that do
 * not fit go, in the same order, into the menu behind "⋯" at its end. */
enum { MAX_CHIPS = 40 };

typedef struct {
    char label[112];
    bool on;
    app_action act;
    int arg;
    const char *tip;
    bool tight;  /* drawn against the chip before it (the − and + of a count) */
    bool hidden; /* in the menu: the row has no room for it */
} chip_spec;

typedef struct {
    chip_spec c[MAX_CHIPS];
    int n;
    bool any_hidden;  /* some chips are in the menu */
    app_rect more;    /* the "⋯" chip */
} chip_bar;

static chip_spec *add_chip(chip_bar *b, bool on, app_action act, int arg, const char *label)
{
    if (b->n >= MAX_CHIPS) return &b->c[MAX_CHIPS - 1];
    chip_spec *c = &b->c[b->n++];
    *c = (chip_spec){.on = on, .act = act, .arg = arg};
    snprintf(c->label, sizeof c->label, "%s", label);
    return c;
}

/* A count with − and + buttons around it: "− h heads 4 +". */
static void add_count(chip_bar *b, const char *label, app_action down, app_action up, const char *tip_down,
                      const char *tip_up)
{
    add_chip(b, false, down, 0, "−")->tip = tip_down;
    chip_spec *c = add_chip(b, false, up, 0, label);
    c->tight = true;
    c->tip = tip_up;
    c = add_chip(b, false, up, 0, "+");
    c->tight = true;
    c->tip = tip_up;
}

/* A chip for each key that steps a setting through its values (the CYCLE rows of
 * keys.c): those in use (not at their default) lit among the mask chips, and
 * with in_use false those off, unlit at the end of the row, where the menu
 * behind "⋯" takes them first when the row is full; the help lists the keys. */
static void cycle_chips(chip_bar *b, const attn_config *c, bool in_use)
{
    char val[48], text[96], buf[112];
    for (int i = 0; i < app_n_keys; i++) {
        const app_key_binding *k = &app_keys[i];
        const attn_setting *row = k->action == APP_ACT_CYCLE && k->chip ? attn_setting_find(k->setting) : NULL;
        if (!row || attn_setting_is_default(c, row) == in_use) continue;
        if (c->mode != ATTN_MODE_MLA && !strcmp(row->name, "mla_absorb")) continue; /* MLA's own */
        const char *v = attn_setting_format(c, row, val, sizeof val);
        if (!in_use) v = _("off"); /* every cycled setting's default is off */
        else if (row->type == ATTN_SET_BOOL) v = _("on");
        snprintf(text, sizeof text, _(k->chip), v);
        snprintf(buf, sizeof buf, "%s  %s", k->help_keys, text);
        add_chip(b, in_use, APP_ACT_CYCLE, app_keys_arg(k), buf);
    }
}

/* The fill value as the lessons write it: −1e9, not -1e+09. */
static const char *fill_text(float v, char *buf, size_t size)
{
    char raw[32], *o = buf, *end = buf + size - 4;
    attn_format_mask_value(v, raw, sizeof raw);
    for (const char *s = raw; *s && o < end; s++) {
        if (*s == '-' && (s == raw || s[-1] == 'e')) { /* a minus sign, not a hyphen */
            memcpy(o, "−", 3), o += 3;
        } else if (*s == '+' && s > raw && s[-1] == 'e') {
            continue;
        } else if (*s == '0' && s > raw && (s[-1] == 'e' || (s[-1] == '+' || s[-1] == '-')) && s[1]) {
            continue; /* 1e+09 → 1e9 */
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return buf;
}

/* The views' chips: those always offered, then those the trace shown has (training curves, tiles, experts). */
static void view_chips(const app_state *app, chip_bar *b)
{
    add_chip(b, app->view.mode == LESSON_VIEW_GRID, APP_ACT_GRID, 0, _("g  all heads"));
    add_chip(b, app->view.mode == LESSON_VIEW_COMPARE, APP_ACT_COMPARE, 0, _("Tab  compare"));
    add_chip(b, app->view.mode == LESSON_VIEW_GEOMETRY, APP_ACT_GEOMETRY, 0, _("a  arrows"));
    /* TRANSLATORS: the toolbar chip of the training view: the loss and the heads' measures over training */
    if (draw_train_view_ok(app)) add_chip(b, app->view.mode == LESSON_VIEW_TRAINING, APP_ACT_CURVES, 0, _("T  training curves"));
    /* TRANSLATORS: the toolbar chip of the FlashAttention view (with --tiles) */
    if (app_tiles_ok(app)) add_chip(b, app->view.mode == LESSON_VIEW_TILES, APP_ACT_TILES, 0, _("F  FlashAttention tiles"));
    /* TRANSLATORS: the toolbar chip of the token × expert view (a mixture-of-experts model) */
    if (app_experts_first_layer(&app->trace) >= 0)
        add_chip(b, app->view.mode == LESSON_VIEW_EXPERTS, APP_ACT_EXPERTS, 0, _("E  experts"));
}

/* Every chip of the toolbar, the most used first. */
static void chip_list(const app_state *app, bool panels, chip_bar *b)
{
    const attn_config *c = &app->trace.cfg;
    const attn_dims *d = &app->trace.dims;
    char buf[112], mv[24];
    bool model = app->model && attn_trace_is_model(&app->trace);
    const char *mode = d->mode == ATTN_MODE_MHA ? "MHA" : d->mode == ATTN_MODE_MQA ? "MQA"
                     : d->mode == ATTN_MODE_MLA ? "MLA" : "GQA";
    b->n = 0;
    if (model) { /* a trained model's heads and RoPE are as trained: m switches to its variants */
        /* TRANSLATORS: the model chip: its name, MHA/GQA/MQA, query heads / K/V heads */
        if (d->mode == ATTN_MODE_MLA) /* no K/V heads: every head reads the one latent cache */
            /* TRANSLATORS: the model chip of a latent-attention model: its name, its query heads */
            snprintf(buf, sizeof buf, _("m  model %s · MLA %d heads"), app_model_name(app), d->h);
        else
            snprintf(buf, sizeof buf, _("m  model %s · %s %d/%d"), app_model_name(app), mode, d->h, d->g);
        add_chip(b, true, APP_ACT_MODE, 0, buf);
        int at = app_training_position(&app->train, app->cfg.model);
        if (at >= 0) { /* a model saved during training: a stepper through its steps */
            /* TRANSLATORS: the training-step chip: the checkpoint shown, or the model as training ended */
            if (at < app->train.n) snprintf(buf, sizeof buf, _("j  step %ld"), app->train.steps[at]);
            else snprintf(buf, sizeof buf, "%s", _("j  final"));
            add_count(b, buf, APP_ACT_TRAIN_PREV, APP_ACT_TRAIN_NEXT, _("earlier training step (J)"),
                      _("later training step (j)"));
        }
    } else {
        /* TRANSLATORS: control chips: the key, two spaces, the setting. Keep the key first and the chips short. */
        snprintf(buf, sizeof buf, _("m  mode %s"), mode);
        add_chip(b, false, APP_ACT_MODE, 0, buf);
    }
    /* TRANSLATORS: "on", "off", "REVERSED": the state of the causal mask (and of RoPE) in a chip */
    snprintf(buf, sizeof buf, _("c  causal %s"),
             d->cross || !c->causal ? _("off") : c->causal == ATTN_CAUSAL_REVERSED ? _("REVERSED") : _("on"));
    add_chip(b, c->causal && !d->cross, APP_ACT_CAUSAL, 0, buf);
    /* TRANSLATORS: "left", "right": the side the <pad> tokens are on; "unmasked": no padding mask */
    snprintf(buf, sizeof buf, _("p  padding %s"),
             !c->pad_mask ? _("unmasked") : c->pad_side == ATTN_PAD_LEFT ? _("left") : _("right"));
    add_chip(b, attn_trace_stage_text(&app->trace).pad_mask, APP_ACT_PADDING, 0, buf); /* lit only where it masks */
    if (!c->scale) add_chip(b, true, APP_ACT_NONE, 0, _("no 1/√dₖ scaling")); /* a lesson's pitfall setting */
    if (!c->softmax_guard) add_chip(b, true, APP_ACT_NONE, 0, _("unguarded softmax")); /* the same */
    cycle_chips(b, c, true);
    if (!model) {
        snprintf(buf, sizeof buf, _("h  heads %d"), d->h);
        add_count(b, buf, APP_ACT_HEADS_DOWN, APP_ACT_HEADS_UP, _("fewer heads (H)"), _("more heads (h)"));
        if (d->mode == ATTN_MODE_MLA) { /* no kv heads: one latent of R and one RoPE key of D a token */
            /* TRANSLATORS: MLA's chip: what its cache keeps a token, the latent's width R and the RoPE key's D */
            snprintf(buf, sizeof buf, _("latent R=%d + k_pe D=%d"), d->kv_rank, d->rope_dim);
            add_chip(b, true, APP_ACT_NONE, 0, buf);
        } else {
            snprintf(buf, sizeof buf, _("v  kv heads %d"), d->g);
            add_count(b, buf, APP_ACT_KV_DOWN, APP_ACT_KV_UP, _("fewer kv heads (V)"), _("more kv heads (v)"));
        }
        snprintf(buf, sizeof buf, _("r  RoPE %s"), c->rope ? _("on") : _("off"));
        add_chip(b, c->rope, APP_ACT_ROPE, 0, buf);
    }
    add_chip(b, app_decoding(app), APP_ACT_DECODE, 0, app_decoding(app) ? _("k  decoding") : _("k  decode"));
    add_chip(b, app->edit.open, APP_ACT_EDIT, 0, model ? _("e  edit text") : _("e  edit tokens"));
    view_chips(app, b);
    if (app->scale_head) add_chip(b, true, APP_ACT_SCALE_HEAD, 0, _("u  colours: this head"));
    if (c->train) snprintf(buf, sizeof buf, _("d  training, dropout %g"), c->dropout);
    else snprintf(buf, sizeof buf, "%s", _("d  evaluation"));
    add_chip(b, c->train, APP_ACT_TRAIN, 0, buf);
    /* TRANSLATORS: the value masked scores are filled with (−∞ or −1e9), not padding */
    snprintf(buf, sizeof buf, _("i  fill %s"), isinf(c->mask_value) ? "−∞" : fill_text(c->mask_value, mv, sizeof mv));
    add_chip(b, !isinf(c->mask_value), APP_ACT_FILL, 0, buf); /* −1e9: the pitfall, shown while in use */
    if (!model) add_chip(b, d->cross, APP_ACT_CROSS, 0, d->cross ? _("x  cross-attention") : _("x  self-attention"));
    if (!app->from_file)
        add_chip(b, false, APP_ACT_MODEL_NEXT, 0, model ? _("o  next model") : _("o  trained models"));
    add_chip(b, panels, APP_ACT_PANELS, 0, _("n  panels"));
    add_chip(b, app->lesson.picker, APP_ACT_PICKER, 0, _("l  lessons"));
    add_chip(b, app->help, APP_ACT_HELP, 0, _("?  help"));
    if (!app->from_file && !model) cycle_chips(b, c, false); /* the settings not in use, last: first into the menu */
    /* TRANSLATORS: the toolbar chip of presenter mode (F5): last, so the first into the "⋯" menu */
    add_chip(b, app->present, APP_ACT_PRESENT, 0, _("F5  presenter mode"));
}

static void draw_chip(draw_list *dl, const chip_spec *c, app_rect r)
{
    int u = draw_line_h(dl);
    draw_fill(dl, r.x, r.y, r.w, r.h, c->on ? DRAW_PANEL_HI : DRAW_PANEL);
    if (c->on) draw_outline(dl, r.x, r.y, r.w, r.h, 1, DRAW_ACCENT);
    draw_text(dl, c->label, r.x + u / 2, r.y + (r.h - u) / 2, c->on ? DRAW_WHITE : DRAW_TEXT);
    if (c->act != APP_ACT_NONE) app_layout_hit_tip(dl->layout, r, c->act, c->arg, c->tip);
}

static int chip_w(draw_list *dl, const chip_spec *c)
{
    return draw_text_w(dl, c->label) + draw_line_h(dl);
}

/* Which chips go into the menu when the row is too narrow: the ones not in
 * use, from the end of the row, then, if that is not enough, those in use.
 * A count's − label + go together. */
static void overflow(draw_list *dl, chip_bar *b, int room)
{
    int gap = draw_line_h(dl) / 4, total = 0;
    for (int i = 0; i < b->n; i++) {
        b->c[i].hidden = false;
        total += chip_w(dl, &b->c[i]) + (b->c[i].tight ? 0 : gap);
    }
    for (int pass = 0; pass < 2 && total > room; pass++)
        for (int i = b->n - 1; i >= 0 && total > room; i--) {
            if (b->c[i].tight || b->c[i].hidden || (pass == 0 && b->c[i].on)) continue;
            for (int k = i; k < b->n && (k == i || b->c[k].tight); k++) {
                b->c[k].hidden = true;
                total -= chip_w(dl, &b->c[k]) + (b->c[k].tight ? 0 : gap);
            }
        }
}

/* One row: the name, then the chips that fit, with "⋯" at the end for the
 * rest (overflow). Returns the row's bottom. */
static int controls_height(draw_list *dl)
{
    int u = draw_line_h(dl);
    return u / 3 + u + u / 2 + u / 3;
}

static int controls(draw_list *dl, const app_state *app, bool panels, chip_bar *b)
{
    int u = draw_line_h(dl), h = u + u / 2, y = u / 3, gap = u / 4;
    int right = dl->layout->width - u / 2;
    chip_list(app, panels, b);
    int x = u / 2 + draw_text(dl, "attnlab", u / 2, y + u / 4, DRAW_ACCENT) + u;
    const char *more = "⋯";
    int more_w = draw_text_w(dl, more) + u;
    overflow(dl, b, right - x);
    b->any_hidden = false;
    for (int i = 0; i < b->n; i++) b->any_hidden |= b->c[i].hidden;
    if (b->any_hidden) overflow(dl, b, right - x - more_w - gap);
    for (int i = 0; i < b->n; i++) {
        if (b->c[i].hidden) continue;
        int w = chip_w(dl, &b->c[i]);
        if (b->c[i].tight) x -= gap;
        draw_chip(dl, &b->c[i], (app_rect){x, y, w, h});
        x += w + gap;
    }
    b->more = (app_rect){0, 0, 0, 0};
    if (b->any_hidden) {
        b->more = (app_rect){right - more_w, y, more_w, h};
        chip_spec m = {.on = app->menu_open, .act = APP_ACT_MENU};
        snprintf(m.label, sizeof m.label, "%s", more);
        /* TRANSLATORS: the tooltip of the toolbar's "⋯" button */
        m.tip = _("more controls");
        draw_chip(dl, &m, b->more);
    }
    return y + h + u / 3; /* controls_height */
}

/* The chips that did not fit, one under another below "⋯". */
static void menu_overlay(draw_list *dl, const chip_bar *b)
{
    int u = draw_line_h(dl), row = u + u / 2, w = 0, n = 0;
    if (!b->any_hidden) return;
    for (int i = 0; i < b->n; i++)
        if (b->c[i].hidden && strcmp(b->c[i].label, "−") && strcmp(b->c[i].label, "+")) {
            w = draw_imax(w, chip_w(dl, &b->c[i]));
            n++;
        }
    w += 4 * u;
    int x = draw_imax(0, b->more.x + b->more.w - w), y = b->more.y + b->more.h + u / 4;
    draw_fill(dl, x, y, w, n * row + u / 2, DRAW_PANEL);
    draw_outline(dl, x, y, w, n * row + u / 2, 1, DRAW_ACCENT);
    int ry = y + u / 4;
    for (int i = 0; i < b->n; i++) {
        const chip_spec *c = &b->c[i];
        if (!c->hidden || c->tight) continue;
        bool count = i + 2 < b->n && b->c[i + 1].tight; /* − label +: the label's row, − and + at its ends */
        const chip_spec *label = count ? &b->c[i + 1] : c;
        app_rect r = {x + u / 4, ry, w - u / 2, row - 2};
        draw_fill(dl, r.x, r.y, r.w, r.h, label->on ? DRAW_PANEL_HI : DRAW_PANEL);
        draw_text(dl, label->label, r.x + (count ? 2 * u : u / 2), r.y + (r.h - u) / 2, label->on ? DRAW_WHITE : DRAW_TEXT);
        if (count) {
            int mw = draw_text_w(dl, "−") + u, pw = draw_text_w(dl, "+") + u;
            app_rect lo = {r.x, r.y, mw, r.h}, hi = {r.x + r.w - pw, r.y, pw, r.h};
            draw_text(dl, "−", lo.x + u / 2, r.y + (r.h - u) / 2, DRAW_ACCENT);
            draw_text(dl, "+", hi.x + u / 2, r.y + (r.h - u) / 2, DRAW_ACCENT);
            app_layout_hit_tip(dl->layout, r, label->act, label->arg, label->tip);
            app_layout_hit_tip(dl->layout, lo, c->act, c->arg, c->tip);
            app_layout_hit_tip(dl->layout, hi, b->c[i + 2].act, b->c[i + 2].arg, b->c[i + 2].tip);
        } else if (c->act != APP_ACT_NONE) {
            app_layout_hit_tip(dl->layout, r, c->act, c->arg, c->tip);
        }
        ry += row;
    }
}

/* ---- the stage navigator -------------------------------------------------- */

/* The tensors the navigator lists (the viewed layer's, and model-level ones),
 * as indices into the trace; returns how many. */
static int listed(const app_state *app, int *idx, int max)
{
    int n = 0;
    for (int i = 0; i < app->trace.n_tensors && n < max; i++)
        if (app_in_layer(app, i)) idx[n++] = i;
    return n;
}

/* A stage's name in the navigator: without its "layers.N." (the layer line says it). */
static const char *nav_name(const attn_tensor *t)
{
    const char *rest = t->name;
    attn_tensor_name_layer(t->name, &rest);
    return rest;
}

static int navigator_width(draw_list *dl, const app_state *app)
{
    char shape[96];
    int w = 0;
    for (int i = 0; i < app->trace.n_tensors; i++) {
        const attn_tensor *t = &app->trace.tensors[i];
        if (!app_in_layer(app, i)) continue;
        /* beside a lesson panel, names only: the header above the picture gives the shape */
        w = draw_imax(w, draw_text_w(dl, nav_name(t)) +
                        (app->lesson.open ? 0 : draw_text_w(dl, attn_tensor_shape_str(t, shape, sizeof shape))));
    }
    if (app->trace.n_layers > 1) { /* the layer line: ◀ layer N of M ▶ , . */
        char buf[96];
        snprintf(buf, sizeof buf, _("layer %d / %d"), app->trace.n_layers - 1, app->trace.n_layers);
        if (app->partial.on) snprintf(buf + strlen(buf), sizeof buf - strlen(buf), _(" · %d ready"), app->trace.n_layers);
        w = draw_imax(w, 2 * (draw_text_w(dl, "◀") + draw_line_h(dl)) + draw_text_w(dl, buf) + draw_line_h(dl) / 2);
    }
    return draw_imin(w + draw_line_h(dl) * 2, dl->layout->width * 2 / 5);
}

/* "layer 3 / 22", and while the first picture comes layer by layer, how many are ready. */
static void layer_label(const app_state *app, char *buf, size_t size)
{
    /* TRANSLATORS: the layer shown / how many layers there are (short: the stage list is narrow) */
    int n = snprintf(buf, size, _("layer %d / %d"), app->view.layer, app->trace.n_layers);
    /* TRANSLATORS: after "layer 3 / 22" while the layers are traced: how many can be shown */
    if (app->partial.on && n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, _(" · %d ready"), app->partial.layers);
}

static void navigator(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl), row = u + u / 3;
    int idx[DRAW_MAX_LISTED];
    int n = listed(app, idx, DRAW_MAX_LISTED);
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    draw_text_fit(dl, _("stages  ← →"), box.x + u / 2, box.y + u / 4, box.w - u, DRAW_TEXT_DIM);
    int top = box.y + u + u / 2;
    if (app->trace.n_layers > 1) {
        char buf[96];
        int x = box.x + u / 2, y = top - u / 4;
        x += arrow(dl, x, y, "◀", APP_ACT_LAYER_PREV) + u / 4;
        layer_label(app, buf, sizeof buf);
        x += draw_text(dl, buf, x, y, DRAW_ACCENT) + u / 4;
        x += arrow(dl, x, y, "▶", APP_ACT_LAYER_NEXT) + u / 2;
        draw_text_fit(dl, ", .", x, y, box.x + box.w - x, DRAW_TEXT_DIM);
        top += u + u / 2;
    }
    int fits = draw_imax(1, (box.h - (top - box.y)) / row);
    /* keep the current stage in view (positions in the list) */
    int first = app->stage_scroll, stage = 0, cur_i = app_stage(app);
    for (int k = 0; k < n; k++)
        if (idx[k] == cur_i) stage = k;
    if (stage < first) first = stage;
    if (stage >= first + fits) first = stage - fits + 1;
    if (first > draw_imax(0, n - fits)) first = draw_imax(0, n - fits);
    if (first < 0) first = 0;
    dl->layout->stage_first = first;
    char shape[96];
    int name_w = 0;
    for (int k = 0; k < n; k++) name_w = draw_imax(name_w, draw_text_w(dl, nav_name(&app->trace.tensors[idx[k]])));
    for (int k = first; k < n && k < first + fits; k++) {
        int i = idx[k];
        const attn_tensor *t = &app->trace.tensors[i];
        int y = top + (k - first) * row;
        bool cur = i == cur_i;
        if (cur) draw_fill(dl, box.x, y, box.w, row, DRAW_PANEL_HI);
        if (cur) draw_fill(dl, box.x, y, 3, row, DRAW_ACCENT);
        draw_text(dl, nav_name(t), box.x + u / 2, y + (row - u) / 2, cur ? DRAW_WHITE : DRAW_TEXT);
        if (!app->lesson.open) /* beside a lesson, names only (the header gives the shape) */
            draw_text_fit(dl, attn_tensor_shape_str(t, shape, sizeof shape), box.x + u / 2 + name_w + u / 2,
                          y + (row - u) / 2, box.w - name_w - u * 3 / 2, cur ? DRAW_TEXT : DRAW_TEXT_DIM);
        hit(dl, box.x, y, box.w, row, APP_ACT_STAGE, i);
    }
}

/* ---- header and decode panel ---------------------------------------------- */

static const char *axis_name(app_axis a)
{
    switch (a) {
    case APP_AXIS_QUERY: return _("queries i");
    case APP_AXIS_KEY: return _("keys j");
    case APP_AXIS_NEW: return _("new positions");
    case APP_AXIS_PAST: return _("cached positions");
    case APP_AXIS_INPUT: return _("input features m");
    /* TRANSLATORS: the columns of a weight matrix W_Q, W_K, W_V, W_O: the features it produces */
    case APP_AXIS_OUTPUT: return _("output features c");
    case APP_AXIS_FEATURE: return _("features c");
    /* TRANSLATORS: the columns of logits and probs: one per token id of the model's vocabulary */
    case APP_AXIS_VOCAB: return _("vocabulary ids v");
    /* TRANSLATORS: the rows of sink_weight: one per query head */
    case APP_AXIS_HEAD: return _("heads h");
    /* TRANSLATORS: the columns of router_scores and expert_weights: one per routed expert of a MoE layer */
    case APP_AXIS_EXPERT: return _("experts e");
    default: return "";
    }
}

/* Draws s wrapped (or, with draw false, only counts its lines). */
static int para(draw_list *dl, bool draw, const char *s, int x, int y, int w, uint32_t c)
{
    return draw ? draw_text_wrap(dl, s, x, y, w, c) : draw_text_wrap_lines(dl, s, w);
}

/* The header folded to its stage line (presenting): after the shape, the
 * batch row when there are several and the head, as the batch line says them. */
/* " · head j of h (↑ ↓)" and the kv head it reads; MLA has none: every head
 * reads the one latent c_kv and the one shared k_pe. */
static int head_text(const attn_dims *d, int head, char *buf, size_t size)
{
    if (d->mode == ATTN_MODE_MLA) return snprintf(buf, size, _(" · head %d of %d (↑ ↓)"), head, d->h);
    return snprintf(buf, size, _(" · head %d of %d (↑ ↓) · reads kv head %d"), head, d->h, app_view_kv_head(d, head));
}

static void compact_tail(const app_state *app, const attn_tensor *t, char *buf, size_t size)
{
    const attn_dims *d = &app->trace.dims;
    app_view_slice v;
    size_t n = strlen(buf);
    if (app_view_make(&app->trace, t->name, app->view.batch, app->view.head, &v)) return;
    if (d->b > 1 && n < size) {
        n += (size_t)snprintf(buf + n, size - n, " · ");
        if (n < size) n += (size_t)snprintf(buf + n, size - n, _("batch row %d of %d"), app->view.batch, d->b);
    }
    if ((v.head_axis == 'h' || v.head_axis == 'g' || v.block) && n < size)
        head_text(d, app->view.head, buf + n, size - n);
}

/* The stage line when the stage list is hidden: ◀ name ▶, its shape, and the
 * layer's ◀ N / M ▶: the list's buttons, on one line. */
static void stage_line(draw_list *dl, const app_state *app, const attn_tensor *t, app_rect box, int y, bool compact)
{
    int u = draw_line_h(dl), x = box.x, right = box.x + box.w;
    char buf[96], shape[300];
    x += arrow(dl, x, y, "◀", APP_ACT_STAGE_PREV) + u / 4;
    const char *name = nav_name(t);
    int nw = draw_text_w_bold(dl, name);
    draw_text_bold(dl, name, x, y, DRAW_WHITE);
    /* TRANSLATORS: the tooltip of the stage name above the picture */
    app_layout_hit_tip(dl->layout, (app_rect){x, y - 2, nw, u + 4}, APP_ACT_PANELS, 0, _("show the list of stages (n)"));
    x += nw + u / 4;
    x += arrow(dl, x, y, "▶", APP_ACT_STAGE_NEXT) + u / 2;
    if (app->trace.n_layers > 1 && t->layer >= 0) { /* embeddings, logits, probs: in no layer */
        layer_label(app, buf, sizeof buf);
        int need = 2 * (draw_text_w(dl, "◀") + u) + draw_text_w(dl, buf) + u;
        if (x + need <= right) {
            x += arrow(dl, x, y, "◀", APP_ACT_LAYER_PREV) + u / 4;
            x += draw_text(dl, buf, x, y, DRAW_ACCENT) + u / 4;
            x += arrow(dl, x, y, "▶", APP_ACT_LAYER_NEXT) + u / 2;
            dl->layout->layer_shown = true;
        }
    }
    attn_tensor_shape_str(t, shape, sizeof shape);
    if (compact) { /* the header's other lines left out: the batch row and the head here, the formula as a tooltip */
        compact_tail(app, t, shape, sizeof shape);
        if (t->info) {
            attn_stage_text tc = attn_trace_tensor_text(&app->trace, t);
            app_layout_hit_tip(dl->layout, (app_rect){x, y - 2, draw_imin(draw_text_w(dl, shape), right - x), u + 4}, APP_ACT_NONE, 0,
                               _(attn_stage_formula_in(t->info, &tc)));
        }
    }
    draw_text_fit(dl, shape, x, y, right - x, DRAW_TEXT_DIM);
}

/* Above the picture: the stage (a line of its own with buttons when the stage
 * list is hidden), its formula, its description when `detail`, and which
 * batch row and head are shown. With draw false only measures. Returns the
 * y below it. */
static int header(draw_list *dl, const app_state *app, app_rect box, bool rail, bool detail, bool compact, bool draw)
{
    int u = draw_line_h(dl), y = box.y;
    const attn_tensor *t = app_tensor(app);
    const attn_dims *d = &app->trace.dims;
    if (!t) return y;
    char buf[400], shape[96];
    app_view_slice v;
    app_view_make(&app->trace, t->name, app->view.batch, app->view.head, &v);
    if (draw && rail) {
        snprintf(buf, sizeof buf, "%s %s", t->name, attn_tensor_shape_str(t, shape, sizeof shape));
        draw_text_fit(dl, buf, box.x, y, box.w, DRAW_WHITE);
    } else if (draw) {
        stage_line(dl, app, t, box, y + 2, compact);
    }
    y += rail ? u + u / 4 : u + u / 2;
    if (compact) return y;
    if (t->info) {
        attn_stage_text tc = attn_trace_tensor_text(&app->trace, t);
        const char *formula = _(attn_stage_formula_in(t->info, &tc));
        if (app->view.mode == LESSON_VIEW_EXPERTS) /* the router's formulas name each family's rule: read whole */
            y += para(dl, draw, formula, box.x, y, box.w, DRAW_ACCENT) * u + u / 8;
        else {
            if (draw) draw_text_fit(dl, formula, box.x, y, box.w, DRAW_ACCENT);
            y += u + u / 8;
        }
        if (draw_stage_note(app, t, buf, sizeof buf)) /* the formula's numbers: ALiBi's m_h, the cap C, the sink's X */
            y += para(dl, draw, buf, box.x, y, box.w, DRAW_TEXT) * u + u / 8;
        if (detail) y += para(dl, draw, _(attn_stage_desc_in(t->info, &tc)), box.x, y, box.w, DRAW_TEXT_DIM) * u + u / 8;
    }
    int n = snprintf(buf, sizeof buf, _("batch row %d of %d"), app->view.batch, d->b);
    if (v.head_axis == 'h' || v.head_axis == 'g' || v.block)
        n += head_text(d, app->view.head, buf + n, sizeof buf - (size_t)n);
    if (v.head_axis == 'g')
        n += snprintf(buf + n, sizeof buf - (size_t)n, _(" · this tensor has g = %d kv heads"), d->g);
    if (app->view.mode == LESSON_VIEW_SINGLE && v.row_axis != APP_AXIS_NONE)
        n += snprintf(buf + n, sizeof buf - (size_t)n, _(" · rows: %s, columns: %s"), axis_name(v.row_axis),
                      axis_name(v.col_axis));
    int at = app_training_position(&app->train, app->cfg.model);
    if (at >= 0 && n >= 0 && (size_t)n < sizeof buf)
        snprintf(buf + n, sizeof buf - (size_t)n, at == app->train.n ? _(" · final model (j J: training steps)")
                                                                    : _(" · training step %ld (j J)"),
                 app_training_step(&app->train, at));
    y += para(dl, draw, buf, box.x, y, box.w, DRAW_TEXT) * u + u / 2;
    return y;
}

static const char *bytes_str(double b, char *buf, size_t size)
{
    if (b >= 1 << 20) snprintf(buf, size, "%.1f\u00a0MiB", b / (1 << 20)); /* no-break spaces: never split */
    else if (b >= 1 << 10) snprintf(buf, size, "%.1f\u00a0KiB", b / (1 << 10));
    else snprintf(buf, size, "%.0f\u00a0B", b);
    return buf;
}

/* The decode panel's two sentences: what the new query reads, and the KV
 * cache's size under MHA, GQA and MQA (and MLA's, in mode mla). */
static void decode_texts(const app_state *app, char *reads, char *cache, size_t size)
{
    const attn_dims *d = &app->trace.dims;
    char tok[80], a[32], b[32], c[32], m[32];
    const char *q = d->b > 0 && d->L > 0 ? attn_tokens_at(&app->trace.tokens, app->view.batch, d->L - 1) : "";
    snprintf(tok, sizeof tok, "%s", q);
    snprintf(reads, size, _("the new query “%s” reads all %d keys: %d from the cache, 1 computed now"), tok, d->t, d->P);
    /* K and V, float32, one layer: 2 · b · g · t · k · 4 bytes */
    double per = 2.0 * d->k * 4;
    int g_gqa = attn_gqa_default_groups(d->h);
    if (d->mode == ATTN_MODE_GQA) g_gqa = d->g;
    int n = snprintf(cache, size, _("KV cache of one layer, K and V in float32 for %d×%d positions: MHA %s"), d->b, d->t,
                     bytes_str(per * d->h * d->t * d->b, a, sizeof a));
    /* no-break spaces (U+00A0) inside an item: a line breaks between items */
    if (g_gqa) n += snprintf(cache + n, size - (size_t)n, " · GQA\u00a0(g=%d)\u00a0%s", g_gqa, bytes_str(per * g_gqa * d->t * d->b, b, sizeof b));
    n += snprintf(cache + n, size - (size_t)n, " · MQA\u00a0%s", bytes_str(per * 1 * d->t * d->b, c, sizeof c));
    /* MLA keeps one latent of R and one RoPE key of D a token, shared by every head: (R + D) · 4 bytes */
    double mla = d->mode == ATTN_MODE_MLA ? (d->kv_rank + d->rope_dim) * 4.0 : 0, mine = mla ? mla : per * d->g;
    if (mla)
        /* TRANSLATORS: MLA's cache: R latent + D RoPE-key floats a token; no-break spaces keep it on one line */
        n += snprintf(cache + n, size - (size_t)n, _(" · MLA\u00a0(R=%d,\u00a0D=%d)\u00a0%s"), d->kv_rank, d->rope_dim,
                      bytes_str(mla * d->t * d->b, b, sizeof b));
    /* per token in exact bytes, as the side panel counts them: one layer, then all of them */
    snprintf(m, sizeof m, "%.0f\u00a0B", mine);
    n += snprintf(cache + n, size - (size_t)n, _(" · this model: %s per token per layer"), m);
    attn_kv_bytes kv = {0}; /* a model with local layers: theirs capped at the window (kv_bytes.h, as info) */
    if (app->model && attn_trace_is_model(&app->trace)) kv = attn_kv_bytes_of(&app->model->cfg, 4);
    if (kv.local_layers)
        /* TRANSLATORS: a model with local (sliding-window) layers: per token its global layers' bytes, and its
         * local layers' at most W tokens of N bytes; no-break spaces keep each item on one line */
        snprintf(cache + n, size - (size_t)n, _(", %.0f\u00a0B in the global layers + at most %d\u00a0×\u00a0%.0f\u00a0B "
                                                "in the local\u00a0ones"), kv.full, kv.window, kv.local);
    else if (app->trace.n_layers > 1)
        /* TRANSLATORS: the KV cache per token of every layer of the model; no-break spaces keep it on one line */
        snprintf(cache + n, size - (size_t)n, _(", %.0f\u00a0B for all\u00a0%d\u00a0layers"), mine * app->trace.n_layers,
                 app->trace.n_layers);
}

/* [◀ decode step N of M ▶], what the new query reads, the cache's size (both
 * wrapped, never cut), and a cell per position, the cached ones lit. */
static int decode_panel(draw_list *dl, const app_state *app, app_rect box, bool draw)
{
    int u = draw_line_h(dl);
    const attn_dims *d = &app->trace.dims;
    char step[80], reads[400], cache[400];
    snprintf(step, sizeof step, _("decode step %d of %d"), app->view.decode_step, app->decode_len);
    decode_texts(app, reads, cache, sizeof reads);
    /* the controls' width, as arrow() and draw_text will draw them */
    int controls = draw_text_w(dl, "[") + 2 * u + draw_text_w(dl, "◀") + u / 4 + draw_text_w(dl, step) + u / 4 +
                   draw_text_w(dl, "▶") + u / 4 + draw_text_w(dl, "]") + u;
    int rest = box.w - u / 2 - controls;
    bool beside = rest >= 12 * u; /* what the query reads goes beside the controls, else below them */
    int n1 = draw_text_wrap_lines(dl, reads, beside ? rest : box.w - u) + (beside ? 0 : 1);
    int n2 = draw_text_wrap_lines(dl, cache, box.w - u);
    int h = u / 4 + (n1 + n2) * u + u / 4 + u / 2 + u / 2;
    if (!draw) return box.y + h + u / 2;
    draw_fill(dl, box.x, box.y, box.w, h, DRAW_PANEL);
    int x = box.x + u / 2, y = box.y + u / 4;
    x += draw_text(dl, "[", x, y, DRAW_TEXT_DIM);
    x += arrow(dl, x, y, "◀", APP_ACT_DECODE_PREV) + u / 4;
    x += draw_text(dl, step, x, y, DRAW_WHITE) + u / 4;
    x += arrow(dl, x, y, "▶", APP_ACT_DECODE_NEXT) + u / 4;
    x += draw_text(dl, "]", x, y, DRAW_TEXT_DIM) + u;
    if (beside) draw_text_wrap(dl, reads, x, y, box.x + box.w - x, DRAW_TEXT);
    else draw_text_wrap(dl, reads, box.x + u / 2, y + u, box.w - u, DRAW_TEXT);
    y += n1 * u;
    y += draw_text_wrap(dl, cache, box.x + u / 2, y, box.w - u, DRAW_TEXT) * u + u / 4;
    /* the cache growing: one cell per cached position */
    int cell = draw_imin(u, (box.w - u) / draw_imax(app->decode_len, 1));
    for (int i = 0; i < app->decode_len; i++) {
        uint32_t col = i < d->P ? DRAW_ACCENT : i == d->P ? DRAW_WHITE : DRAW_PANEL_HI;
        draw_fill(dl, box.x + u / 2 + i * (cell + 2), y + 2, cell, u / 2, col);
    }
    return box.y + h + u / 2;
}

/* ---- status line, tooltip, overlays --------------------------------------- */

/* While the first picture comes layer by layer: the layer being traced, the
 * time left, which are ready; a bar of how far. */
static bool partial_line(draw_list *dl, const app_state *app, app_rect box)
{
    app_progress p;
    int u = draw_line_h(dl);
    char buf[300], left[64] = "";
    if (!app_progress_now(app, &p)) return false;
    /* TRANSLATORS: the time left, after the status line's seconds so far */
    if (p.left_ms >= 0) snprintf(left, sizeof left, _(", about %.0f s left"), p.left_ms / 1000);
    /* TRANSLATORS: the status line while the first picture comes layer by layer: the layer being traced, the
     * layers, seconds so far and the time left, the last layer ready */
    snprintf(buf, sizeof buf, _("tracing layer %d of %d (%.1f s%s): layers 0 to %d can be shown, the others follow"),
             p.layer, p.layers, p.ms / 1000, left, app->partial.layers - 1);
    draw_text_fit(dl, buf, box.x + u / 2, box.y + (box.h - u) / 2, box.w - u, DRAW_ACCENT);
    draw_fill(dl, box.x, box.y + box.h - 3, draw_imax(u / 2, (int)(box.w * p.fraction)), 3, DRAW_ACCENT);
    return true;
}

/* While the worker recomputes: what it is at, and a bar of how far along the
 * layers (three parts each: q k v, query-key, context) it is. */
static bool busy_line(draw_list *dl, const app_state *app, app_rect box)
{
    int layer, stage, u = draw_line_h(dl);
    double ms;
    if (!app_busy(app, &layer, &stage, &ms)) return false;
    if (app->partial.on) return partial_line(dl, app, box);
    int layers = draw_imax(1, app->trace.n_layers);
    char buf[200];
    const char *name = attn_stage_get((attn_stage_id)stage)->name;
    if (layers > 1)
        /* TRANSLATORS: the status line while the window recomputes: a stage name, the layer, the layers, seconds so far */
        snprintf(buf, sizeof buf, _("computing %s, layer %d of %d (%.1f s); the picture shows the last settings until then"),
                 name, layer, layers, ms / 1000.0);
    else
        /* TRANSLATORS: the status line while the window recomputes: a stage name, seconds so far */
        snprintf(buf, sizeof buf, _("computing %s (%.1f s); the picture shows the last settings until then"), name,
                 ms / 1000.0);
    draw_text_fit(dl, buf, box.x + u / 2, box.y + (box.h - u) / 2, box.w - u, DRAW_ACCENT);
    int done = (int)((double)box.w * attn_progress_at_stage(layer, stage, layers));
    draw_fill(dl, box.x, box.y + box.h - 3, draw_imax(u / 2, done), 3, DRAW_ACCENT);
    return true;
}

static bool train_text(const app_state *app, char *buf, size_t size);

/* The status line; merged (presenting, the picture first: present_plan),
 * the folded training panel's line first, or else the next-token line. */
static void status_line(draw_list *dl, const app_state *app, app_rect box, bool merged)
{
    int u = draw_line_h(dl), x = box.x + u / 2, y = box.y + (box.h - u) / 2;
    char buf[300];
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    if (busy_line(dl, app, box)) return;
    const char *s = app_status_text(app)[0] ? app_status_text(app)
                    : app->view.mode == LESSON_VIEW_EXPERTS
                        /* TRANSLATORS: the status line's hint in the token × expert view */
                        ? _("E the picture again · , . layer · hover a cell: token, expert, weight, rank · ? help")
                        : _("l lessons · ← → stage · ↑ ↓ head · click a query row for its weights · g grid · Tab compare · ? help");
    if (merged && train_text(app, buf, sizeof buf)) {
        int tw = draw_imin(draw_text_w(dl, buf), box.w / 2);
        draw_text_fit(dl, buf, x, y, tw, DRAW_TEXT);
        app_layout_hit_tip(dl->layout, (app_rect){box.x, box.y, tw + u, box.h}, APP_ACT_CURVES, 0,
                           _("show the loss and the heads' measures over training (T)"));
        x += tw + u;
    } else if (merged && draw_predict_width(dl, app, box.w) > 0) {
        int pw = box.w * 3 / 5;
        draw_predictions_line(dl, app, (app_rect){box.x, box.y, pw, box.h});
        x += pw;
    }
    draw_text_fit(dl, s, x, y, box.x + box.w - x - u / 2, app->status_error ? DRAW_ERROR : DRAW_TEXT_DIM);
}

/* A button's tooltip, under the mouse resting on it. */
static bool hit_tooltip(draw_list *dl, const app_state *app)
{
    const app_layout *l = &app->layout;
    if (app->hover_hit < 0 || app->hover_hit >= l->n_hits || !l->hits[app->hover_hit].tip) return false;
    const app_hit *hh = &l->hits[app->hover_hit];
    if (!app_rect_contains(hh->r, app->mouse_x, app->mouse_y)) return false;
    int u = draw_line_h(dl), w = draw_text_w(dl, hh->tip) + u, th = u + u / 2;
    int x = draw_imin(draw_imax(0, hh->r.x), dl->layout->full_width - w), y = hh->r.y + hh->r.h + u / 4;
    if (y + th > dl->layout->height) y = hh->r.y - th - u / 4;
    draw_fill(dl, x, y, w, th, 0xF0101016u);
    draw_outline(dl, x, y, w, th, 1, DRAW_ACCENT);
    draw_text(dl, hh->tip, x + u / 2, y + u / 4, DRAW_WHITE);
    return true;
}

static void tooltip(draw_list *dl, const app_state *app)
{
    if (hit_tooltip(dl, app)) return;
    if (app->hover_area < 0 || app->hover_area >= app->layout.n_areas || app->help || app->edit.open ||
        app->save_menu.open)
        return;
    const app_heat_area *a = &app->layout.areas[app->hover_area];
    const attn_trace *tr = a->pane == 1 && app->has_alt ? &app->alt : &app->trace;
    app_view_slice v;
    char buf[400];
    if (a->pane == 2) return; /* the difference has no formula of its own */
    if (app_view_make(tr, a->stage, app->view.batch, a->head, &v)) return;
    app_view_explain(tr, &v, app->hover_i, app->hover_j, buf, sizeof buf);
    if (!buf[0]) return;
    /* the cell's row and column labels in full (the axes may show them cut), then the explanation, wrapped */
    char rl[96], cl[96], head[260];
    const char *r = v.row_axis == APP_AXIS_NONE ? "" : app_view_row_label(tr, &v, app->hover_i, rl, sizeof rl);
    const char *c = app_view_col_label(tr, &v, app->hover_j, cl, sizeof cl);
    if (*r) snprintf(head, sizeof head, _("row %d: %s   column %d: %s"), app->hover_i, r, app->hover_j, c);
    else snprintf(head, sizeof head, _("column %d: %s"), app->hover_j, c);
    int u = draw_line_h(dl), maxw = draw_imax(10 * u, draw_imin(dl->layout->width - 2 * u, 44 * u));
    int w = draw_imin(draw_imax(draw_text_w(dl, buf), draw_text_w(dl, head)), maxw);
    int lines = 1 + draw_text_wrap_lines(dl, buf, w), h = lines * u + u / 2;
    int x = app->mouse_x + u, y = app->mouse_y + u;
    if (x + w + u > dl->layout->width) x = draw_imax(0, dl->layout->width - w - u);
    if (y + h > dl->layout->height) y = draw_imax(0, app->mouse_y - h - u / 2);
    draw_fill(dl, x, y, w + u, h, 0xF0101016u);
    draw_outline(dl, x, y, w + u, h, 1, DRAW_ACCENT);
    draw_text_fit(dl, head, x + u / 2, y + u / 4, w, DRAW_ACCENT);
    draw_text_wrap(dl, buf, x + u / 2, y + u / 4 + u, w, DRAW_WHITE);
}

/* How the help's entries go into columns of width colw: col_of[k] for the
 * k-th entry; returns the columns used. */
static bool help_row(const app_state *app, int i)
{
    return app_keys[i].help_keys && !(app->web && app_keys[i].desktop);
}

static int help_columns(draw_list *dl, const app_state *app, int kw, int colw, int room, int *col_of, int max)
{
    int u = draw_line_h(dl), gap = u / 4, c = 0, y = 0;
    for (int i = 0, k = 0; i < app_n_keys && k < max; i++) {
        if (!help_row(app, i)) continue;
        int h = draw_text_wrap_lines(dl, _(app_keys[i].help), colw - kw - u) * u + gap;
        if (y + h > room && y > 0) c++, y = 0;
        col_of[k++] = c;
        y += h;
    }
    return c + 1;
}

/* The help: an entry for each row of the key table that has help text
 * (keys.c), its description wrapped beside its keys, in the fewest columns
 * that hold them all in the window's height; where even that is not enough
 * (800 × 600) in smaller text, so that none is left out or cut. Then the
 * memory the trace shown takes against the budget. */
static void help_overlay(draw_list *dl, const app_state *app)
{
    enum { MAX_COLS = 4, MAX_ENTRIES = 128 };
    int W = dl->layout->width, H = dl->layout->full_height, frame_px = dl->px;
    int u, kw = 0, cols = 1, colw = 0, col_of[MAX_ENTRIES] = {0};
    bool fits = false;
    for (int px = frame_px; px >= 9 && !fits; px--) {
        dl->px = px;
        u = draw_line_h(dl);
        kw = 0;
        for (int i = 0; i < app_n_keys; i++)
            if (app_keys[i].help_keys) kw = draw_imax(kw, draw_text_w(dl, _(app_keys[i].help_keys)));
        int room = H - 6 * u; /* the title above, the memory line below */
        for (cols = 1; cols <= MAX_COLS && !fits; cols++) {
            colw = (W - 3 * u - (cols - 1) * u) / cols;
            fits = colw - kw - u >= 6 * u && help_columns(dl, app, kw, colw, room, col_of, MAX_ENTRIES) <= cols;
        }
        cols--;
    }
    u = draw_line_h(dl);
    if (!fits) { /* a window too small for any: one column, cut at the window's edge */
        cols = 1;
        colw = W - 3 * u;
        memset(col_of, 0, sizeof col_of);
    }
    int gap = u / 4, w = W - 2 * u, h = H - 2 * u, x = u, y = u;
    draw_fill(dl, 0, 0, W, H, 0xB0000000u);
    draw_fill(dl, x, y, w, h, DRAW_PANEL);
    draw_outline(dl, x, y, w, h, 2, DRAW_ACCENT);
    draw_text_fit(dl, _("keys   (Esc or ? closes this)"), x + u, y + u / 2, w - 2 * u, DRAW_WHITE);
    int top = y + 2 * u, cy = top, last = 0;
    for (int i = 0, k = 0; i < app_n_keys && k < MAX_ENTRIES; i++) {
        if (!help_row(app, i)) continue;
        int c = draw_imin(col_of[k++], cols - 1);
        if (c != last) cy = top, last = c;
        int cx = x + u + c * (colw + u);
        draw_text(dl, _(app_keys[i].help_keys), cx, cy, DRAW_ACCENT);
        cy += draw_text_wrap(dl, _(app_keys[i].help), cx + kw + u, cy, colw - kw - u, DRAW_TEXT) * u + gap;
    }
    double bytes = attn_trace_bytes(&app->trace);
    char buf[200];
    /* TRANSLATORS: the help's last line: MiB the trace shown takes, GiB it may take */
    if (app->web)
        /* TRANSLATORS: the web page's help, last line: MiB the trace shown takes, GiB it may take */
        snprintf(buf, sizeof buf, _("memory: this trace %.1f MiB; the budget %.1f GiB"), bytes / (1 << 20),
                 attn_config_max_bytes(&app->cfg) / (1 << 30));
    else
        snprintf(buf, sizeof buf, _("memory: this trace %.1f MiB; the budget %.1f GiB (--memory-gib)"), bytes / (1 << 20),
                 attn_config_max_bytes(&app->cfg) / (1 << 30));
    draw_text_wrap(dl, buf, x + u, y + h - 2 * u, w - 2 * u, DRAW_TEXT_DIM);
    dl->px = frame_px;
}

/* The save dialog (S): the four kinds, the highlighted one framed; each a hit. */
static void save_overlay(draw_list *dl, const app_state *app)
{
    /* TRANSLATORS: the save dialog's four choices */
    const char *kinds[APP_SAVE_KINDS] = {N_("PNG: the window as a picture"),
                                        N_("SVG: the same as vectors, for slides"),
                                        N_("PDF: vectors, with selectable text, for papers"),
                                        N_("CSV: the numbers of the matrix shown")};
    int u = draw_line_h(dl), row = 2 * u, tw = draw_text_w(dl, _("save as   (↑ ↓ Enter, 1–4; Esc closes)"));
    for (int k = 0; k < APP_SAVE_KINDS; k++) tw = draw_imax(tw, draw_text_w(dl, _(kinds[k])) + 2 * u);
    int w = draw_imin(dl->layout->width - 2 * u, tw + 2 * u), h = (APP_SAVE_KINDS + 1) * row + u;
    int x = (dl->layout->width - w) / 2, y = (dl->layout->height - h) / 3;
    draw_fill(dl, 0, 0, dl->layout->width, dl->layout->height, 0x90000000u);
    draw_fill(dl, x, y, w, h, DRAW_PANEL);
    draw_outline(dl, x, y, w, h, 2, DRAW_ACCENT);
    draw_text_fit(dl, _("save as   (↑ ↓ Enter, 1–4; Esc closes)"), x + u, y + u / 2, w - 2 * u, DRAW_WHITE);
    for (int k = 0; k < APP_SAVE_KINDS; k++) {
        app_rect r = {x + u / 2, y + row + k * row, w - u, row - u / 4};
        bool cur = k == app->save_menu.choice;
        draw_fill(dl, r.x, r.y, r.w, r.h, cur ? DRAW_PANEL_HI : DRAW_PANEL);
        if (cur) draw_outline(dl, r.x, r.y, r.w, r.h, 1, DRAW_ACCENT);
        char num[12];
        snprintf(num, sizeof num, "%d", k + 1);
        draw_text(dl, num, r.x + u / 2, r.y + (r.h - u) / 2, DRAW_ACCENT);
        draw_text_fit(dl, _(kinds[k]), r.x + 2 * u, r.y + (r.h - u) / 2, r.w - 2 * u - u / 2, cur ? DRAW_WHITE : DRAW_TEXT);
        app_layout_hit(dl->layout, r, APP_ACT_SAVE_AS, k);
    }
}

/* ---- the frame ------------------------------------------------------------ */

/* Where the parts of the visualizer go: the stage list (rail), the header, the
 * decode panel, the picture and the side panel or its one-line fold. */
typedef struct {
    bool rail, detail;
    bool compact;   /* presenting, the picture first: the header one line, no next-token line (present_plan) */
    int nav_w;
    app_rect main;  /* right of the rail: header, decode panel, picture */
    int strip_h;    /* the text strip's height (text_strip.h), under the decode panel, */
    int strip_room; /* measured in this much room */
    int fold_y;     /* the side panel folded to a line, here (-1: none) */
    app_rect pic;   /* the picture */
    app_rect side_r; /* the side panel */
    double size;    /* how large the picture comes out: its cell, or its side */
} frame_plan;

static void plan_frame(draw_list *dl, const app_state *app, app_rect area, bool rail, bool side, bool detail, bool compact,
                       frame_plan *p)
{
    int u = draw_line_h(dl);
    *p = (frame_plan){.rail = rail, .detail = detail, .compact = compact, .nav_w = rail ? navigator_width(dl, app) : 0};
    p->main = (app_rect){area.x + (rail ? p->nav_w + u : u / 2), area.y, 0, area.h - u / 2};
    p->main.w = area.x + area.w - p->main.x - (rail ? u : u / 2);
    int y = header(dl, app, p->main, rail, detail, compact, false);
    if (app_decoding(app)) y = decode_panel(dl, app, (app_rect){p->main.x, y, p->main.w, 0}, false);
    p->strip_room = p->main.y + p->main.h - y;
    y += p->strip_h = draw_text_strip_height(dl, app, (app_rect){p->main.x, y, p->main.w, p->strip_room}, compact);
    p->fold_y = -1;
    /* the training curves in the picture's place: no next-token panel, it is about the picture */
    bool curves = app->view.mode == LESSON_VIEW_TRAINING && draw_train_view_ok(app);
    int model_w = curves || compact ? 0 : draw_predict_width(dl, app, p->main.w);
    if (model_w && !side) { /* the side panel folded: its first line above the picture */
        p->fold_y = y;
        y += draw_predict_line_height(dl);
    }
    p->pic = (app_rect){p->main.x, y, p->main.w, p->main.y + p->main.h - y};
    p->side_r = (app_rect){0, 0, 0, 0};
    if (model_w && side) {
        p->pic.w -= model_w + u;
        p->side_r = (app_rect){p->pic.x + p->pic.w + u, p->pic.y, model_w, p->pic.h};
    }
    p->size = app->view.mode == LESSON_VIEW_SINGLE    ? draw_plot_single_cell(dl, app, p->pic)
              : app->view.mode == LESSON_VIEW_COMPARE ? draw_plot_compare_cell(dl, app, p->pic)
                                                      : sqrt(fmax(0.0, (double)p->pic.w * p->pic.h));
}

/* In the single and compare views, whether plan p's cells are as readable as the
 * leanest's: rows tall enough for every label where the leanest has them (a
 * line: plot_heatmap.c's row_label_step), cells as large as the text (16 px
 * at 16 px) where the leanest has them. */
static bool cells_readable(draw_list *dl, const app_state *app, const frame_plan *p, const frame_plan *lean)
{
    double line = ceil(0.95 * draw_line_h(dl)), readable = dl->px;
    if (app->view.mode != LESSON_VIEW_SINGLE && app->view.mode != LESSON_VIEW_COMPARE) return true;
    return (lean->size < line || p->size >= line) && (lean->size < readable || p->size >= readable);
}

/* Whether plan p leaves the picture as readable as the leanest: at least 90%
 * of its size, its cells as readable (cells_readable). */
static bool keeps_picture(draw_list *dl, const app_state *app, const frame_plan *p, const frame_plan *lean)
{
    return p->size >= 0.9 * lean->size && cells_readable(dl, app, p, lean);
}

/* The picture owns the screen: the stage list, the side panel and the stage's
 * description stay only while the picture stays as readable without them
 * (keeps_picture), unless n asked for them (or for none), or a lesson for
 * the side panel alone. */
static void choose_plan(draw_list *dl, const app_state *app, app_rect area, frame_plan *best)
{
    frame_plan lean, p;
    bool side = app->view.panels == LESSON_PANELS_SIDE;
    if (app->view.panels == LESSON_PANELS_HIDDEN || side) {
        plan_frame(dl, app, area, false, side, true, false, best);
        plan_frame(dl, app, area, false, side, false, false, &lean);
        if (!keeps_picture(dl, app, best, &lean)) *best = lean;
        return;
    }
    bool shown = app->view.panels == LESSON_PANELS_SHOWN;
    plan_frame(dl, app, area, false, false, false, false, &lean);
    static const bool tries[][3] = {{true, true, true}, {false, true, true}, {false, false, true}};
    for (size_t k = 0; k < sizeof tries / sizeof tries[0]; k++) {
        if (shown && !(tries[k][0] && tries[k][1])) break;
        plan_frame(dl, app, area, tries[k][0], tries[k][1], tries[k][2], false, &p);
        if (keeps_picture(dl, app, &p, &lean) || shown) {
            *best = p;
            if (shown && !keeps_picture(dl, app, &p, &lean)) plan_frame(dl, app, area, true, true, false, false, best);
            return;
        }
    }
    *best = lean;
}

static int train_fold_height(draw_list *dl)
{
    return draw_line_h(dl) + draw_line_h(dl) / 2;
}

/* The training step shown, as the folded training panel says it; false
 * when the model was not saved during training. */
static bool train_text(const app_state *app, char *buf, size_t size)
{
    int at = app_training_position(&app->train, app->cfg.model);
    if (at < 0) return false;
    if (at == app->train.n)
        /* TRANSLATORS: the training panel folded under a picture that needs the room: T opens the curves */
        snprintf(buf, size, _("final model (step %ld) · j J: training steps · T: the training curves"),
                 app_training_step(&app->train, at));
    else
        snprintf(buf, size, _("training step %ld of %ld · j J · T: the training curves"),
                 app_training_step(&app->train, at), app_training_step(&app->train, app->train.n - 1));
    return true;
}

/* The training panel folded to a line: the step shown, and a click (or T) for the curves. */
static void train_fold(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    char buf[300];
    if (!train_text(app, buf, sizeof buf)) return;
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    draw_text_fit(dl, buf, box.x + u / 2, box.y + (box.h - u) / 2, box.w - u, DRAW_TEXT);
    /* TRANSLATORS: the tooltip of the folded training panel */
    app_layout_hit_tip(dl->layout, box, APP_ACT_CURVES, 0, _("show the loss and the heads' measures over training (T)"));
}

/* A model saved during training: the frame's plan (*fp) and the height of its
 * training panel across the bottom. The panel is full where it leaves the
 * picture readable (cells_readable) and 90% of its size or, in the single
 * view, cells as large as the text; else a line (the
 * training view, T, shows it large); none when n hid the panels or the
 * training view shows it in the picture's place. */
static int train_plan(draw_list *dl, const app_state *app, app_rect area, frame_plan *fp)
{
    bool curves = app->view.mode == LESSON_VIEW_TRAINING && draw_train_view_ok(app);
    int full = app->view.panels == LESSON_PANELS_HIDDEN || curves ? 0 : draw_train_panel_height(dl, app, area.h);
    choose_plan(dl, app, (app_rect){area.x, area.y, area.w, area.h - full}, fp);
    if (!full) return 0;
    frame_plan folded;
    int fold = train_fold_height(dl);
    choose_plan(dl, app, (app_rect){area.x, area.y, area.w, area.h - fold}, &folded);
    bool large = app->view.mode == LESSON_VIEW_SINGLE && fp->size >= dl->px; /* cells as large as the text */
    if (cells_readable(dl, app, fp, &folded) && (large || fp->size >= 0.9 * folded.size)) return full;
    *fp = folded;
    return fold;
}

/* Whether the picture is a heatmap of 32 tokens or fewer a side, the size
 * whose every row and column a presenter's room can label. */
static bool small_picture(const app_state *app)
{
    const attn_tensor *t = app_tensor(app);
    app_view_slice v;
    if (!t || app_view_make(&app->trace, t->name, app->view.batch, app->view.head, &v)) return false;
    return v.slice.rows <= 32 && v.slice.cols <= 32 && !draw_plot_ranked_wanted(app, &v);
}

/* Presenting, the picture first: when a small picture (small_picture) in
 * the single or compare view comes out with cells under a line, too small
 * for a label on every row at presenting size, the header folds to its
 * stage line (the batch row and head after the shape, the formula as its
 * tooltip, the description left out: the lesson says it) and the training
 * panel's line, or else the next-token line, joins the status line, where
 * that gives larger cells; not when n or the lesson asked for the panels.
 * Returns whether *fp became that plan (and *train_h 0). */
static bool present_plan(draw_list *dl, const app_state *app, app_rect area, frame_plan *fp, int *train_h)
{
    frame_plan compact;
    bool views = app->view.mode == LESSON_VIEW_SINGLE || app->view.mode == LESSON_VIEW_COMPARE;
    bool asked = app->view.panels == LESSON_PANELS_SHOWN || app->view.panels == LESSON_PANELS_SIDE; /* n, or the lesson */
    if (!app->present || !views || asked || fp->size >= ceil(0.95 * draw_line_h(dl)) || !small_picture(app)) return false;
    plan_frame(dl, app, area, false, false, false, true, &compact);
    if (compact.size <= fp->size) return false;
    *fp = compact;
    *train_h = 0;
    return true;
}

/* What is drawn over the frame, the last drawn on top. */
static void overlays(draw_list *dl, const app_state *app, const chip_bar *bar)
{
    if (app->menu_open) menu_overlay(dl, bar);
    if (app->edit.open) draw_edit(app, dl);
    if (app->help) help_overlay(dl, app);
    if (app->save_menu.open) save_overlay(dl, app);
    if (app->lesson.picker) draw_picker(app, dl);
    draw_opening(app, dl);
    if (app->quit_confirm) draw_quit_confirm(app, dl);
}

/* The picture's size (frame_plan's) in the visualizer's part of w × vh. */
static double picture_size(draw_list *dl, const app_state *app, int w, int vh)
{
    int u = draw_line_h(dl), top = !app->present || app->toolbar_shown ? controls_height(dl) : u / 2;
    frame_plan fp;
    dl->layout->width = dl->layout->full_width = w;
    dl->layout->height = vh;
    train_plan(dl, app, (app_rect){0, top, w, vh - top - (u + u / 2)}, &fp);
    return fp.size;
}

/* Where the lesson panel goes ({0, 0, 0, 0}: no lesson), and the part of the
 * w × h window the visualizer keeps (*vw × *vh). Beside the picture, on the
 * right; in portrait (taller than wide) under it, across the window: the
 * picture takes the height in which it is as large as the window's width
 * lets it be (within 2%), the lesson the rest, at least 2/5 of the height
 * (and 12 lines), and the picture at least a third. */
static app_rect lesson_place(draw_list *dl, const app_state *app, int w, int h, int *vw, int *vh)
{
    int u = draw_line_h(dl), panel_w;
    *vw = w, *vh = h;
    if (!app->lesson.open) return (app_rect){0, 0, 0, 0};
    if (h > w && h - draw_imax(h * 2 / 5, 12 * u) >= 8 * u) { /* (not in a window too small for both) */
        int hi = h - draw_imax(h * 2 / 5, 12 * u), lo = draw_imin(hi, draw_imax(h / 3, 12 * u));
        double full = picture_size(dl, app, w, hi);
        while (lo < hi) { /* the smallest picture as large as the largest */
            int mid = lo + (hi - lo) / 2;
            if (picture_size(dl, app, w, mid) >= 0.98 * full) hi = mid;
            else lo = mid + 1;
        }
        *vh = lo;
        return (app_rect){0, lo, w, h - lo};
    }
    panel_w = draw_imin(40 * u, (int)(0.34 * w));
    panel_w = draw_imax(panel_w, draw_imin(22 * u, w / 2));
    if (app->lesson_width > 0) /* as the student set it: room for the panel's words and for the picture */
        panel_w = draw_imax(draw_imin(16 * u, w / 3), draw_imin(app->lesson_width, w * 7 / 10));
    *vw = w - panel_w;
    return (app_rect){w - panel_w, 0, panel_w, h};
}

/* A new frame's layout: nothing recorded yet; the scrolls as the app has them. */
static void layout_begin(app_layout *layout, const app_state *app, int full_w, int full_h, int w, int h, app_rect panel)
{
    app_layout_clear(layout);
    layout->full_width = full_w;
    layout->full_height = full_h;
    layout->width = w;
    layout->height = h;
    layout->lesson_box = panel;
    layout->stage_first = app->stage_scroll;
    layout->lesson_scroll = app->lesson.scroll;
    layout->lesson_scroll_max = app->lesson.content_h;
    layout->dock_scroll = app->lesson.dock_scroll;
    layout->dock_scroll_max = app->lesson.dock_h;
    layout->lesson_view = layout->lesson_dock = (app_rect){0, 0, 0, 0};
    memset(layout->quizzes, 0, sizeof layout->quizzes);
    layout->layer_shown = false;
    layout->picker_first = app->lesson.picker_first;
    layout->picker_rows = app->lesson.picker_rows;
    layout->picker_box = layout->picker_list = (app_rect){0, 0, 0, 0};
}

/* The lesson panel in panel, and between it and the picture the divider (a
 * drag moves it) or, under the picture, a line. */
static void lesson_part(draw_list *dl, const app_state *app, app_rect panel)
{
    int u = draw_line_h(dl);
    draw_lesson_marks(app, dl);
    draw_lesson(app, dl, panel);
    if (panel.y > 0) {
        draw_fill(dl, 0, panel.y, panel.w, 2, DRAW_PANEL_HI);
        return;
    }
    /* TRANSLATORS: the tooltip of the line between the picture and the lesson */
    app_layout_hit_tip(dl->layout, (app_rect){panel.x - u / 4, 0, u / 2, panel.h}, APP_ACT_DIVIDER, 0,
                       _("drag to widen or narrow the lesson ({ and } too)"));
    if (app->divider_drag) draw_fill(dl, panel.x - 1, 0, 3, panel.h, DRAW_ACCENT);
}

void draw_frame(const app_state *app, draw_list *dl, app_layout *layout, int w, int h)
{
    draw_list_begin(dl, (int)lroundf(DRAW_BASE_FONT_PX * app->font_scale * app->pixel_ratio));
    dl->layout = layout;
    /* a lesson takes the right part of the window (in portrait the bottom); the visualizer keeps the rest */
    int full_w = w, full_h = h;
    app_rect panel = lesson_place(dl, app, full_w, full_h, &w, &h);
    layout_begin(layout, app, full_w, full_h, w, h, panel);

    draw_fill(dl, 0, 0, full_w, full_h, DRAW_BG);
    chip_bar bar = {.n = 0};
    if (app->opening.first) { /* nothing of its own to show yet (app_init_later): the notice alone */
        overlays(dl, app, &bar);
        return;
    }
    int u = draw_line_h(dl);
    /* presenter mode: the toolbar only after the mouse moved */
    bool toolbar = !app->present || app->toolbar_shown;
    int top = toolbar ? controls_height(dl) : u / 2;
    int status_h = u + u / 2;
    frame_plan fp;
    int train_h = train_plan(dl, app, (app_rect){0, top, w, h - top - status_h}, &fp);
    bool merged = present_plan(dl, app, (app_rect){0, top, w, h - top - status_h}, &fp, &train_h);
    layout->panels_shown = fp.rail;
    if (toolbar) controls(dl, app, fp.rail, &bar);
    if (fp.rail) navigator(dl, app, (app_rect){0, top, fp.nav_w, h - top - status_h});
    int y = header(dl, app, fp.main, fp.rail, fp.detail, fp.compact, true);
    if (app_decoding(app)) y = decode_panel(dl, app, (app_rect){fp.main.x, y, fp.main.w, 0}, true);
    if (fp.strip_h > 0) draw_text_strip(dl, app, (app_rect){fp.main.x, y, fp.main.w, fp.strip_room}, fp.compact);
    if (fp.fold_y >= 0) draw_predictions_line(dl, app, (app_rect){fp.main.x, fp.fold_y, fp.main.w, draw_predict_line_height(dl)});
    if (fp.side_r.w > 0) draw_predictions(dl, app, fp.side_r);
    app_rect pic = fp.pic;
    switch (app->view.mode) {
    case LESSON_VIEW_GRID:
        if (app_overview(app)) draw_plot_overview(dl, app, pic);
        else draw_plot_grid(dl, app, pic);
        break;
    case LESSON_VIEW_COMPARE: draw_plot_compare(dl, app, pic); break;
    case LESSON_VIEW_GEOMETRY: draw_plot_geometry(dl, app, pic); break;
    case LESSON_VIEW_TRAINING: /* without checkpoints to plot: the picture */
        (draw_train_view_ok(app) ? draw_train_view : draw_plot_single)(dl, app, pic);
        break;
    case LESSON_VIEW_EXPERTS: draw_plot_experts(dl, app, pic); break;
    default: (app->view.mode == LESSON_VIEW_TILES ? draw_plot_tiles : draw_plot_single)(dl, app, pic); break;
    }
    if (train_h == train_fold_height(dl)) train_fold(dl, app, (app_rect){0, h - status_h - train_h, w, train_h});
    else if (train_h > 0) draw_train_panel(dl, app, (app_rect){0, h - status_h - train_h, w, train_h});
    status_line(dl, app, (app_rect){0, h - status_h, w, status_h}, merged);
    if (app->lesson.open) lesson_part(dl, app, panel);
    tooltip(dl, app);
    overlays(dl, app, &bar);
}

void draw_commit(app_state *app, const app_layout *l)
{
    app->width = l->width;
    app->height = l->height;
    app->full_width = l->full_width;
    app->full_height = l->full_height;
    app->stage_scroll = l->stage_first;
    app->lesson.scroll = l->lesson_scroll;
    app->lesson.shown_quiz = -1; /* scrolled into view once; then the reader's scroll stands */
    app->lesson.content_h = l->lesson_scroll_max;
    app->lesson.dock_scroll = l->dock_scroll;
    app->lesson.dock_h = l->dock_scroll_max;
    app->lesson.picker_first = l->picker_first;
    app->lesson.picker_rows = l->picker_rows;
    app->opening.shown = app->opening.pending; /* the frame said what opens: now it may */
    app->dirty = false;
}
