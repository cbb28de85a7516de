/* modal.c — the quit question and the "opening …" notice, drawn over the frame. */
#include "modal.h"

#include <stdio.h>

#include "engine/trace/stages.h"
#include "i18n.h"

/* A button at (x, y) recorded as a hit; returns its width. */
static int button(draw_list *dl, int x, int y, const char *label, bool primary, app_action act)
{
    int u = draw_line_h(dl), w = draw_text_w(dl, label) + 2 * u;
    app_rect r = {x, y, w, u + u / 2};
    draw_fill(dl, r.x, r.y, r.w, r.h, primary ? 0xFF2E5E78u : DRAW_PANEL_HI);
    draw_outline(dl, r.x, r.y, r.w, r.h, 1, primary ? DRAW_ACCENT : DRAW_TEXT_DIM);
    draw_text(dl, label, x + u, y + u / 4, DRAW_WHITE);
    app_layout_hit(dl->layout, r, act, 0);
    return w;
}

void draw_quit_confirm(const app_state *app, draw_list *dl)
{
    (void)app;
    int u = draw_line_h(dl), W = dl->layout->full_width, H = dl->layout->full_height;
    /* TRANSLATORS: the question q asks with a lesson open, and its two buttons */
    const char *title = _("Quit attnlab?");
    const char *how = _("q again / Enter to quit, Esc to stay");
    const char *quit = _("Quit"), *stay = _("Stay");
    int bw = draw_text_w(dl, quit) + draw_text_w(dl, stay) + 5 * u;
    int w = draw_imin(W - 2 * u, draw_imax(draw_imax(draw_text_w(dl, title), draw_text_w(dl, how)), bw) + 2 * u);
    int h = 5 * u + u / 2, x = (W - w) / 2, y = (H - h) / 3;
    draw_fill(dl, 0, 0, W, H, 0x90000000u);
    draw_fill(dl, x, y, w, h, DRAW_PANEL);
    draw_outline(dl, x, y, w, h, 2, DRAW_ACCENT);
    draw_text_fit(dl, title, x + u, y + u / 2, w - 2 * u, DRAW_WHITE);
    draw_text_fit(dl, how, x + u, y + u / 2 + u + u / 4, w - 2 * u, DRAW_TEXT_DIM);
    int by = y + h - 2 * u - u / 4, bx = x + w - u - bw + u;
    bx += button(dl, bx, by, stay, false, APP_ACT_BACK) + u;
    button(dl, bx, by, quit, true, APP_ACT_QUIT);
}

void draw_opening(const app_state *app, draw_list *dl)
{
    int layer = 0, stage = 0;
    double ms = 0;
    bool busy = app_busy(app, &layer, &stage, &ms);
    if (!app->opening.pending && !(app->opening.label[0] && (busy || app->opening.reading))) return;
    int u = draw_line_h(dl), W = dl->layout->full_width, H = dl->layout->full_height;
    char buf[300];
    /* TRANSLATORS: shown at once while a lesson or a model opens; %s: which one */
    snprintf(buf, sizeof buf, _("opening %s …"), app->opening.label);
    int w = draw_imin(W - 2 * u, draw_imax(draw_text_w(dl, buf), 24 * u) + 2 * u), h = 4 * u;
    int x = (W - w) / 2, y = (H - h) / 3;
    draw_fill(dl, 0, 0, W, H, 0xB0000000u);
    draw_fill(dl, x, y, w, h, DRAW_PANEL);
    draw_outline(dl, x, y, w, h, 2, DRAW_ACCENT);
    draw_text_fit(dl, buf, x + u, y + u / 2, w - 2 * u, DRAW_WHITE);
    /* how far: reading (no worker yet), then the worker's layers, three parts each */
    int layers = app->model ? app->model->cfg.layers : app->trace.n_layers;
    int part = stage >= ATTN_STAGE_CONTEXT ? 2 : stage >= ATTN_STAGE_SCORES ? 1 : 0;
    if (stage == ATTN_STAGE_RESID_IN) part = 0;
    if (layers < 1) layers = 1;
    const char *what = busy ? _("computing the first picture") : _("reading the files");
    if (busy) snprintf(buf, sizeof buf, "%s (%.1f s)", what, ms / 1000.0);
    else snprintf(buf, sizeof buf, "%s", what);
    draw_text_fit(dl, buf, x + u, y + u / 2 + u + u / 4, w - 2 * u, DRAW_TEXT_DIM);
    int bar = w - 2 * u, done = busy ? (int)((double)bar * (1 + 3 * layer + part) / (1 + 3.0 * layers)) : bar / 12;
    draw_fill(dl, x + u, y + h - u, bar, u / 3, DRAW_PANEL_HI);
    draw_fill(dl, x + u, y + h - u, draw_imax(u / 2, draw_imin(bar, done)), u / 3, DRAW_ACCENT);
}
