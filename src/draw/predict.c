/* predict.c — the next-token panel of a trained model (and the side panel's
 * place for one synthetic MLA layer's KV cache, kv_panel.c). */
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/model/kv_bytes.h"
#include "engine/model/model.h"
#include "i18n.h"
#include "kv_panel.h"

#define DRAW_TOP_K 5

int draw_predict_width(draw_list *dl, const app_state *app, int avail)
{
    if ((!attn_trace_is_model(&app->trace) || !app->model) && !draw_kv_panel_wanted(app)) return 0;
    int u = draw_line_h(dl), side = draw_imin(18 * u, avail / 3);
    /* the picture comes first: in a narrow window (large text, a lesson beside it) no panel */
    return avail - side - u >= 16 * u ? side : 0;
}

/* The top tokens of one trace at the panel's row, as labelled bars; returns the next y. */
static int bars(draw_list *dl, const app_state *app, const attn_trace *tr, app_rect box, int y, uint32_t colour)
{
    int u = draw_line_h(dl);
    app_prediction top[DRAW_TOP_K];
    int n = app_predictions(app, tr, app->view.batch, app_query_row(app), top, DRAW_TOP_K);
    int label_w = 0;
    for (int i = 0; i < n; i++) label_w = draw_imax(label_w, draw_text_w(dl, top[i].text));
    label_w = draw_imin(label_w, box.w / 3);
    int bar_x = box.x + label_w + u / 2, bar_w = box.x + box.w - bar_x - 3 * u;
    for (int i = 0; i < n; i++) {
        char pct[16];
        draw_text_fit(dl, top[i].text, box.x, y, label_w, DRAW_WHITE);
        int w = (int)lroundf(top[i].p * (float)bar_w);
        draw_fill(dl, bar_x, y + u / 6, bar_w, u - u / 3, DRAW_PANEL_HI);
        draw_fill(dl, bar_x, y + u / 6, draw_imax(w, 1), u - u / 3, colour);
        snprintf(pct, sizeof pct, "%.0f%%", 100.0 * top[i].p);
        draw_text(dl, pct, bar_x + bar_w + u / 4, y, DRAW_TEXT);
        y += u + u / 3;
    }
    return y;
}

static int variants(draw_list *dl, const app_state *app, app_rect box, int y)
{
    int u = draw_line_h(dl);
    char buf[160];
    if (app->n_variants < 2) return y;
    y += draw_text_wrap(dl, _("m: variants trained alike"), box.x, y, box.w, DRAW_TEXT_DIM) * u + u / 4;
    for (int i = 0; i < app->n_variants; i++) { /* wrapped, never cut: lessons quote these words */
        const attn_model_variant *v = &app->variants[i];
        bool cur = !strcmp(v->name, app->model->name);
        char kv[160];
        /* TRANSLATORS: a variant: MHA/GQA/MQA, query heads / K/V heads, its held-out loss (nats per token) */
        if (!strcmp(v->variant, "mla")) /* no K/V heads: every head reads the one latent cache */
            /* TRANSLATORS: the MLA variant: its query heads, its held-out loss (nats per token) */
            snprintf(buf, sizeof buf, _("%s  %d heads  loss %.2f"), v->variant, v->heads, v->heldout_loss);
        else
            snprintf(buf, sizeof buf, _("%s  %d/%d  loss %.2f"), v->variant, v->heads, v->kv_heads, v->heldout_loss);
        for (char *p = buf; *p && p < buf + 3; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        /* TRANSLATORS: the variant's KV cache: bytes per token, K and V of all its layers */
        snprintf(kv, sizeof kv, _("KV %.0f B/token, all %d layers"), v->kv_bytes_per_token, v->layers);
        int n1 = draw_text_wrap_lines(dl, buf, box.w), n2 = draw_text_wrap_lines(dl, kv, box.w - u / 2);
        if (cur) draw_fill(dl, box.x - u / 4, y - u / 8, box.w + u / 4, (n1 + n2) * u + u / 3, DRAW_PANEL_HI);
        y += draw_text_wrap(dl, buf, box.x, y, box.w, cur ? DRAW_WHITE : DRAW_TEXT) * u + u / 8;
        y += draw_text_wrap(dl, kv, box.x + u / 2, y, box.w - u / 2, cur ? DRAW_TEXT : DRAW_TEXT_DIM) * u + u / 2 - u / 8;
    }
    return y;
}

/* The loaded model's KV cache per token in float32, as attnlab info counts it
 * (kv_bytes.h): the full layers' bytes a token, and the local layers' cap, W
 * tokens of theirs (Gemma's sliding_attention layers, Mistral's window).
 * Trained variants list theirs below, so a model with variants skips it.
 * Returns the next y. */
static int kv_bytes(draw_list *dl, const app_state *app, app_rect box, int y)
{
    int u = draw_line_h(dl);
    char buf[240];
    if (app->n_variants >= 2) return y;
    const attn_model_config *c = &app->model->cfg;
    attn_kv_bytes b = attn_kv_bytes_of(c, 4);
    if (c->arch.mla)
        /* TRANSLATORS: a latent-attention model's KV cache: bytes per token; each layer keeps a latent of R
         * values and one RoPE key of D */
        snprintf(buf, sizeof buf, _("KV cache %.0f B/token: a latent of %d and a RoPE key of %d in each of %d layers"),
                 b.full, c->mla.kv_rank, c->mla.rope_dim, b.layers);
    else if (!b.local_layers)
        /* TRANSLATORS: the loaded model's KV cache: bytes per token, K and V of all its layers */
        snprintf(buf, sizeof buf, _("KV cache %.0f B/token, all %d layers"), b.full, b.layers);
    else if (b.full_layers)
        /* TRANSLATORS: a model with local (sliding-window) layers: bytes per token of its global layers (%d of
         * %d), then the local ones' bound: at most W tokens of N bytes */
        snprintf(buf, sizeof buf, _("KV cache %.0f B/token in the global layers (%d of %d) + at most %d tokens × "
                                    "%.0f B in the local ones"), b.full, b.full_layers, b.layers, b.window, b.local);
    else
        /* TRANSLATORS: every layer has a sliding window: the cache holds at most W tokens of N bytes */
        snprintf(buf, sizeof buf, _("KV cache: every layer local, at most %d tokens × %.0f B"), b.window, b.local);
    return y + draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_TEXT) * u + u / 4;
}

/* How the model was trained, when not as usual (a chip), then two losses in
 * nats per token: of the text on screen under the settings shown (from the
 * trace, loss.h) and the card's, on held-out text as trained. The cheater
 * with its mask back reads 31.16 beside 0.00. Returns the next y. */
static int losses(draw_list *dl, const app_state *app, app_rect box, int y)
{
    int u = draw_line_h(dl);
    char buf[200];
    const attn_model *m = app->model;
    attn_causal now = app->trace.cfg.causal;
    if (!m->cfg.causal) {
        /* a chip, red while the mask it was trained without is on; wrapped in a narrow panel, never cut */
        const char *chip = _("trained without the causal mask");
        int w = draw_imin(draw_text_w(dl, chip) + u / 2, box.w), lines = draw_text_wrap_lines(dl, chip, w - u / 2);
        draw_fill(dl, box.x, y - 2, w, lines * u + 4, DRAW_PANEL_HI);
        draw_outline(dl, box.x, y - 2, w, lines * u + 4, 1, now ? DRAW_ERROR : DRAW_ACCENT);
        draw_text_wrap(dl, chip, box.x + u / 4, y, w - u / 2, DRAW_WHITE);
        y += lines * u + u / 2;
    }
    app_loss loss = app_loss_of(app, &app->trace, app->view.batch);
    if (loss.counted > 0) {
        /* TRANSLATORS: the loss of the text shown (mean −log p of each next token), under the causal mask's setting */
        snprintf(buf, sizeof buf, now == ATTN_CAUSAL_REVERSED ? _("this text: %.2f nats/token with the causal mask reversed")
                                  : now                       ? _("this text: %.2f nats/token with the causal mask")
                                                              : _("this text: %.2f nats/token without the causal mask"),
                 loss.mean);
        y += draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_WHITE) * u + u / 4;
    }
    if (!isnan(m->heldout_loss)) {
        /* TRANSLATORS: the model card's loss on text it did not train on, in nats per token; "it": the causal mask */
        snprintf(buf, sizeof buf, m->cfg.causal ? _("held-out text, trained with it: %.2f")
                                                : _("held-out text, trained without it: %.2f"),
                 m->heldout_loss);
        y += draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_TEXT) * u + u / 4;
    }
    return y;
}

void draw_predictions(draw_list *dl, const app_state *app, app_rect box)
{
    if (!attn_trace_is_model(&app->trace) || !app->model) {
        draw_kv_panel(dl, app, box); /* one synthetic MLA layer: its cache beside the other modes' */
        return;
    }
    int u = draw_line_h(dl), y = box.y;
    const attn_trace *tr = &app->trace;
    int row = app_query_row(app), pos = tr->dims.P + row;
    char buf[200];
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    box = (app_rect){box.x + u / 2, box.y, box.w - u, box.h};
    y += u / 2;
    const char *tok = attn_tokens_at(&tr->tokens, app->view.batch, pos);
    /* TRANSLATORS: the next-token panel's title: the query token and its position */
    snprintf(buf, sizeof buf, _("next token after “%s” (%d)"), tok, pos);
    y += draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_WHITE) * u + u / 2;
    if (app->partial.on) /* TRANSLATORS: the next-token panel while the first picture comes layer by layer */
        y += draw_text_wrap(dl, _("known once the last layer is traced"), box.x, y, box.w, DRAW_TEXT_DIM) * u + u / 2;
    y = bars(dl, app, tr, box, y, DRAW_ACCENT);
    if (app->has_alt && attn_trace_is_model(&app->alt)) {
        y += u / 2;
        /* TRANSLATORS: %s: what the compare view toggles ("causal mask") */
        snprintf(buf, sizeof buf, _("with the %s toggled:"), app_compare_name(app->view.compare));
        y += draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_TEXT_DIM) * u + u / 4;
        y = bars(dl, app, &app->alt, box, y, DRAW_ERROR);
        app_loss loss = app_loss_of(app, &app->alt, app->view.batch);
        if (loss.counted > 0) {
            /* TRANSLATORS: the loss of the text shown with the compare view's toggle, nats per token */
            snprintf(buf, sizeof buf, _("this text, toggled: %.2f nats/token"), loss.mean);
            y += draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_TEXT) * u;
        }
    }
    y += u / 2;
    snprintf(buf, sizeof buf, "%s · %d %s", app_model_name(app), app->model->cfg.layers, _("layers"));
    draw_text_fit(dl, buf, box.x, y, box.w, DRAW_ACCENT);
    y += u + u / 4;
    y = losses(dl, app, box, y);
    y = kv_bytes(dl, app, box, y);
    variants(dl, app, box, y + u / 4);
}

int draw_predict_line_height(draw_list *dl)
{
    return draw_line_h(dl) + draw_line_h(dl) / 2;
}

/* The panel folded to one line above the picture: the query, its top tokens
 * with their probabilities, as many as fit, and the key that unfolds it. */
void draw_predictions_line(draw_list *dl, const app_state *app, app_rect box)
{
    if (!attn_trace_is_model(&app->trace) || !app->model) {
        draw_kv_panel_line(dl, app, box);
        return;
    }
    int u = draw_line_h(dl), y = box.y + (box.h - u) / 2, right = box.x + box.w;
    const attn_trace *tr = &app->trace;
    int row = app_query_row(app), pos = tr->dims.P + row;
    char buf[200];
    app_prediction top[DRAW_TOP_K];
    int n = app_predictions(app, tr, app->view.batch, row, top, DRAW_TOP_K);
    /* TRANSLATORS: the folded next-token panel: the query token, then its likeliest next tokens */
    snprintf(buf, sizeof buf, _("next after “%s” (%d):"), attn_tokens_at(&tr->tokens, app->view.batch, pos), pos);
    /* TRANSLATORS: at the end of the folded next-token panel: the key that unfolds it */
    const char *more = _("n: panel");
    int more_w = draw_text_w(dl, more) + u;
    draw_fill(dl, box.x, box.y, box.w, box.h - u / 4, DRAW_PANEL);
    int x = box.x + u / 2;
    x += draw_text_fit(dl, buf, x, y, right - x - more_w, DRAW_TEXT_DIM) + u / 2;
    for (int i = 0; i < n; i++) {
        char pct[16];
        snprintf(pct, sizeof pct, "%.0f%%", 100.0 * top[i].p);
        int w = draw_text_w(dl, top[i].text) + u / 4 + draw_text_w(dl, pct) + u;
        if (x + w > right - more_w) break;
        x += draw_text(dl, top[i].text, x, y, DRAW_WHITE) + u / 4;
        x += draw_text(dl, pct, x, y, DRAW_ACCENT) + u;
    }
    draw_text(dl, more, right - more_w + u / 2, y, DRAW_TEXT_DIM);
    app_layout_hit(dl->layout, box, APP_ACT_PANELS, 0);
}
