/* modal.c — the quit question and the "opening …" notice, drawn over the frame. */
#include "modal.h"

#include <stdio.h>

#include "engine/trace/stages.h"
#include "i18n.h"

/* A button at (x, y) recorded as a hit; returns its width. */
static int button(ui_draw *dl, int x, int y, const char *label, bool primary, ui_action act)
{
    int u = ui_line(dl), w = ui_text_w(dl, label) + 2 * u;
    ui_rect r = {x, y, w, u + u / 2};
    ui_fill(dl, r.x, r.y, r.w, r.h, primary ? 0xFF2E5E78u : UI_PANEL_HI);
    ui_frame(dl, r.x, r.y, r.w, r.h, 1, primary ? UI_ACCENT : UI_TEXT_DIM);
    ui_text(dl, label, x + u, y + u / 4, UI_WHITE);
    ui_layout_hit(dl->layout, r, act, 0);
    return w;
}

void ui_render_quit_confirm(const ui_app *app, ui_draw *dl)
{
    (void)app;
    int u = ui_line(dl), W = dl->layout->full_width, H = dl->layout->height;
    /* TRANSLATORS: the question q asks with a lesson open, and its two buttons */
    const char *title = _("Quit attnlab?");
    const char *how = _("q again / Enter to quit, Esc to stay");
    const char *quit = _("Quit"), *stay = _("Stay");
    int bw = ui_text_w(dl, quit) + ui_text_w(dl, stay) + 5 * u;
    int w = ui_imin(W - 2 * u, ui_imax(ui_imax(ui_text_w(dl, title), ui_text_w(dl, how)), bw) + 2 * u);
    int h = 5 * u + u / 2, x = (W - w) / 2, y = (H - h) / 3;
    ui_fill(dl, 0, 0, W, H, 0x90000000u);
    ui_fill(dl, x, y, w, h, UI_PANEL);
    ui_frame(dl, x, y, w, h, 2, UI_ACCENT);
    ui_text_fit(dl, title, x + u, y + u / 2, w - 2 * u, UI_WHITE);
    ui_text_fit(dl, how, x + u, y + u / 2 + u + u / 4, w - 2 * u, UI_TEXT_DIM);
    int by = y + h - 2 * u - u / 4, bx = x + w - u - bw + u;
    bx += button(dl, bx, by, stay, false, UI_ACT_BACK) + u;
    button(dl, bx, by, quit, true, UI_ACT_QUIT);
}

void ui_render_opening(const ui_app *app, ui_draw *dl)
{
    int layer = 0, stage = 0;
    double ms = 0;
    bool busy = ui_app_busy(app, &layer, &stage, &ms);
    if (!app->opening.pending && !(app->opening.label[0] && (busy || app->opening.reading))) return;
    int u = ui_line(dl), W = dl->layout->full_width, H = dl->layout->height;
    char buf[300];
    /* TRANSLATORS: shown at once while a lesson or a model opens; %s: which one */
    snprintf(buf, sizeof buf, _("opening %s …"), app->opening.label);
    int w = ui_imin(W - 2 * u, ui_imax(ui_text_w(dl, buf), 24 * u) + 2 * u), h = 4 * u;
    int x = (W - w) / 2, y = (H - h) / 3;
    ui_fill(dl, 0, 0, W, H, 0xB0000000u);
    ui_fill(dl, x, y, w, h, UI_PANEL);
    ui_frame(dl, x, y, w, h, 2, UI_ACCENT);
    ui_text_fit(dl, buf, x + u, y + u / 2, w - 2 * u, UI_WHITE);
    /* how far: reading (no worker yet), then the worker's layers, three parts each */
    int layers = app->model ? app->model->cfg.layers : app->trace.n_layers;
    int part = stage >= ATTN_STAGE_CONTEXT ? 2 : stage >= ATTN_STAGE_SCORES ? 1 : 0;
    if (stage == ATTN_STAGE_RESID_IN) part = 0;
    if (layers < 1) layers = 1;
    const char *what = busy ? _("computing the first picture") : _("reading the files");
    if (busy) snprintf(buf, sizeof buf, "%s (%.1f s)", what, ms / 1000.0);
    else snprintf(buf, sizeof buf, "%s", what);
    ui_text_fit(dl, buf, x + u, y + u / 2 + u + u / 4, w - 2 * u, UI_TEXT_DIM);
    int bar = w - 2 * u, done = busy ? (int)((double)bar * (1 + 3 * layer + part) / (1 + 3.0 * layers)) : bar / 12;
    ui_fill(dl, x + u, y + h - u, bar, u / 3, UI_PANEL_HI);
    ui_fill(dl, x + u, y + h - u, ui_imax(u / 2, ui_imin(bar, done)), u / 3, UI_ACCENT);
}
