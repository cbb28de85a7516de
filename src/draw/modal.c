/* modal.c — the quit question and the "opening …" notice, drawn over the frame. */
#include "modal.h"

#include <stdio.h>

#include "engine/attention/attention.h"
#include "engine/base/budget.h"
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

/* "12.5 s" or "3 min 20 s": a time left, for the notice. */
static void time_text(double ms, char *buf, size_t size)
{
    int s = (int)(ms / 1000 + 0.5);
    /* TRANSLATORS: a time left: minutes and seconds, or seconds */
    if (s >= 60) snprintf(buf, size, _("%d min %d s"), s / 60, s % 60);
    else snprintf(buf, size, _("%d s"), s < 1 ? 1 : s);
}

/* The notice's second line for what the worker does now, and how far it is (0 .. 1). */
static double progress_line(const app_state *app, char *buf, size_t size)
{
    app_progress p;
    if (!app_progress_now(app, &p)) {
        snprintf(buf, size, "%s", _("reading the files"));
        return 1.0 / 12;
    }
    char left[48] = "", when[96] = "";
    if (p.left_ms >= 0) {
        time_text(p.left_ms, left, sizeof left);
        /* TRANSLATORS: after the progress: the time so far and the time left */
        snprintf(when, sizeof when, _(" · %.1f s, about %s left"), p.ms / 1000, left);
    } else {
        snprintf(when, sizeof when, " · %.1f s", p.ms / 1000);
    }
    switch (p.phase) {
    case ATTN_PHASE_READING: {
        char done[32], total[32];
        attn_budget_size(p.bytes_done, done, sizeof done);
        attn_budget_size(p.bytes_total, total, sizeof total);
        /* TRANSLATORS: a model's weights being read and checked: bytes so far, of all */
        snprintf(buf, size, _("reading the weights: %s of %s%s"), done, total, when);
        return p.fraction * 0.2;
    }
    case ATTN_PHASE_TOKENIZER:
        snprintf(buf, size, "%s%s", _("building the tokenizer"), when);
        return 0.2;
    case ATTN_PHASE_TRACING:
        /* TRANSLATORS: the model's layers being traced: the layer being computed, of all */
        snprintf(buf, size, _("tracing layer %d of %d%s"), p.layer, p.layers, when);
        return 0.2 + 0.8 * p.fraction;
    default:
        snprintf(buf, size, "%s%s", _("computing the first picture"), when);
        return 0.1;
    }
}

void draw_opening(const app_state *app, draw_list *dl)
{
    bool busy = app_busy(app, NULL, NULL, NULL);
    if (!app->opening.pending && !(app->opening.label[0] && (busy || app->opening.reading))) return;
    if (app->partial.on) return; /* the layers ready are shown: the status line says the rest */
    int u = draw_line_h(dl), W = dl->layout->full_width, H = dl->layout->full_height;
    char buf[300], line[300];
    /* TRANSLATORS: shown at once while a lesson or a model opens; %s: which one */
    snprintf(buf, sizeof buf, _("opening %s …"), app->opening.label);
    double done = progress_line(app, line, sizeof line);
    const app_fetch_progress *f = &app->opening.fetched;
    if (app->opening.fetching[0] && app->opening.pending) { /* the page downloads a model first (fetch.h) */
        /* TRANSLATORS: the page downloads a model's files; its name, MB so far, MB in all */
        snprintf(line, sizeof line, _("downloading %s: %.1f of %.1f MB"), app->opening.fetching, f->done / 1e6,
                 f->total / 1e6);
        done = f->total > 0 ? f->done / f->total : 0;
    }
    int w = draw_imin(W - 2 * u, draw_imax(draw_imax(draw_text_w(dl, buf), draw_text_w(dl, line)), 24 * u) + 2 * u);
    int h = 4 * u, x = (W - w) / 2, y = (H - h) / 3;
    if (!app->opening.first) draw_fill(dl, 0, 0, W, H, 0xB0000000u);
    draw_fill(dl, x, y, w, h, DRAW_PANEL);
    draw_outline(dl, x, y, w, h, 2, DRAW_ACCENT);
    draw_text_fit(dl, buf, x + u, y + u / 2, w - 2 * u, DRAW_WHITE);
    draw_text_fit(dl, line, x + u, y + u / 2 + u + u / 4, w - 2 * u, DRAW_TEXT_DIM);
    int bar = w - 2 * u, fill = (int)(bar * (done < 0 ? 0 : done > 1 ? 1 : done));
    draw_fill(dl, x + u, y + h - u, bar, u / 3, DRAW_PANEL_HI);
    draw_fill(dl, x + u, y + h - u, draw_imax(u / 2, fill), u / 3, DRAW_ACCENT);
    /* TRANSLATORS: under the notice while the program's first picture is computed */
    if (app->opening.first) draw_text_fit(dl, _("q quits · ? help · l lessons"), x + u, y + h + u / 2, w - 2 * u, DRAW_TEXT_DIM);
}
