/* kv_panel.c — one synthetic MLA layer's KV cache beside the other modes (kv_panel.h).
 *
 * Per token and layer, in float32, with h heads of dₖ: MHA keeps a key and a
 * value per head, 2·h·dₖ·4 B; GQA with g kv heads 2·g·dₖ·4 B (g as the window's
 * GQA takes it, the smallest divisor of h from 2); MQA 2·dₖ·4 B; MLA the
 * latent and the RoPE key, (R + D)·4 B, whatever h. */
#include "kv_panel.h"

#include <stdio.h>

#include "i18n.h"

typedef struct {
    const char *name;
    int heads, kv_heads; /* kv_heads 0: MLA */
    double bytes;        /* a token, one layer, float32 */
} kv_mode;

/* The modes beside MLA, MHA first; returns how many (GQA left out when h has no divisor for it). */
static int kv_modes(const attn_dims *d, kv_mode out[4])
{
    int n = 0, g = attn_gqa_default_groups(d->h);
    attn_dims m = *d;
    m.mode = ATTN_MODE_MHA, m.g = d->h;
    out[n++] = (kv_mode){"MHA", d->h, d->h, attn_kv_bytes_per_token(&m, 1, 4)};
    if (g) {
        m.mode = ATTN_MODE_GQA, m.g = g;
        out[n++] = (kv_mode){"GQA", d->h, g, attn_kv_bytes_per_token(&m, 1, 4)};
    }
    m.mode = ATTN_MODE_MQA, m.g = 1;
    out[n++] = (kv_mode){"MQA", d->h, 1, attn_kv_bytes_per_token(&m, 1, 4)};
    out[n++] = (kv_mode){"MLA", d->h, 0, attn_kv_bytes_per_token(d, 1, 4)};
    return n;
}

bool draw_kv_panel_wanted(const app_state *app)
{
    const attn_trace *tr = &app->trace;
    return !attn_trace_is_model(tr) && tr->n_tensors > 0 && tr->dims.mode == ATTN_MODE_MLA && !tr->dims.cross &&
           tr->dims.h > 0 && tr->dims.k > 0;
}

void draw_kv_panel(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl), y = box.y + u / 2;
    const attn_dims *d = &app->trace.dims;
    kv_mode modes[4];
    int n = kv_modes(d, modes);
    char buf[200], kv[160];
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    box = (app_rect){box.x + u / 2, box.y, box.w - u, box.h};
    /* TRANSLATORS: the side panel of one MLA layer: what a KV cache keeps for each token */
    y += draw_text_wrap(dl, _("KV cache per token, this layer"), box.x, y, box.w, DRAW_WHITE) * u + u / 8;
    /* TRANSLATORS: under it: %d heads of dₖ = %d features, the values stored as float32 */
    snprintf(buf, sizeof buf, _("float32; the same %d heads of dₖ = %d in every mode (m)"), d->h, d->k);
    y += draw_text_wrap(dl, buf, box.x, y, box.w, DRAW_TEXT_DIM) * u + u / 2;
    for (int i = 0; i < n; i++) {
        bool mla = !modes[i].kv_heads;
        if (mla)
            /* TRANSLATORS: MLA's line in the KV panel: its latent's width R and its RoPE key's D */
            snprintf(buf, sizeof buf, _("MLA  latent R=%d + k_pe D=%d"), d->kv_rank, d->rope_dim);
        else /* as a trained model's variants: query heads / K/V heads */
            snprintf(buf, sizeof buf, "%s  %d/%d", modes[i].name, modes[i].heads, modes[i].kv_heads);
        /* TRANSLATORS: a mode's KV cache: bytes per token (K and V, or MLA's latent and RoPE key) */
        snprintf(kv, sizeof kv, _("KV %.0f B/token"), modes[i].bytes);
        int n1 = draw_text_wrap_lines(dl, buf, box.w), n2 = draw_text_wrap_lines(dl, kv, box.w - u / 2);
        if (mla) draw_fill(dl, box.x - u / 4, y - u / 8, box.w + u / 4, (n1 + n2) * u + u / 3, DRAW_PANEL_HI);
        y += draw_text_wrap(dl, buf, box.x, y, box.w, mla ? DRAW_WHITE : DRAW_TEXT) * u + u / 8;
        y += draw_text_wrap(dl, kv, box.x + u / 2, y, box.w - u / 2, mla ? DRAW_TEXT : DRAW_TEXT_DIM) * u + u / 2 - u / 8;
    }
    /* TRANSLATORS: MLA's floats a token against MHA's, and the share; the latent does not grow with the heads */
    snprintf(buf, sizeof buf, _("MLA: R + D = %d floats a token, MHA: 2·h·dₖ = %d (MLA keeps %.0f%%); "
                                "the latent does not grow with the heads"),
             d->kv_rank + d->rope_dim, 2 * d->h * d->k, 100.0 * modes[n - 1].bytes / modes[0].bytes);
    draw_text_wrap(dl, buf, box.x, y + u / 4, box.w, DRAW_TEXT);
}

void draw_kv_panel_line(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl), y = box.y + (box.h - u) / 2, right = box.x + box.w;
    kv_mode modes[4];
    int n = kv_modes(&app->trace.dims, modes);
    /* TRANSLATORS: at the end of the folded side panel: the key that unfolds it */
    const char *more = _("n: panel");
    int more_w = draw_text_w(dl, more) + u;
    draw_fill(dl, box.x, box.y, box.w, box.h - u / 4, DRAW_PANEL);
    int x = box.x + u / 2;
    /* TRANSLATORS: the folded KV panel of one MLA layer, before each mode's bytes a token */
    x += draw_text_fit(dl, _("KV cache per token:"), x, y, right - x - more_w, DRAW_TEXT_DIM) + u / 2;
    for (int i = 0; i < n; i++) {
        char b[32];
        snprintf(b, sizeof b, "%.0f\u00a0B", modes[i].bytes);
        int w = draw_text_w(dl, modes[i].name) + u / 4 + draw_text_w(dl, b) + u;
        if (x + w > right - more_w) break;
        x += draw_text(dl, modes[i].name, x, y, modes[i].kv_heads ? DRAW_TEXT : DRAW_WHITE) + u / 4;
        x += draw_text(dl, b, x, y, modes[i].kv_heads ? DRAW_TEXT_DIM : DRAW_ACCENT) + u;
    }
    draw_text(dl, more, right - more_w + u / 2, y, DRAW_TEXT_DIM);
    app_layout_hit(dl->layout, box, APP_ACT_PANELS, 0);
}
