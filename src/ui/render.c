/* render.c — one frame: controls, stage navigator, header, picture, status, overlays. */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "i18n.h"
#include "keys.h"
#include "edit_view.h"
#include "lesson_panel.h"
#include "modal.h"
#include "plot.h"
#include "predict.h"
#include "view.h"

#define UI_MAX_LISTED 512 /* stages the navigator lists: one layer's and the model-level ones */


static void hit(ui_draw *dl, int x, int y, int w, int h, ui_action act, int arg)
{
    ui_layout_hit(dl->layout, (ui_rect){x, y, w, h}, act, arg);
}

/* ---- the control bar ------------------------------------------------------ */

typedef struct {
    int x, y, x0, right, h;
} flow;

/* A clickable arrow button on a text line at y; returns its width. */
static int arrow(ui_draw *dl, int x, int y, const char *glyph, ui_action act)
{
    int u = ui_line(dl), w = ui_text_w(dl, glyph) + u;
    ui_fill(dl, x, y - 2, w, u + 4, UI_PANEL_HI);
    ui_text(dl, glyph, x + u / 2, y, UI_TEXT);
    hit(dl, x, y - 2, w, u + 4, act, 0);
    return w;
}

static void chip(ui_draw *dl, flow *f, const char *label, bool on, ui_action act, int arg)
{
    int u = ui_line(dl);
    int w = ui_text_w(dl, label) + u;
    if (f->x + w > f->right && f->x > f->x0) {
        f->x = f->x0;
        f->y += f->h + u / 4;
    }
    ui_fill(dl, f->x, f->y, w, f->h, on ? UI_PANEL_HI : UI_PANEL);
    if (on) ui_frame(dl, f->x, f->y, w, f->h, 1, UI_ACCENT);
    ui_text(dl, label, f->x + u / 2, f->y + (f->h - u) / 2, on ? UI_WHITE : UI_TEXT);
    hit(dl, f->x, f->y, w, f->h, act, arg);
    f->x += w + u / 4;
}

/* A chip for each key that steps a setting through its values (the CYCLE rows of
 * keys.c), while the setting is not at its default: the toolbar stays as it was
 * for anyone not using it, and the help overlay lists the key. */
static void cycle_chips(ui_draw *dl, flow *f, const attn_config *c)
{
    char val[48], text[96], buf[112];
    for (int i = 0; i < ui_n_keys; i++) {
        const ui_key_binding *b = &ui_keys[i];
        const attn_setting *row = b->action == UI_ACT_CYCLE && b->chip ? attn_setting_find(b->setting) : NULL;
        if (!row || attn_setting_is_default(c, row)) continue; /* shown once in use, like the pitfall chips */
        snprintf(text, sizeof text, _(b->chip), attn_setting_format(c, row, val, sizeof val));
        snprintf(buf, sizeof buf, "%s  %s", b->help_keys, text);
        chip(dl, f, buf, true, UI_ACT_CYCLE, ui_keys_arg(b));
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
            continue; /* e+09 → e9 */
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return buf;
}

static int controls(ui_draw *dl, const ui_app *app)
{
    int u = ui_line(dl);
    const attn_config *c = &app->trace.cfg;
    const attn_dims *d = &app->trace.dims;
    char buf[96], mv[24];
    flow f = {u / 2, u / 3, u / 2, dl->layout->width - u / 2, u + u / 2};
    bool model = app->model && attn_trace_is_model(&app->trace);
    const char *mode = d->mode == ATTN_MODE_MHA ? "MHA" : d->mode == ATTN_MODE_MQA ? "MQA" : "GQA";
    f.x += ui_text(dl, "attnlab", f.x, f.y + u / 4, UI_ACCENT) + u;
    if (!app->from_file) chip(dl, &f, model ? _("o  next model") : _("o  trained models"), false, UI_ACT_MODEL_NEXT, 0);
    if (model) { /* a trained model's heads and RoPE are as trained: m switches to its variants */
        /* TRANSLATORS: the model chip: its name, MHA/GQA/MQA, query heads / K/V heads */
        snprintf(buf, sizeof buf, _("m  model %s · %s %d/%d"), app->model->name, mode, d->h, d->g);
        chip(dl, &f, buf, true, UI_ACT_MODE, 0);
    } else {
        /* TRANSLATORS: control chips: the key, two spaces, the setting. Keep the key first and the chips short. */
        snprintf(buf, sizeof buf, _("m  mode %s"), mode);
        chip(dl, &f, buf, false, UI_ACT_MODE, 0);
        snprintf(buf, sizeof buf, _("h  heads %d"), d->h);
        chip(dl, &f, "−", false, UI_ACT_HEADS_DOWN, 0);
        f.x -= u / 4;
        chip(dl, &f, buf, false, UI_ACT_HEADS_UP, 0);
        snprintf(buf, sizeof buf, _("v  kv heads %d"), d->g);
        chip(dl, &f, "−", false, UI_ACT_KV_DOWN, 0);
        f.x -= u / 4;
        chip(dl, &f, buf, false, UI_ACT_KV_UP, 0);
    }
    /* TRANSLATORS: "on", "off", "REVERSED": the state of the causal mask (and of RoPE) in a chip */
    snprintf(buf, sizeof buf, _("c  causal %s"),
             d->cross || !c->causal ? _("off") : c->causal == ATTN_CAUSAL_REVERSED ? _("REVERSED") : _("on"));
    chip(dl, &f, buf, c->causal && !d->cross, UI_ACT_CAUSAL, 0);
    /* TRANSLATORS: "left", "right": the side the <pad> tokens are on; "unmasked": no padding mask */
    snprintf(buf, sizeof buf, _("p  padding %s"),
             !c->pad_mask ? _("unmasked") : c->pad_side == ATTN_PAD_LEFT ? _("left") : _("right"));
    chip(dl, &f, buf, c->pad_mask, UI_ACT_PADDING, 0);
    snprintf(buf, sizeof buf, _("r  RoPE %s"), c->rope ? _("on") : _("off"));
    if (!model) chip(dl, &f, buf, c->rope, UI_ACT_ROPE, 0);
    if (!c->scale) chip(dl, &f, _("no 1/√dₖ scaling"), true, UI_ACT_NONE, 0); /* a lesson's pitfall setting */
    if (!c->softmax_guard) chip(dl, &f, _("unguarded softmax"), true, UI_ACT_NONE, 0); /* the same */
    if (c->train) snprintf(buf, sizeof buf, _("d  training, dropout %g"), c->dropout);
    else snprintf(buf, sizeof buf, "%s", _("d  evaluation"));
    chip(dl, &f, buf, c->train, UI_ACT_TRAIN, 0);
    /* TRANSLATORS: the value masked scores are filled with (−∞ or −1e9), not padding */
    snprintf(buf, sizeof buf, _("i  fill %s"), isinf(c->mask_value) ? "−∞" : fill_text(c->mask_value, mv, sizeof mv));
    chip(dl, &f, buf, false, UI_ACT_FILL, 0);
    cycle_chips(dl, &f, c);
    if (!model) chip(dl, &f, d->cross ? _("x  cross-attention") : _("x  self-attention"), d->cross, UI_ACT_CROSS, 0);
    chip(dl, &f, model ? _("e  edit text") : _("e  edit tokens"), app->edit.open, UI_ACT_EDIT, 0);
    chip(dl, &f, ui_app_decoding(app) ? _("k  decoding") : _("k  decode"), ui_app_decoding(app), UI_ACT_DECODE, 0);
    chip(dl, &f, _("g  all heads"), app->view.mode == LESSON_VIEW_GRID, UI_ACT_GRID, 0);
    if (app->scale_head) chip(dl, &f, _("u  colours: this head"), true, UI_ACT_SCALE_HEAD, 0);
    chip(dl, &f, _("Tab  compare"), app->view.mode == LESSON_VIEW_COMPARE, UI_ACT_COMPARE, 0);
    chip(dl, &f, _("a  arrows"), app->view.mode == LESSON_VIEW_GEOMETRY, UI_ACT_GEOMETRY, 0);
    chip(dl, &f, _("l  lessons"), app->lesson.picker, UI_ACT_PICKER, 0);
    chip(dl, &f, _("?  help"), app->help, UI_ACT_HELP, 0);
    return f.y + f.h + u / 2;
}

/* ---- the stage navigator -------------------------------------------------- */

/* The tensors the navigator lists (the viewed layer's, and model-level ones),
 * as indices into the trace; returns how many. */
static int listed(const ui_app *app, int *idx, int max)
{
    int n = 0;
    for (int i = 0; i < app->trace.n_tensors && n < max; i++)
        if (ui_app_in_layer(app, i)) idx[n++] = i;
    return n;
}

/* A stage's name in the navigator: without its "layers.N." (the layer line says it). */
static const char *nav_name(const attn_tensor *t)
{
    const char *rest = t->name;
    attn_tensor_name_layer(t->name, &rest);
    return rest;
}

static int navigator_width(ui_draw *dl, const ui_app *app)
{
    char shape[96];
    int w = 0;
    for (int i = 0; i < app->trace.n_tensors; i++) {
        const attn_tensor *t = &app->trace.tensors[i];
        if (!ui_app_in_layer(app, i)) continue;
        /* beside a lesson panel, names only: the header above the picture gives the shape */
        w = ui_imax(w, ui_text_w(dl, nav_name(t)) +
                        (app->lesson.open ? 0 : ui_text_w(dl, attn_tensor_shape_str(t, shape, sizeof shape))));
    }
    if (app->trace.n_layers > 1) { /* the layer line: ◀ layer N of M ▶ , . */
        char buf[96];
        snprintf(buf, sizeof buf, _("layer %d / %d"), app->trace.n_layers - 1, app->trace.n_layers);
        w = ui_imax(w, 2 * (ui_text_w(dl, "◀") + ui_line(dl)) + ui_text_w(dl, buf) + ui_line(dl) / 2);
    }
    return ui_imin(w + ui_line(dl) * 2, dl->layout->width * 2 / 5);
}

static void navigator(ui_draw *dl, const ui_app *app, ui_rect box)
{
    int u = ui_line(dl), row = u + u / 3;
    int idx[UI_MAX_LISTED];
    int n = listed(app, idx, UI_MAX_LISTED);
    ui_fill(dl, box.x, box.y, box.w, box.h, UI_PANEL);
    ui_text_fit(dl, _("stages  ← →"), box.x + u / 2, box.y + u / 4, box.w - u, UI_TEXT_DIM);
    int top = box.y + u + u / 2;
    if (app->trace.n_layers > 1) {
        char buf[96];
        int x = box.x + u / 2, y = top - u / 4;
        x += arrow(dl, x, y, "◀", UI_ACT_LAYER_PREV) + u / 4;
        /* TRANSLATORS: the layer shown / how many layers there are (short: the stage list is narrow) */
        snprintf(buf, sizeof buf, _("layer %d / %d"), app->view.layer, app->trace.n_layers);
        x += ui_text(dl, buf, x, y, UI_ACCENT) + u / 4;
        x += arrow(dl, x, y, "▶", UI_ACT_LAYER_NEXT) + u / 2;
        ui_text_fit(dl, ", .", x, y, box.x + box.w - x, UI_TEXT_DIM);
        top += u + u / 2;
    }
    int fits = ui_imax(1, (box.h - (top - box.y)) / row);
    /* keep the current stage in view (positions in the list) */
    int first = app->stage_scroll, stage = 0, cur_i = ui_app_stage(app);
    for (int k = 0; k < n; k++)
        if (idx[k] == cur_i) stage = k;
    if (stage < first) first = stage;
    if (stage >= first + fits) first = stage - fits + 1;
    if (first > ui_imax(0, n - fits)) first = ui_imax(0, n - fits);
    dl->layout->stage_first = first;
    char shape[96];
    int name_w = 0;
    for (int k = 0; k < n; k++) name_w = ui_imax(name_w, ui_text_w(dl, nav_name(&app->trace.tensors[idx[k]])));
    for (int k = first; k < n && k < first + fits; k++) {
        int i = idx[k];
        const attn_tensor *t = &app->trace.tensors[i];
        int y = top + (k - first) * row;
        bool cur = i == cur_i;
        if (cur) ui_fill(dl, box.x, y, box.w, row, UI_PANEL_HI);
        if (cur) ui_fill(dl, box.x, y, 3, row, UI_ACCENT);
        ui_text(dl, nav_name(t), box.x + u / 2, y + (row - u) / 2, cur ? UI_WHITE : UI_TEXT);
        if (!app->lesson.open) /* beside a lesson, names only (the header gives the shape) */
            ui_text_fit(dl, attn_tensor_shape_str(t, shape, sizeof shape), box.x + u / 2 + name_w + u / 2,
                        y + (row - u) / 2, box.w - name_w - u * 3 / 2, cur ? UI_TEXT : UI_TEXT_DIM);
        hit(dl, box.x, y, box.w, row, UI_ACT_STAGE, i);
    }
}

/* ---- header and decode panel ---------------------------------------------- */

static const char *axis_name(ui_axis a)
{
    switch (a) {
    case UI_AXIS_QUERY: return _("queries i");
    case UI_AXIS_KEY: return _("keys j");
    case UI_AXIS_NEW: return _("new positions");
    case UI_AXIS_PAST: return _("cached positions");
    case UI_AXIS_INPUT: return _("input features m");
    /* TRANSLATORS: the columns of a weight matrix W_Q, W_K, W_V, W_O: the features it produces */
    case UI_AXIS_OUTPUT: return _("output features c");
    case UI_AXIS_FEATURE: return _("features c");
    /* TRANSLATORS: the columns of logits and probs: one per token id of the model's vocabulary */
    case UI_AXIS_VOCAB: return _("vocabulary ids v");
    default: return "";
    }
}

static int header(ui_draw *dl, const ui_app *app, ui_rect box)
{
    int u = ui_line(dl), y = box.y;
    const attn_tensor *t = ui_app_tensor(app);
    const attn_dims *d = &app->trace.dims;
    if (!t) return y;
    char buf[400], shape[96];
    ui_view_slice v;
    ui_view_make(&app->trace, t->name, app->view.batch, app->view.head, &v);
    snprintf(buf, sizeof buf, "%s %s", t->name, attn_tensor_shape_str(t, shape, sizeof shape));
    ui_text_fit(dl, buf, box.x, y, box.w, UI_WHITE);
    y += u + u / 4;
    if (t->info) {
        attn_stage_text tc = attn_trace_stage_text(&app->trace);
        ui_text_fit(dl, _(attn_stage_formula_in(t->info, &tc)), box.x, y, box.w, UI_ACCENT);
        y += u + u / 8;
        y += ui_text_wrap(dl, _(attn_stage_desc_in(t->info, &tc)), box.x, y, box.w, UI_TEXT_DIM) * u + u / 8;
    }
    int n = snprintf(buf, sizeof buf, _("batch row %d of %d"), app->view.batch, d->b);
    if (v.head_axis == 'h' || v.head_axis == 'g' || v.block)
        n += snprintf(buf + n, sizeof buf - (size_t)n, _(" · head %d of %d (↑ ↓) · reads kv head %d"), app->view.head, d->h,
                      ui_view_kv_head(d, app->view.head));
    if (v.head_axis == 'g')
        n += snprintf(buf + n, sizeof buf - (size_t)n, _(" · this tensor has g = %d kv heads"), d->g);
    if (app->view.mode == LESSON_VIEW_SINGLE && v.row_axis != UI_AXIS_NONE)
        snprintf(buf + n, sizeof buf - (size_t)n, _(" · rows: %s, columns: %s"), axis_name(v.row_axis),
                 axis_name(v.col_axis));
    y += ui_text_wrap(dl, buf, box.x, y, box.w, UI_TEXT) * u + u / 2;
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
 * cache's size under MHA, GQA and MQA. */
static void decode_texts(const ui_app *app, char *reads, char *cache, size_t size)
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
    int n = snprintf(cache, size, _("KV cache, K and V in float32 for %d×%d positions: MHA %s"), d->b, d->t,
                     bytes_str(per * d->h * d->t * d->b, a, sizeof a));
    /* no-break spaces (U+00A0) inside an item: a line breaks between items */
    if (g_gqa) n += snprintf(cache + n, size - (size_t)n, " · GQA\u00a0(g=%d)\u00a0%s", g_gqa, bytes_str(per * g_gqa * d->t * d->b, b, sizeof b));
    snprintf(cache + n, size - (size_t)n, _(" · MQA %s · this model: %s per token"),
             bytes_str(per * 1 * d->t * d->b, c, sizeof c), bytes_str(per * d->g, m, sizeof m));
}

/* [◀ decode step N of M ▶], what the new query reads, the cache's size (both
 * wrapped, never cut), and a cell per position, the cached ones lit. */
static int decode_panel(ui_draw *dl, const ui_app *app, ui_rect box)
{
    int u = ui_line(dl);
    const attn_dims *d = &app->trace.dims;
    char step[80], reads[400], cache[400];
    snprintf(step, sizeof step, _("decode step %d of %d"), app->view.decode_step, app->decode_len);
    decode_texts(app, reads, cache, sizeof reads);
    /* the controls' width, as arrow() and ui_text will draw them */
    int controls = ui_text_w(dl, "[") + 2 * u + ui_text_w(dl, "◀") + u / 4 + ui_text_w(dl, step) + u / 4 +
                   ui_text_w(dl, "▶") + u / 4 + ui_text_w(dl, "]") + u;
    int rest = box.w - u / 2 - controls;
    bool beside = rest >= 12 * u; /* what the query reads goes beside the controls, else below them */
    int n1 = ui_text_wrap_lines(dl, reads, beside ? rest : box.w - u) + (beside ? 0 : 1);
    int n2 = ui_text_wrap_lines(dl, cache, box.w - u);
    int h = u / 4 + (n1 + n2) * u + u / 4 + u / 2 + u / 2;
    ui_fill(dl, box.x, box.y, box.w, h, UI_PANEL);
    int x = box.x + u / 2, y = box.y + u / 4;
    x += ui_text(dl, "[", x, y, UI_TEXT_DIM);
    x += arrow(dl, x, y, "◀", UI_ACT_DECODE_PREV) + u / 4;
    x += ui_text(dl, step, x, y, UI_WHITE) + u / 4;
    x += arrow(dl, x, y, "▶", UI_ACT_DECODE_NEXT) + u / 4;
    x += ui_text(dl, "]", x, y, UI_TEXT_DIM) + u;
    if (beside) ui_text_wrap(dl, reads, x, y, box.x + box.w - x, UI_TEXT);
    else ui_text_wrap(dl, reads, box.x + u / 2, y + u, box.w - u, UI_TEXT);
    y += n1 * u;
    y += ui_text_wrap(dl, cache, box.x + u / 2, y, box.w - u, UI_TEXT) * u + u / 4;
    /* the cache growing: one cell per cached position */
    int cell = ui_imin(u, (box.w - u) / ui_imax(app->decode_len, 1));
    for (int i = 0; i < app->decode_len; i++) {
        uint32_t col = i < d->P ? UI_ACCENT : i == d->P ? UI_WHITE : UI_PANEL_HI;
        ui_fill(dl, box.x + u / 2 + i * (cell + 2), y + 2, cell, u / 2, col);
    }
    return box.y + h + u / 2;
}

/* ---- status line, tooltip, overlays --------------------------------------- */

/* While the worker recomputes: what it is at, and a bar of how far along the
 * layers (three parts each: q k v, query-key, context) it is. */
static bool busy_line(ui_draw *dl, const ui_app *app, ui_rect box)
{
    int layer, stage, u = ui_line(dl);
    double ms;
    if (!ui_app_busy(app, &layer, &stage, &ms)) return false;
    int layers = ui_imax(1, app->trace.n_layers), part = stage >= ATTN_STAGE_CONTEXT ? 2 : stage >= ATTN_STAGE_SCORES ? 1 : 0;
    if (stage == ATTN_STAGE_RESID_IN) part = 0;
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
    ui_text_fit(dl, buf, box.x + u / 2, box.y + (box.h - u) / 2, box.w - u, UI_ACCENT);
    int done = (int)((double)box.w * (3 * layer + part) / (3.0 * layers));
    ui_fill(dl, box.x, box.y + box.h - 3, ui_imax(u / 2, done), 3, UI_ACCENT);
    return true;
}

static void status_line(ui_draw *dl, const ui_app *app, ui_rect box)
{
    int u = ui_line(dl);
    ui_fill(dl, box.x, box.y, box.w, box.h, UI_PANEL);
    if (busy_line(dl, app, box)) return;
    const char *s = app->status[0] ? app->status
                                   : _("← → stage · ↑ ↓ head · click a query row for its weights · g grid · Tab compare · ? help");
    ui_text_fit(dl, s, box.x + u / 2, box.y + (box.h - u) / 2, box.w - u, app->status_error ? UI_ERROR : UI_TEXT_DIM);
}

static void tooltip(ui_draw *dl, const ui_app *app)
{
    if (app->hover_area < 0 || app->hover_area >= app->layout.n_areas || app->help || app->edit.open ||
        app->save_menu.open)
        return;
    const ui_heat_area *a = &app->layout.areas[app->hover_area];
    const attn_trace *tr = a->pane == 1 && app->has_alt ? &app->alt : &app->trace;
    ui_view_slice v;
    char buf[400];
    if (a->pane == 2) return; /* the difference has no formula of its own */
    if (ui_view_make(tr, a->stage, app->view.batch, a->head, &v)) return;
    ui_view_explain(tr, &v, app->hover_i, app->hover_j, buf, sizeof buf);
    if (!buf[0]) return;
    /* the cell's row and column labels in full (the axes may show them cut), then the explanation, wrapped */
    char rl[96], cl[96], head[260];
    const char *r = v.row_axis == UI_AXIS_NONE ? "" : ui_view_row_label(tr, &v, app->hover_i, rl, sizeof rl);
    const char *c = ui_view_col_label(tr, &v, app->hover_j, cl, sizeof cl);
    if (*r) snprintf(head, sizeof head, _("row %d: %s   column %d: %s"), app->hover_i, r, app->hover_j, c);
    else snprintf(head, sizeof head, _("column %d: %s"), app->hover_j, c);
    int u = ui_line(dl), maxw = ui_imax(10 * u, ui_imin(dl->layout->width - 2 * u, 44 * u));
    int w = ui_imin(ui_imax(ui_text_w(dl, buf), ui_text_w(dl, head)), maxw);
    int lines = 1 + ui_text_wrap_lines(dl, buf, w), h = lines * u + u / 2;
    int x = app->mouse_x + u, y = app->mouse_y + u;
    if (x + w + u > dl->layout->width) x = ui_imax(0, dl->layout->width - w - u);
    if (y + h > dl->layout->height) y = ui_imax(0, app->mouse_y - h - u / 2);
    ui_fill(dl, x, y, w + u, h, 0xF0101016u);
    ui_frame(dl, x, y, w + u, h, 1, UI_ACCENT);
    ui_text_fit(dl, head, x + u / 2, y + u / 4, w, UI_ACCENT);
    ui_text_wrap(dl, buf, x + u / 2, y + u / 4 + u, w, UI_WHITE);
}

/* The help: a line for each row of the key table that has help text (keys.c),
 * in as many columns as the window's height needs (none is left out), then the
 * memory the trace shown takes against the budget. */
static void help_overlay(ui_draw *dl, const ui_app *app)
{
    int u = ui_line(dl), n = 0;
    for (int i = 0; i < ui_n_keys; i++) n += ui_keys[i].help_keys != NULL;
    enum { MAX_COLS = 8 };
    int row = u + u / 4, W = dl->layout->width, H = dl->layout->height;
    int per = ui_imax(1, (H - 2 * u - u - 3 * row) / row); /* rows a column holds: title and memory lines aside */
    int cols = ui_imin(MAX_COLS, (n + per - 1) / per);
    per = (n + cols - 1) / cols;
    /* each column as wide as its own keys and descriptions */
    int ckw[MAX_COLS] = {0}, cw[MAX_COLS] = {0}, total = u;
    for (int i = 0, k = 0; i < ui_n_keys; i++) {
        if (!ui_keys[i].help_keys) continue;
        int c = ui_imin(k++ / per, cols - 1);
        ckw[c] = ui_imax(ckw[c], ui_text_w(dl, _(ui_keys[i].help_keys)));
        cw[c] = ui_imax(cw[c], ckw[c] + u + ui_text_w(dl, _(ui_keys[i].help)) + u);
    }
    for (int c = 0; c < cols; c++) total += cw[c];
    int w = ui_imin(W - 2 * u, total), h = (per + 3) * row + u;
    if (total > w) cw[cols - 1] -= total - w; /* the last column's descriptions give way, cut with … */
    int x = (W - w) / 2, y = ui_imax(u / 2, (H - h) / 2);
    ui_fill(dl, 0, 0, W, H, 0xB0000000u);
    ui_fill(dl, x, y, w, h, UI_PANEL);
    ui_frame(dl, x, y, w, h, 2, UI_ACCENT);
    ui_text_fit(dl, _("keys   (Esc or ? closes this)"), x + u, y + u / 2, w - 2 * u, UI_WHITE);
    for (int i = 0, k = 0, cx = x + u; i < ui_n_keys; i++) {
        if (!ui_keys[i].help_keys) continue;
        int c = ui_imin(k / per, cols - 1), ry = y + u / 2 + (k % per + 1) * row + u / 2;
        if (k && k % per == 0 && k / per < cols) cx += cw[c - 1];
        k++;
        ui_text(dl, _(ui_keys[i].help_keys), cx, ry, UI_ACCENT);
        ui_text_fit(dl, _(ui_keys[i].help), cx + ckw[c] + u, ry, cw[c] - ckw[c] - 2 * u, UI_TEXT);
    }
    double bytes = attn_trace_bytes(&app->trace);
    char buf[200];
    /* TRANSLATORS: the help's last line: MiB the trace shown takes, GiB it may take */
    snprintf(buf, sizeof buf, _("memory: this trace %.1f MiB; the budget %.1f GiB (--memory-gib)"), bytes / (1 << 20),
             attn_config_max_bytes(&app->cfg) / (1 << 30));
    ui_text_fit(dl, buf, x + u, y + h - row, w - 2 * u, UI_TEXT_DIM);
}

/* The save dialog (S): the four kinds, the highlighted one framed; each a hit. */
static void save_overlay(ui_draw *dl, const ui_app *app)
{
    /* TRANSLATORS: the save dialog's four choices */
    const char *kinds[UI_SAVE_KINDS] = {N_("PNG: the window as a picture"),
                                        N_("SVG: the same as vectors, for slides"),
                                        N_("PDF: vectors, with selectable text, for papers"),
                                        N_("CSV: the numbers of the matrix shown")};
    int u = ui_line(dl), row = 2 * u, tw = ui_text_w(dl, _("save as   (↑ ↓ Enter, 1–4; Esc closes)"));
    for (int k = 0; k < UI_SAVE_KINDS; k++) tw = ui_imax(tw, ui_text_w(dl, _(kinds[k])) + 2 * u);
    int w = ui_imin(dl->layout->width - 2 * u, tw + 2 * u), h = (UI_SAVE_KINDS + 1) * row + u;
    int x = (dl->layout->width - w) / 2, y = (dl->layout->height - h) / 3;
    ui_fill(dl, 0, 0, dl->layout->width, dl->layout->height, 0x90000000u);
    ui_fill(dl, x, y, w, h, UI_PANEL);
    ui_frame(dl, x, y, w, h, 2, UI_ACCENT);
    ui_text_fit(dl, _("save as   (↑ ↓ Enter, 1–4; Esc closes)"), x + u, y + u / 2, w - 2 * u, UI_WHITE);
    for (int k = 0; k < UI_SAVE_KINDS; k++) {
        ui_rect r = {x + u / 2, y + row + k * row, w - u, row - u / 4};
        bool cur = k == app->save_menu.choice;
        ui_fill(dl, r.x, r.y, r.w, r.h, cur ? UI_PANEL_HI : UI_PANEL);
        if (cur) ui_frame(dl, r.x, r.y, r.w, r.h, 1, UI_ACCENT);
        char num[8];
        snprintf(num, sizeof num, "%d", k + 1);
        ui_text(dl, num, r.x + u / 2, r.y + (r.h - u) / 2, UI_ACCENT);
        ui_text_fit(dl, _(kinds[k]), r.x + 2 * u, r.y + (r.h - u) / 2, r.w - 2 * u - u / 2, cur ? UI_WHITE : UI_TEXT);
        ui_layout_hit(dl->layout, r, UI_ACT_SAVE_AS, k);
    }
}

/* ---- the frame ------------------------------------------------------------ */

void ui_render_frame(const ui_app *app, ui_draw *dl, ui_layout *layout, int w, int h)
{
    ui_draw_begin(dl, (int)lroundf(UI_BASE_FONT_PX * app->font_scale * app->pixel_ratio));
    dl->layout = layout;
    /* a lesson takes the right part of the window; the visualizer keeps the rest */
    int full_w = w, panel_w = 0;
    if (app->lesson.open) {
        panel_w = ui_imin(46 * ui_line(dl), (int)(0.36 * w));
        panel_w = ui_imax(panel_w, ui_imin(22 * ui_line(dl), w / 2));
        w -= panel_w;
    }
    ui_layout_clear(layout);
    layout->full_width = full_w;
    layout->width = w;
    layout->height = h;
    layout->stage_first = app->stage_scroll;
    layout->lesson_scroll = app->lesson.scroll;
    layout->lesson_scroll_max = app->lesson.content_h;
    layout->picker_first = app->lesson.picker_first;
    layout->picker_rows = app->lesson.picker_rows;

    ui_fill(dl, 0, 0, full_w, h, UI_BG);
    int u = ui_line(dl);
    /* presenter mode: the toolbar only after the mouse moved */
    int top = app->present && !app->toolbar_shown ? u / 2 : controls(dl, app);
    int status_h = u + u / 2;
    int nav_w = navigator_width(dl, app);
    navigator(dl, app, (ui_rect){0, top, nav_w, h - top - status_h});
    ui_rect main = {nav_w + u, top, w - nav_w - 2 * u, h - top - status_h - u / 2};
    int y = header(dl, app, main);
    if (ui_app_decoding(app)) y = decode_panel(dl, app, (ui_rect){main.x, y, main.w, 0});
    ui_rect pic = {main.x, y, main.w, main.y + main.h - y};
    int side = ui_predict_width(dl, app, pic.w);
    if (side) {
        pic.w -= side + u;
        ui_render_predictions(dl, app, (ui_rect){pic.x + pic.w + u, pic.y, side, pic.h});
    }
    switch (app->view.mode) {
    case LESSON_VIEW_GRID:
        if (ui_app_overview(app)) ui_plot_overview(dl, app, pic);
        else ui_plot_grid(dl, app, pic);
        break;
    case LESSON_VIEW_COMPARE: ui_plot_compare(dl, app, pic); break;
    case LESSON_VIEW_GEOMETRY: ui_plot_geometry(dl, app, pic); break;
    default: ui_plot_single(dl, app, pic); break;
    }
    status_line(dl, app, (ui_rect){0, h - status_h, w, status_h});
    if (app->lesson.open) {
        ui_render_lesson_marks(app, dl);
        ui_render_lesson(app, dl, (ui_rect){w, 0, panel_w, h});
    }
    tooltip(dl, app);
    if (app->edit.open) ui_render_edit(app, dl);
    if (app->help) help_overlay(dl, app);
    if (app->save_menu.open) save_overlay(dl, app);
    if (app->lesson.picker) ui_render_picker(app, dl);
    ui_render_opening(app, dl);
    if (app->quit_confirm) ui_render_quit_confirm(app, dl);
}

void ui_render_commit(ui_app *app, const ui_layout *l)
{
    app->width = l->width;
    app->height = l->height;
    app->full_width = l->full_width;
    app->stage_scroll = l->stage_first;
    app->lesson.scroll = l->lesson_scroll;
    app->lesson.content_h = l->lesson_scroll_max;
    app->lesson.picker_first = l->picker_first;
    app->lesson.picker_rows = l->picker_rows;
    app->opening.shown = app->opening.pending; /* the frame said what opens: now it may */
    app->dirty = false;
}
