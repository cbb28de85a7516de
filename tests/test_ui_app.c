/* test_ui_app.c — the visualizer driven through its event handler and drawn
 * offscreen: keys and clicks change the state as documented, and the pixels
 * follow (masked cells hatched, group frames, labels, bar chart, tooltip). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "app.h"
#include "catalog.h"
#include "engine/formats/trace_io.h"
#include "engine/run/forward.h"
#include "export.h"
#include "jobs_thread.h"
#include "offscreen.h"
#include "render.h"
#include "view.h"

#include "harness.h"

static int setup_with(void **state, const char *const *kv)
{
    fixture *f = calloc(1, sizeof *f);
    char err[400];
    attn_config c;
    attn_error e;
    attn_config_init(&c);
    for (int i = 0; kv && kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &e)) fail_msg("set %s: %s", kv[i], e.msg);
    if (sdl_offscreen_open(&f->o, 1280, 800, err, sizeof err)) fail_msg("offscreen: %s", err);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    *state = f;
    return 0;
}

static int setup(void **state) { return setup_with(state, NULL); }

static int setup_gqa(void **state)
{
    static const char *const kv[] = {"d_model", "64", "heads", "8", "kv_heads", "2", NULL};
    return setup_with(state, kv);
}


/* Large enough that a recomputation takes a while (tens of ms) on the worker. */
static int setup_big(void **state)
{
    static const char *const kv[] = {"batch", "1", "seq", "768", "d_model", "256", "heads", "8", NULL};
    return setup_with(state, kv);
}

static void move(fixture *f, int x, int y)
{
    SDL_Event ev = {0};
    ev.type = SDL_MOUSEMOTION;
    ev.motion.x = x;
    ev.motion.y = y;
    sdl_input_event(&f->app, &ev);
}

static const char *stage(const fixture *f) { return app_tensor(&f->app)->name; }

/* Pixels of the top-left quarter of cell (i, j) of area a (clear of the
 * number printed in the cell's middle), counted by kind. */
typedef struct {
    int total, light, dark, other;
} counts;

static counts cell_corner(fixture *f, int a, int i, int j)
{
    const app_heat_area *ar = &f->app.layout.areas[a];
    int x, y, w, h;
    app_heat_cell_rect(ar->r.w, ar->r.h, ar->rows, ar->cols, i, j, &x, &y, &w, &h);
    counts c = {0};
    int x1 = w >= 12 ? w / 4 : w - 1, y1 = h >= 12 ? h / 4 : h - 1;
    for (int yy = 1; yy < y1; yy++)
        for (int xx = 1; xx < x1; xx++) {
            uint32_t p = px(f, ar->r.x + x + xx, ar->r.y + y + yy);
            c.total++;
            if (p == APP_HATCH_LIGHT) c.light++;
            else if (p == APP_HATCH_DARK) c.dark++;
            else c.other++;
        }
    return c;
}

static bool hatched(counts c) { return c.light > 0 && c.dark > 0 && c.other == 0; }
static bool plain(counts c) { return c.light == 0 && c.dark == 0; }

/* ---- pixels ---------------------------------------------------------------- */

static void causal_mask_hatches_the_future(void **state)
{
    fixture *f = *state;
    assert_string_equal(stage(f), "weights");
    draw(f);
    assert_true(f->app.layout.n_areas >= 1);
    assert_int_equal(f->app.layout.areas[0].rows, 6);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            counts c = cell_corner(f, 0, i, j);
            if (j > i && !hatched(c)) fail_msg("weights[%d,%d] above the diagonal is not hatched (%d/%d/%d)", i, j, c.light, c.dark, c.other);
            if (j <= i && !plain(c)) fail_msg("weights[%d,%d] is hatched", i, j);
        }
    /* causal off: batch row 0 has no padding, so nothing is masked */
    assert_true(key(f, SDLK_c, 0));
    assert_false(f->app.cfg.causal);
    draw(f);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) assert_true(plain(cell_corner(f, 0, i, j)));
    /* the same on the masked scores, where the cells really are −∞ */
    assert_true(key(f, SDLK_c, 0));
    assert_int_equal(app_set_stage(&f->app, "masked_scores"), 0);
    draw(f);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) assert_int_equal(hatched(cell_corner(f, 0, i, j)), j > i);
}

static void padding_hatches_pad_keys(void **state)
{
    fixture *f = *state;
    key(f, SDLK_c, 0); /* causal off: only padding masks */
    key(f, SDLK_b, 0); /* batch row 1: "我 爱 AI" + 3 pads */
    assert_int_equal(f->app.view.batch, 1);
    draw(f);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) assert_int_equal(hatched(cell_corner(f, 0, i, j)), j >= 3);
    key(f, SDLK_p, 0); /* left padding: the pads come first */
    assert_int_equal(f->app.cfg.pad_side, ATTN_PAD_LEFT);
    draw(f);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) assert_int_equal(hatched(cell_corner(f, 0, i, j)), j < 3);
    key(f, SDLK_p, 0); /* padding mask off: nothing hatched, pads get weight */
    assert_false(f->app.cfg.pad_mask);
    draw(f);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) assert_true(plain(cell_corner(f, 0, i, j)));
    key(f, SDLK_p, 0);
    assert_true(f->app.cfg.pad_mask);
    assert_int_equal(f->app.cfg.pad_side, ATTN_PAD_RIGHT);
}

static void grid_frames_one_colour_per_kv_group(void **state)
{
    fixture *f = *state;
    const int want[3] = {2, 1, 8}; /* GQA g=2, then m: MQA, then m: MHA */
    assert_true(key(f, SDLK_g, 0));
    assert_int_equal(f->app.view.mode, LESSON_VIEW_GRID);
    for (int round = 0; round < 3; round++) {
        draw(f);
        assert_int_equal(f->app.trace.dims.g, want[round]);
        assert_int_equal(f->app.layout.n_areas, 8);
        uint32_t seen[8];
        int distinct = 0;
        for (int a = 0; a < 8; a++) {
            const app_heat_area *ar = &f->app.layout.areas[a];
            assert_int_equal(ar->head, a);
            /* the frame sits 2 to 4 pixels outside the picture */
            uint32_t frame = px(f, ar->r.x - 3, ar->r.y + ar->r.h / 2);
            assert_int_equal(frame, app_group_argb(app_view_kv_head(&f->app.trace.dims, a)) | 0xFF000000u);
            bool known = false;
            for (int k = 0; k < distinct; k++) known |= seen[k] == frame;
            if (!known) seen[distinct++] = frame;
        }
        assert_int_equal(distinct, want[round]);
        key(f, SDLK_m, 0);
    }
    /* a click on a pane selects its head; until the new trace is drawn there is nothing to click */
    assert_int_equal(f->app.layout.n_areas, 0);
    draw(f);
    const app_heat_area *ar = &f->app.layout.areas[5];
    assert_true(click(f, ar->r.x + ar->r.w / 2, ar->r.y + ar->r.h / 2));
    assert_int_equal(f->app.view.head, 5);
}

static void labels_have_every_glyph(void **state)
{
    fixture *f = *state;
    static const char *const toks[] = {"你", "是", "一", "只", "猫", "娘"};
    draw(f);
    const app_heat_area *ar = &f->app.layout.areas[0];
    app_view_slice v;
    assert_int_equal(app_view_make(&f->app.trace, "weights", 0, 0, &v), 0);
    for (int i = 0; i < 6; i++) {
        char buf[64];
        assert_string_equal(app_view_row_label(&f->app.trace, &v, i, buf, sizeof buf), toks[i]);
        assert_string_equal(app_view_col_label(&f->app.trace, &v, i, buf, sizeof buf), toks[i]);
        assert_int_equal(sdl_font_missing_glyphs(f->o.g->font, toks[i]), 0);
        /* ink left of row i, where its label is drawn */
        int x, y, w, h, ink = 0;
        app_heat_cell_rect(ar->r.w, ar->r.h, ar->rows, ar->cols, i, 0, &x, &y, &w, &h);
        for (int yy = ar->r.y + y; yy < ar->r.y + y + h; yy++)
            for (int xx = ar->r.x - 40; xx < ar->r.x - 2; xx++) ink += px(f, xx, yy) != DRAW_BG;
        if (ink < 20) fail_msg("no label drawn for row %d (%d pixels)", i, ink);
    }
    assert_int_equal(sdl_font_missing_glyphs(f->o.g->font, "scores[h=2, i=3, j=1] = q₃·k₁ / √8 −∞ Σⱼ"), 0);
}

/* ---- keys ------------------------------------------------------------------ */

static void keys_move_through_stages_and_heads(void **state)
{
    fixture *f = *state;
    char title[200];
    SDL_Surface *before;
    draw(f);
    before = shot(f);
    f->shot = NULL; /* ours now */
    assert_true(key(f, SDLK_RIGHT, 0));
    assert_string_equal(stage(f), "context");
    assert_true(key(f, SDLK_LEFT, 0));
    assert_true(key(f, SDLK_LEFT, 0));
    assert_string_equal(stage(f), "masked_scores");
    key(f, SDLK_RIGHT, 0);
    assert_true(key(f, SDLK_DOWN, 0));
    assert_int_equal(f->app.view.head, 1);
    draw(f); /* the picture follows the head */
    const app_heat_area *ar = &f->app.layout.areas[0];
    int differ = 0;
    for (int y = ar->r.y; y < ar->r.y + ar->r.h; y += 3)
        for (int x = ar->r.x; x < ar->r.x + ar->r.w; x += 3)
            differ += (((uint32_t *)((uint8_t *)before->pixels + (size_t)y * before->pitch))[x] | 0xFF000000u) != px(f, x, y);
    SDL_FreeSurface(before);
    assert_true(differ > 100);
    key(f, SDLK_UP, 0);
    key(f, SDLK_UP, 0);
    assert_int_equal(f->app.view.head, 3); /* wraps */
    key(f, SDLK_b, 0);
    assert_int_equal(f->app.view.batch, 1);
    key(f, SDLK_b, 0);
    assert_int_equal(f->app.view.batch, 0);
    assert_string_equal(app_title(&f->app, title, sizeof title), "attnlab - weights - head 3 - batch row 0");
    /* the first and last stages stop */
    while (key(f, SDLK_LEFT, 0)) {}
    assert_string_equal(stage(f), "x");
    while (key(f, SDLK_RIGHT, 0)) {}
    assert_string_equal(stage(f), "out");
    /* a click in the navigator, shown with n when the picture would otherwise keep its room */
    draw(f);
    if (!f->app.layout.panels_shown) key(f, SDLK_n, 0);
    draw(f);
    assert_true(f->app.layout.panels_shown);
    bool clicked = false;
    for (int h = 0; h < f->app.layout.n_hits && !clicked; h++)
        if (f->app.layout.hits[h].action == APP_ACT_STAGE && !strcmp(f->app.trace.tensors[f->app.layout.hits[h].arg].name, "mask")) {
            clicked = click(f, f->app.layout.hits[h].r.x + 5, f->app.layout.hits[h].r.y + 5);
        }
    assert_true(clicked);
    assert_string_equal(stage(f), "mask");
}

static void keys_change_the_configuration(void **state)
{
    fixture *f = *state;
    const attn_dims *d = &f->app.trace.dims;
    assert_int_equal(d->g, 4);
    key(f, SDLK_m, 0);
    assert_int_equal(f->app.trace.dims.mode, ATTN_MODE_GQA);
    assert_int_equal(f->app.trace.dims.g, 2);
    key(f, SDLK_m, 0);
    assert_int_equal(f->app.trace.dims.g, 1);
    key(f, SDLK_m, 0); /* MQA → MLA: a latent cache, every head its own keys */
    assert_int_equal(f->app.trace.dims.mode, ATTN_MODE_MLA);
    assert_non_null(attn_trace_find(&f->app.trace, "c_kv"));
    key(f, SDLK_m, KMOD_SHIFT); /* M: the absorbed computation */
    assert_non_null(attn_trace_find(&f->app.trace, "q_latent"));
    key(f, SDLK_m, 0); /* MLA → MHA */
    assert_int_equal(f->app.trace.dims.mode, ATTN_MODE_MHA);
    assert_int_equal(f->app.trace.dims.g, 4);
    /* c corrects a reversed (pitfall) mask, then toggles on ⇄ off */
    assert_int_equal(app_set(&f->app, "causal", "reversed"), 0);
    key(f, SDLK_c, 0);
    assert_int_equal((int)f->app.cfg.causal, ATTN_CAUSAL_ON);
    assert_non_null(strstr(f->app.status, "corrected"));
    key(f, SDLK_c, 0);
    assert_int_equal((int)f->app.cfg.causal, ATTN_CAUSAL_OFF);
    key(f, SDLK_c, 0);
    assert_int_equal((int)f->app.cfg.causal, ATTN_CAUSAL_ON);
    key(f, SDLK_h, 0); /* heads: next divisor of d_model = 32 */
    assert_int_equal(f->app.trace.dims.h, 8);
    key(f, SDLK_v, KMOD_SHIFT); /* fewer kv heads: 8 → 4 */
    assert_int_equal(f->app.trace.dims.g, 4);
    key(f, SDLK_h, KMOD_SHIFT);
    assert_int_equal(f->app.trace.dims.h, 4);
    assert_true(f->app.trace.dims.h % f->app.trace.dims.g == 0);
    key(f, SDLK_r, 0);
    assert_true(f->app.cfg.rope);
    assert_non_null(attn_trace_find(&f->app.trace, "q_rope"));
    assert_string_equal(stage(f), "weights"); /* the place is kept */
    key(f, SDLK_d, 0);
    assert_true(f->app.cfg.train);
    assert_non_null(attn_trace_find(&f->app.trace, "weights_dropout"));
    key(f, SDLK_i, 0);
    assert_float_equal(f->app.trace.cfg.mask_value, -1e9f, 1.0f);
    key(f, SDLK_i, 0);
    assert_true(isinf(f->app.trace.cfg.mask_value));
    /* cross-attention: a non-square picture with the source on the key axis */
    key(f, SDLK_x, 0);
    assert_true(f->app.trace.dims.cross);
    assert_int_equal(f->app.trace.dims.t, 5);
    assert_int_equal(f->app.trace.dims.s, 6);
    draw(f);
    assert_int_equal(f->app.layout.areas[0].cols, 5);
    app_view_slice v;
    char buf[64];
    app_view_make(&f->app.trace, "weights", 0, 0, &v);
    assert_string_equal(app_view_col_label(&f->app.trace, &v, 0, buf, sizeof buf), "you");
    /* c in cross-attention: refused by the engine, nothing changes */
    key(f, SDLK_c, 0);
    assert_true(f->app.status_error);
    assert_true(f->app.trace.dims.cross);
    key(f, SDLK_x, 0);
    assert_false(f->app.trace.dims.cross);
    assert_true(f->app.cfg.causal);
}

static void view_keys_and_overlays(void **state)
{
    fixture *f = *state;
    key(f, SDLK_TAB, 0);
    assert_int_equal(f->app.view.mode, LESSON_VIEW_COMPARE);
    assert_true(f->app.has_alt);
    assert_false(f->app.alt.cfg.causal); /* compares with the causal mask toggled */
    draw(f);
    assert_int_equal(f->app.layout.n_areas, 3);
    for (int p = 1; p < 3; p++) { /* three panes of one size that do not overlap */
        const app_rect a = f->app.layout.areas[p].r, b = f->app.layout.areas[p - 1].r;
        assert_int_equal(a.w, f->app.layout.areas[0].r.w);
        assert_int_equal(a.h, f->app.layout.areas[0].r.h);
        assert_true(a.x >= b.x + b.w || a.y >= b.y + b.h);
    }
    key(f, SDLK_t, 0);
    assert_int_equal(f->app.view.compare, attn_compare_find("padding"));
    assert_false(f->app.alt.cfg.pad_mask);
    key(f, SDLK_TAB, 0);
    assert_int_equal(f->app.view.mode, LESSON_VIEW_SINGLE);
    assert_false(f->app.has_alt);
    key(f, SDLK_SLASH, KMOD_SHIFT);
    assert_true(f->app.help);
    key(f, SDLK_ESCAPE, 0);
    assert_false(f->app.help);
    assert_false(f->app.req.quit);
    key(f, SDLK_F1, 0);
    assert_true(f->app.help);
    key(f, SDLK_F1, 0);
    assert_false(f->app.help);
    key(f, SDLK_PLUS, 0);
    assert_float_equal(f->app.font_scale, 1.25f, 1e-6);
    key(f, SDLK_MINUS, 0);
    key(f, SDLK_MINUS, 0);
    assert_float_equal(f->app.font_scale, 0.75f, 1e-6);
    draw(f); /* smaller text: the font follows */
    assert_int_equal(f->o.g->font_px, 12);
    key(f, SDLK_s, 0);
    assert_true(f->app.req.save);
    assert_int_equal(f->app.req.save_kind, APP_SAVE_PNG);
    f->app.req.save = false;
    /* S: the save dialog; ↓ ↓ Enter saves a PDF, 4 a CSV, Esc and a click outside close it */
    key(f, SDLK_s, KMOD_SHIFT);
    assert_true(f->app.save_menu.open);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_DOWN, 0);
    key(f, SDLK_c, 0); /* other keys wait: no causal toggle behind the dialog */
    assert_int_equal(f->app.cfg.causal, ATTN_CAUSAL_ON);
    key(f, SDLK_RETURN, 0);
    assert_false(f->app.save_menu.open);
    assert_true(f->app.req.save);
    assert_int_equal(f->app.req.save_kind, APP_SAVE_PDF);
    f->app.req.save = false;
    key(f, SDLK_s, KMOD_SHIFT);
    key(f, SDLK_4, 0);
    assert_int_equal(f->app.req.save_kind, APP_SAVE_CSV);
    f->app.req.save = false;
    key(f, SDLK_s, KMOD_SHIFT);
    key(f, SDLK_ESCAPE, 0);
    assert_false(f->app.save_menu.open);
    assert_false(f->app.req.quit);
    assert_false(f->app.req.save);
    key(f, SDLK_s, KMOD_SHIFT);
    draw(f); /* the dialog's rows are hits: clicking the second saves an SVG */
    const app_hit *svg = NULL;
    for (int i = 0; i < f->app.layout.n_hits; i++)
        if (f->app.layout.hits[i].action == APP_ACT_SAVE_AS && f->app.layout.hits[i].arg == APP_SAVE_SVG)
            svg = &f->app.layout.hits[i];
    assert_non_null(svg);
    app_mouse_down(&f->app, svg->r.x + 2, svg->r.y + 2);
    assert_int_equal(f->app.req.save_kind, APP_SAVE_SVG);
    assert_false(f->app.save_menu.open);
    f->app.req.save = false;
    key(f, SDLK_s, KMOD_SHIFT);
    draw(f);
    app_mouse_down(&f->app, 1, f->app.layout.height - 2);
    assert_false(f->app.save_menu.open);
    assert_false(f->app.req.save);
    key(f, SDLK_f, 0);
    assert_true(f->app.req.fullscreen);
    key(f, SDLK_ESCAPE, 0); /* Esc never quits */
    assert_false(f->app.req.quit);
    key(f, SDLK_q, 0);
    assert_true(f->app.req.quit);
}

/* Polls the app until no recomputation is under way; returns how many polls
 * installed something. */
static int settle(app_state *app)
{
    int installed = 0;
    for (int i = 0; i < 20000 && app_busy(app, NULL, NULL, NULL); i++) {
        installed += app_poll(app);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_false(app_busy(app, NULL, NULL, NULL));
    return installed;
}

/* With async on (the window), a toggle runs on the worker: the settings and
 * trace shown stay until app_poll installs the new ones; a newer request
 * replaces one still running; a change made at once (h) keeps a toggle asked
 * for before it; freeing the app while the worker runs is safe. */
static void toggles_recompute_on_a_worker(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    app->jobs = app->lesson.jobs = posix_jobs(); /* the window's threads */
    app->async = true;
    const float *before = app->trace.tensors[0].data;
    key(f, SDLK_c, 0);
    assert_int_equal(app_settings(app)->causal, ATTN_CAUSAL_OFF);
    if (app_busy(app, NULL, NULL, NULL)) { /* nothing installed until polled */
        assert_int_equal(app->cfg.causal, ATTN_CAUSAL_ON);
        assert_ptr_equal(app->trace.tensors[0].data, before);
    }
    assert_int_equal(settle(app), 1);
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_OFF);
    assert_false(app->trace.cfg.causal);
    assert_string_equal(app->status, "causal mask off");
    /* the worker also found the colour range of the stage shown: the next frame does not scan it */
    int shown = app_stage(app);
    assert_true(shown >= 0 && app->scales[shown].lo <= app->scales[shown].hi);
    app_scale want = app_view_scale(&app->trace.tensors[shown]);
    assert_float_equal(app->scales[shown].lo, want.lo, 0);
    assert_float_equal(app->scales[shown].hi, want.hi, 0);
    /* two toggles at once: the second request supersedes the first */
    key(f, SDLK_c, 0);
    assert_true(app_busy(app, NULL, NULL, NULL));
    key(f, SDLK_r, 0);
    assert_int_equal(app_settings(app)->causal, ATTN_CAUSAL_ON);
    assert_true(app_settings(app)->rope);
    settle(app);
    assert_int_equal(app->trace.cfg.causal, ATTN_CAUSAL_ON);
    assert_true(app->trace.cfg.rope);
    assert_false(app->status_error);
    /* a toggle, then more heads twice (h goes to the worker too, from the
     * settings asked for, not the trace shown): all three hold */
    key(f, SDLK_c, 0);
    key(f, SDLK_h, 0);
    assert_true(app_busy(app, NULL, NULL, NULL));
    key(f, SDLK_h, 0);
    settle(app);
    assert_int_equal(app->trace.cfg.causal, ATTN_CAUSAL_OFF);
    assert_int_equal(app->trace.dims.h, 32);
    /* decode steps on the worker: the step shown stays until its trace is in */
    key(f, SDLK_k, 0);
    if (app_busy(app, NULL, NULL, NULL)) assert_int_equal(app->view.decode_step, 0);
    key(f, SDLK_RIGHTBRACKET, 0);
    assert_int_equal(app_newest_step(app), 2);
    settle(app);
    assert_int_equal(app->view.decode_step, 2);
    assert_int_equal(app->trace_step, 2);
    key(f, SDLK_k, 0);
    settle(app);
    assert_false(app_decoding(app));
    /* the teardown frees the app with a toggle under way */
    key(f, SDLK_c, 0);
}

/* The compare view's second trace is made on the worker too: opening the
 * view, a toggle in it (both traces at once), and choosing another mask while
 * it computes (the newest choice is the one shown). */
static void compare_trace_on_the_worker(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    app->jobs = app->lesson.jobs = posix_jobs(); /* the window's threads */
    app->async = true;
    key(f, SDLK_TAB, 0);
    assert_int_equal(app->view.mode, LESSON_VIEW_COMPARE);
    settle(app);
    assert_true(app->has_alt);
    assert_int_equal(app->alt.cfg.causal, ATTN_CAUSAL_OFF); /* the causal mask toggled */
    key(f, SDLK_c, 0);                                      /* the trace and its compare trace, on the worker */
    settle(app);
    assert_int_equal(app->trace.cfg.causal, ATTN_CAUSAL_OFF);
    assert_true(app->has_alt);
    assert_int_equal(app->alt.cfg.causal, ATTN_CAUSAL_ON);
    key(f, SDLK_t, 0); /* the padding mask, then the fill value, while the first is computing */
    key(f, SDLK_t, 0);
    assert_int_equal(app->view.compare, 2);
    settle(app);
    assert_true(app->has_alt);
    assert_true(app->alt.cfg.mask_value != app->trace.cfg.mask_value);
    assert_int_equal(app->alt.cfg.pad_mask, app->trace.cfg.pad_mask);
    key(f, SDLK_TAB, 0); /* leaving the view lets its trace go */
    settle(app);
    assert_false(app->has_alt);
    /* edited tokens are computed on the worker: the editor closes at once */
    app_edit_start(app, 0);
    snprintf(app->edit.text[0], sizeof app->edit.text[0], "one two three");
    app->edit.cursor = (int)strlen(app->edit.text[0]);
    key(f, SDLK_RETURN, 0);
    assert_false(app->edit.open);
    settle(app);
    assert_int_equal(app->trace.dims.L, 3);
    assert_string_equal(app->status, "tokens: one two three");
    /* cross-attention on and off, on the worker; x twice in a row ends where it began */
    app->edit.text[1][0] = '\0';
    app_set(app, "tokens", NULL);
    settle(app);
    key(f, SDLK_x, 0);
    settle(app);
    assert_true(app->trace.dims.cross);
    key(f, SDLK_x, 0);
    key(f, SDLK_x, 0);
    settle(app);
    assert_true(app->trace.dims.cross);
}

/* Lesson steps on the worker (the window) end where the same steps taken at
 * once end: the same settings, trace and view, step after step, and a toggle
 * asked while a step computes keeps the step's view. */
static void lesson_steps_on_the_worker(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app, now;
    char dir[512], path[700], err[400];
    attn_config c;
    attn_config_init(&c);
    assert_int_equal(app_init(&now, &c, err, sizeof err), 0);
    attn_config_free(&c);
    app_player_init(&app->lesson, "en", NULL);
    app_player_init(&now.lesson, "en", NULL);
    app->lesson.keep_progress = now.lesson.keep_progress = false;
    static const char *const files[] = {"04-causal-mask.md", "05-padding-mask.md", "06-mqa-gqa.md"};
    for (int fi = 0; fi < 3; fi++) {
        snprintf(path, sizeof path, "%s/%s", lesson_catalog_dir("en", dir, sizeof dir), files[fi]);
        app->async = false;
        if (app_lesson_open(app, path, 0, err, sizeof err)) fail_msg("%s", err);
        if (app_lesson_open(&now, path, 0, err, sizeof err)) fail_msg("%s", err);
        app->jobs = app->lesson.jobs = posix_jobs(); /* the window's threads */
        app->async = true;
        for (int s = 1; s < now.lesson.ls.n_steps; s++) {
            assert_int_equal(app_lesson_go(app, s), 0);
            settle(app);
            assert_int_equal(app_lesson_go(&now, s), 0);
            assert_string_equal(app->view.stage, now.view.stage);
            assert_int_equal(app->view.mode, now.view.mode);
            assert_int_equal(app->view.compare, now.view.compare);
            assert_int_equal(app->view.head, now.view.head);
            assert_int_equal(app->view.batch, now.view.batch);
            assert_int_equal(app->view.row, now.view.row);
            assert_int_equal(app->view.layer, now.view.layer);
            assert_int_equal(app->view.decode_step, now.view.decode_step);
            assert_int_equal(app->has_alt, now.has_alt);
            assert_int_equal(app->trace.dims.h, now.trace.dims.h);
            assert_int_equal(app->trace.dims.g, now.trace.dims.g);
            assert_int_equal(app->trace.dims.L, now.trace.dims.L);
            assert_int_equal(app->trace.cfg.causal, now.trace.cfg.causal);
            assert_int_equal(app->trace.cfg.pad_mask, now.trace.cfg.pad_mask);
        }
    }
    /* a step, then c before it is in: the step's view and the toggle both hold */
    assert_int_equal(app_lesson_go(app, 0), 0);
    settle(app);
    assert_int_equal(app_lesson_go(app, 1), 0);
    attn_causal before = app_settings(app)->causal;
    key(f, SDLK_c, 0);
    settle(app);
    assert_int_equal(app->trace.cfg.causal, before == ATTN_CAUSAL_ON ? ATTN_CAUSAL_OFF : ATTN_CAUSAL_ON);
    assert_int_equal(app_lesson_go(&now, 1), 0);
    assert_string_equal(app->view.stage, now.view.stage);
    assert_int_equal(app->view.mode, now.view.mode);
    app_free(&now);
}

/* The heatmap pictures the window keeps stay under the bound the budget
 * counts for them: many full-screen pictures, and the oldest are let go. */
static void heatmap_pictures_stay_in_their_bound(void **state)
{
    fixture *f = *state;
    int w, h;
    assert_int_equal(SDL_GetRendererOutputSize(f->o.g->r, &w, &h), 0);
    static float data[40][4];
    for (int i = 0; i < 40; i++) {
        app_slice s = {.data = data[i], .rows = 2, .cols = 2, .row_stride = 2, .col_stride = 1};
        app_scale sc = {APP_CMAP_SEQUENTIAL, 0, 1};
        sdl_gfx_heatmap(f->o.g, 1, &s, &sc, 0, 0, w, h, 0);
        assert_true((double)sdl_gfx_heat_bytes(f->o.g) <= app_heat_cache_bytes(w, h));
    }
    assert_true((double)sdl_gfx_heat_bytes(f->o.g) >= app_heat_cache_bytes(w, h) / 2); /* and it does keep some */
}

/* The budget counts the trace shown, which stays while a change computes the
 * next: with room for one trace but not two, a toggle is refused up front with
 * both sizes named, and nothing changes. */
static void a_change_counts_the_trace_shown(void **state)
{
    (void)state;
    attn_config c;
    attn_error e;
    double one;
    char err[400], gib[32];
    app_state app;
    attn_config_init(&c);
    static const char *const kv[] = {"batch", "1", "seq", "512", "d_model", "64", "heads", "8", NULL};
    for (int i = 0; kv[i]; i += 2) assert_int_equal(attn_config_set(&c, kv[i], kv[i + 1], &e), ATTN_OK);
    assert_int_equal(attn_trace_estimate(&c, &one, &e), ATTN_OK);
    snprintf(gib, sizeof gib, "%.6f", 1.5 * one / (1 << 30));
    assert_int_equal(attn_config_set(&c, "memory_gib", gib, &e), ATTN_OK);
    assert_int_equal(app_init(&app, &c, err, sizeof err), 0);
    const float *before = app.trace.tensors[0].data;
    assert_true(app_do(&app, APP_ACT_CAUSAL, 0) == false);
    assert_true(app.status_error);
    assert_non_null(strstr(app.status, "besides the"));
    assert_non_null(strstr(app.status, "limit (--memory-gib)"));
    assert_int_equal(app.cfg.causal, ATTN_CAUSAL_ON);
    assert_ptr_equal(app.trace.tensors[0].data, before);
    app_free(&app);
    attn_config_free(&c);
}

static void editing_tokens_with_text_input(void **state)
{
    fixture *f = *state;
    key(f, SDLK_e, 0);
    assert_true(f->app.edit.open);
    assert_string_equal(f->app.edit.text[0], "你 是 一 只 猫 娘 | 我 爱 AI");
    /* shortcuts are text while editing */
    key(f, SDLK_u, KMOD_CTRL);
    assert_string_equal(f->app.edit.text[0], "");
    text(f, "我");
    SDL_Event ev = {0};
    ev.type = SDL_TEXTEDITING; /* an IME composing the next character */
    snprintf(ev.edit.text, sizeof ev.edit.text, "%s", "ai");
    sdl_input_event(&f->app, &ev);
    assert_string_equal(f->app.edit.compose, "ai");
    draw(f); /* the composition is drawn, the text field recorded for the IME */
    assert_true(f->app.layout.edit_rect.w > 0);
    text(f, "爱");
    assert_string_equal(f->app.edit.compose, "");
    text(f, " 猫 m");
    key(f, SDLK_m, 0); /* typed, not the mode key */
    assert_int_equal(f->app.trace.dims.g, 4);
    key(f, SDLK_BACKSPACE, 0);
    assert_string_equal(f->app.edit.text[0], "我爱 猫 ");
    key(f, SDLK_LEFT, 0);
    key(f, SDLK_BACKSPACE, 0); /* a whole CJK character, not one byte */
    assert_string_equal(f->app.edit.text[0], "我爱  ");
    key(f, SDLK_HOME, 0);
    text(f, "<pad> ");
    key(f, SDLK_RETURN, 0); /* reserved token: refused, still editing */
    assert_true(f->app.edit.open);
    assert_true(f->app.status_error);
    assert_null(f->app.cfg.tokens);
    key(f, SDLK_u, KMOD_CTRL);
    text(f, "我 爱 猫 | 猫 爱 鱼 很 多");
    key(f, SDLK_RETURN, 0);
    assert_false(f->app.edit.open);
    assert_string_equal(f->app.cfg.tokens, "我 爱 猫 | 猫 爱 鱼 很 多");
    assert_int_equal(f->app.trace.dims.s, 5);
    assert_int_equal(f->app.trace.dims.b, 2);
    key(f, SDLK_e, 0);
    text(f, " 啊");
    key(f, SDLK_ESCAPE, 0); /* cancel keeps the tokens */
    assert_false(f->app.edit.open);
    assert_string_equal(f->app.cfg.tokens, "我 爱 猫 | 猫 爱 鱼 很 多");
    assert_false(f->app.req.quit);
}

static void decode_mode_steps_through_tokens(void **state)
{
    fixture *f = *state;
    key(f, SDLK_k, 0);
    assert_true(app_decoding(&f->app));
    assert_int_equal(f->app.view.decode_step, 1);
    assert_int_equal(f->app.decode_len, 6);
    for (int step = 1; step <= 6; step++) {
        const attn_dims *d = &f->app.trace.dims;
        assert_int_equal(f->app.view.decode_step, step);
        assert_int_equal(d->s, 1);     /* one new query */
        assert_int_equal(d->P, step - 1);
        assert_int_equal(d->t, step);  /* reading every cached key */
        const attn_tensor *kc = attn_trace_find(&f->app.trace, "k_cache");
        if (step > 1) assert_non_null(kc);
        draw(f);
        assert_int_equal(f->app.layout.areas[0].rows, 1);
        assert_int_equal(f->app.layout.areas[0].cols, step);
        bool more = key(f, SDLK_RIGHTBRACKET, 0);
        assert_int_equal(more, step < 6);
    }
    key(f, SDLK_LEFTBRACKET, 0);
    assert_int_equal(f->app.view.decode_step, 5);
    /* the last step's new row equals the full causal pass's row 4 */
    attn_trace full;
    attn_config c;
    attn_error e;
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &full, &e), 0);
    const attn_tensor *w1 = attn_trace_find(&f->app.trace, "weights"), *w0 = attn_trace_find(&full, "weights");
    for (int j = 0; j < 5; j++)
        assert_float_equal(attn_tensor_at4(w1, 0, 2, 0, j), attn_tensor_at4(w0, 0, 2, 4, j), 1e-5);
    attn_trace_free(&full);
    attn_config_free(&c);
    key(f, SDLK_k, 0);
    assert_false(app_decoding(&f->app));
    assert_int_equal(f->app.trace.dims.s, 6);
}

/* ---- mouse ----------------------------------------------------------------- */

static void click_row_shows_bars_and_hover_explains(void **state)
{
    fixture *f = *state;
    draw(f);
    const app_heat_area ar = f->app.layout.areas[0];
    int x, y, w, h;
    app_heat_cell_rect(ar.r.w, ar.r.h, ar.rows, ar.cols, 3, 1, &x, &y, &w, &h);
    int cx = ar.r.x + x + w / 2, cy = ar.r.y + y + h / 2;
    move(f, cx, cy);
    assert_int_equal(f->app.hover_area, 0);
    assert_int_equal(f->app.hover_i, 3);
    assert_int_equal(f->app.hover_j, 1);
    app_view_slice v;
    char buf[400];
    app_view_make(&f->app.trace, "weights", 0, 0, &v);
    app_view_explain(&f->app.trace, &v, 3, 1, buf, sizeof buf);
    assert_non_null(strstr(buf, "weights[h=0, i=3, j=1] = exp("));
    draw(f); /* the tooltip: a box with the accent frame near the mouse */
    int accent = 0;
    for (int yy = cy; yy < cy + 60 && yy < 800; yy++)
        for (int xx = cx; xx < cx + 400 && xx < 1280; xx++) accent += px(f, xx, yy) == DRAW_ACCENT;
    assert_true(accent > 50);
    /* moving within the same cell asks for no redraw */
    SDL_Event ev = {0};
    ev.type = SDL_MOUSEMOTION;
    ev.motion.x = cx + 1;
    ev.motion.y = cy;
    assert_false(sdl_input_event(&f->app, &ev));

    assert_true(click(f, cx, cy));
    assert_int_equal(f->app.view.row, 3);
    draw(f);
    /* the stacked bar: the segments reach the white mark at 1 */
    assert_true(app_tensor(&f->app) != NULL);
    bool white_mark = false;
    for (int yy = 400; yy < 800 && !white_mark; yy++)
        for (int xx = 300; xx < 1280 && !white_mark; xx++)
            if (px(f, xx, yy) == DRAW_WHITE && px(f, xx + 1, yy) == DRAW_WHITE && px(f, xx - 1, yy) != DRAW_WHITE &&
                px(f, xx, yy + 5) == DRAW_WHITE && px(f, xx, yy + 10) == DRAW_WHITE) {
                /* left of the mark: the last segment, a map colour, not the background */
                white_mark = px(f, xx - 2, yy + 8) != DRAW_BG && px(f, xx - 2, yy + 8) != DRAW_PANEL;
            }
    assert_true(white_mark);
    key(f, SDLK_ESCAPE, 0); /* closes the bar chart, does not quit */
    assert_int_equal(f->app.view.row, -1);
    assert_false(f->app.req.quit);
}

/* softmax_guard = false: the fully masked rows are NaN, drawn as the NaN
 * checkerboard even though the mask covers them, with a NaN swatch under the
 * colour bar; the bar chart of such a row draws no bars. */
static void unguarded_softmax_shows_nan_rows(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_set(&f->app, "pad_side", "left"), 0);
    assert_int_equal(app_set(&f->app, "softmax_guard", "false"), 0);
    key(f, SDLK_b, 0); /* batch row 1: <pad> <pad> <pad> 我 爱 AI */
    draw(f);
    const app_heat_area ar = f->app.layout.areas[0];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            int x, y, w, h, nan = 0, n = 0;
            app_heat_cell_rect(ar.r.w, ar.r.h, ar.rows, ar.cols, i, j, &x, &y, &w, &h);
            for (int yy = 1; yy < h / 4; yy++)
                for (int xx = 1; xx < w / 4; xx++, n++) {
                    uint32_t p = px(f, ar.r.x + x + xx, ar.r.y + y + yy);
                    nan += p == APP_NAN_A || p == APP_NAN_B;
                }
            if ((nan == n) != (i < 3)) fail_msg("weights[%d,%d]: %d of %d pixels NaN", i, j, nan, n);
        }
    /* the legend: a NaN swatch right of the heatmap */
    int swatch = 0;
    for (int yy = ar.r.y; yy < 800; yy++)
        for (int xx = ar.r.x + ar.r.w + 1; xx < 1280; xx++) swatch += px(f, xx, yy) == APP_NAN_A;
    assert_true(swatch > 20);
    /* the bar chart of a NaN row draws without bars (and without crashing) */
    int x, y, w, h;
    app_heat_cell_rect(ar.r.w, ar.r.h, ar.rows, ar.cols, 0, 0, &x, &y, &w, &h);
    assert_true(click(f, ar.r.x + x + w / 2, ar.r.y + y + h / 2));
    assert_int_equal(f->app.view.row, 0);
    draw(f);
    /* the guard back on: zero rows, no NaN anywhere */
    assert_int_equal(app_set(&f->app, "softmax_guard", "true"), 0);
    draw(f);
    int nan = 0;
    for (int yy = 0; yy < 800; yy++)
        for (int xx = 0; xx < 1280; xx++) nan += px(f, xx, yy) == APP_NAN_A;
    assert_int_equal(nan, 0);
}

/* A NaN the data put in (W_Q[0, 0] of a --weights file) is drawn as NaN in
 * head 0's weights, and the status line says where it first appears: when the
 * change is made at once and when the worker makes it. The unguarded
 * softmax's NaN rows, shown on purpose, are no notice. */
static void nan_from_the_data_is_noticed(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    static const char *const W[] = {"w_q", "w_k", "w_v", "w_o"};
    attn_st_tensor t[4];
    float *data[4];
    attn_error err;
    for (int i = 0; i < 4; i++) {
        const attn_tensor *w = attn_trace_find(&app->trace, W[i]);
        assert_non_null(w);
        data[i] = malloc(w->count * sizeof *data[i]);
        memcpy(data[i], w->data, w->count * sizeof *data[i]);
        t[i] = (attn_st_tensor){W[i], w->ndim, w->shape, data[i]};
    }
    data[0][0] = NAN;
    char path[600];
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(path, sizeof path, "%s/attnlab-nan-%d.safetensors", tmp ? tmp : "/tmp", (int)getpid());
    assert_int_equal(attn_st_write(path, t, 4, NULL, 0, &err), ATTN_OK);
    for (int i = 0; i < 4; i++) free(data[i]);
    assert_int_equal(app_set(app, "weights", path), 0);
    assert_true(app->status_error);
    if (!strstr(app->status, "NaN first appears in w_q at [0, 0]")) fail_msg("status: %s", app->status);
    /* head 0's weights: every cell NaN (causal, right padding: no row is fully masked) */
    assert_int_equal(app_set_stage(app, "weights"), 0);
    draw(f);
    const app_heat_area ar = app->layout.areas[0];
    int x, y, w, h, nan = 0, n = 0;
    app_heat_cell_rect(ar.r.w, ar.r.h, ar.rows, ar.cols, 2, 0, &x, &y, &w, &h);
    for (int yy = 1; yy < h / 4; yy++)
        for (int xx = 1; xx < w / 4; xx++, n++) nan += px(f, ar.r.x + x + xx, ar.r.y + y + yy) == APP_NAN_A ||
                                                           px(f, ar.r.x + x + xx, ar.r.y + y + yy) == APP_NAN_B;
    if (nan != n) fail_msg("weights[2, 0] of head 0: %d of %d pixels NaN", nan, n);
    /* the worker's recomputation says it too */
    app->jobs = app->lesson.jobs = posix_jobs(); /* the window's threads */
    app->async = true;
    key(f, SDLK_c, 0);
    settle(app);
    assert_false(app->trace.cfg.causal);
    if (!strstr(app->status, "NaN first appears in w_q at [0, 0]")) fail_msg("status: %s", app->status);
    app->async = false;
    /* without the file: the NaN is gone, and so is the notice; the pitfall's NaN rows make none */
    assert_int_equal(app_set(app, "weights", ""), 0);
    if (strstr(app->status, "first appears")) fail_msg("status: %s", app->status);
    assert_int_equal(app_set(app, "pad_side", "left"), 0);
    assert_int_equal(app_set(app, "softmax_guard", "false"), 0);
    assert_null(strstr(app->status, "first appears"));
    unlink(path);
}

static void toolbar_buttons_do_what_keys_do(void **state)
{
    fixture *f = *state;
    draw(f);
    int n = f->app.layout.n_hits;
    app_hit hits[APP_MAX_HITS];
    memcpy(hits, f->app.layout.hits, sizeof hits);
    for (int k = 0; k < n; k++) {
        if (hits[k].action != APP_ACT_CAUSAL) continue;
        assert_true(click(f, hits[k].r.x + 2, hits[k].r.y + 2));
        assert_false(f->app.cfg.causal);
        return;
    }
    fail_msg("no causal button");
}

/* ---- traces from files ----------------------------------------------------- */

static void file_trace_recomputes_from_its_inputs(void **state)
{
    (void)state;
    char path[512], err[400];
    const char *dir = getenv("ATTNLAB_TEST_TMP");
    snprintf(path, sizeof path, "%s/ui_app_trace.safetensors", dir ? dir : ".");
    attn_config c;
    attn_error e;
    attn_trace tr, nc;
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &e), 0);
    assert_int_equal(attn_trace_save(&tr, path, &e), 0);
    c.causal = false;
    assert_int_equal(attn_trace_run(&c, NULL, &nc, &e), 0);
    app_state app;
    assert_int_equal(app_init_file(&app, path, err, sizeof err), 0);
    assert_true(app.from_file);
    assert_string_equal(app_tensor(&app)->name, "weights");
    assert_true(app_do(&app, APP_ACT_CAUSAL, 0));
    const attn_tensor *a = attn_trace_find(&app.trace, "weights"), *b = attn_trace_find(&nc, "weights");
    for (size_t i = 0; i < a->count; i++) assert_float_equal(a->data[i], b->data[i], 1e-6);
    assert_false(app_do(&app, APP_ACT_MODE, 0)); /* shapes are the file's */
    assert_true(app.status_error);
    assert_non_null(strstr(app.status, "a trace opened from a file keeps its shapes"));
    app_free(&app);
    attn_trace_free(&tr);
    attn_trace_free(&nc);
    attn_config_free(&c);
    assert_int_equal(app_init_file(&app, "/nonexistent/x.safetensors", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.safetensors"));
}

static void pictures_refuse_bad_stage_and_head(void **state)
{
    fixture *f = *state;
    app_picture p;
    char err[700];
    app_picture_init(&p);
    snprintf(p.view.stage, sizeof p.view.stage, "k_cache");
    assert_int_equal(app_picture_apply(&f->app, &p, err, sizeof err), 2);
    assert_non_null(strstr(err, "no stage 'k_cache'"));
    snprintf(p.view.stage, sizeof p.view.stage, "scores");
    p.view.head = 4;
    assert_int_equal(app_picture_apply(&f->app, &p, err, sizeof err), 2);
    assert_non_null(strstr(err, "--head: 4 is out of range (h = 4"));
    p.view.head = 3;
    p.view.mode = LESSON_VIEW_GRID;
    assert_int_equal(app_picture_apply(&f->app, &p, err, sizeof err), 0);
    assert_string_equal(stage(f), "scores");
    assert_int_equal(f->app.view.mode, LESSON_VIEW_GRID);
}

/* A long random session of keys, text, clicks, motion and wheel: nothing
 * crashes (the sanitizer pass runs this too) and the state stays in range. */
static void random_session_keeps_state_valid(void **state)
{
    fixture *f = *state;
    static const SDL_Keycode keys[] = {
        SDLK_LEFT, SDLK_RIGHT, SDLK_UP, SDLK_DOWN, SDLK_b, SDLK_c, SDLK_p, SDLK_m, SDLK_r, SDLK_d, SDLK_i, SDLK_x,
        SDLK_h, SDLK_v, SDLK_g, SDLK_TAB, SDLK_t, SDLK_e, SDLK_k, SDLK_LEFTBRACKET, SDLK_RIGHTBRACKET, SDLK_PLUS,
        SDLK_MINUS, SDLK_F1, SDLK_ESCAPE, SDLK_RETURN, SDLK_BACKSPACE, SDLK_HOME, SDLK_END, SDLK_DELETE, SDLK_u};
    static const char *const texts[] = {"我", " ", "|", "a", "爱 猫", "<pad>", "\xe4", "x y z | q"};
    unsigned seed = 12345;
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
    draw(f);
    for (int n = 0; n < 3000; n++) {
        SDL_Event ev = {0};
        unsigned r = RND() % 10;
        if (r < 5) {
            ev.type = SDL_KEYDOWN;
            ev.key.keysym.sym = keys[RND() % (sizeof keys / sizeof keys[0])];
            ev.key.keysym.mod = RND() % 4 == 0 ? KMOD_SHIFT : (RND() % 16 == 0 ? KMOD_CTRL : 0);
        } else if (r < 6) {
            ev.type = SDL_TEXTINPUT;
            snprintf(ev.text.text, sizeof ev.text.text, "%s", texts[RND() % (sizeof texts / sizeof texts[0])]);
        } else if (r < 8) {
            ev.type = SDL_MOUSEBUTTONDOWN;
            ev.button.button = SDL_BUTTON_LEFT;
            ev.button.x = (int)(RND() % 1280);
            ev.button.y = (int)(RND() % 800);
        } else if (r < 9) {
            ev.type = SDL_MOUSEMOTION;
            ev.motion.x = (int)(RND() % 1280);
            ev.motion.y = (int)(RND() % 800);
        } else {
            ev.type = SDL_MOUSEWHEEL;
            ev.wheel.y = (int)(RND() % 3) - 1;
        }
        sdl_input_event(&f->app, &ev);
        f->app.req.quit = false;
        f->app.req.save = false;
        if (n % 25 == 0) draw(f);
        const attn_dims *d = &f->app.trace.dims;
        assert_in_range(app_stage(&f->app), 0, f->app.trace.n_tensors - 1);
        assert_in_range(f->app.view.head, 0, d->h - 1);
        assert_in_range(f->app.view.batch, 0, d->b - 1);
        assert_true(f->app.view.row < d->s);
        assert_true(d->h % d->g == 0);
        assert_true(f->app.edit.cursor >= 0 && (size_t)f->app.edit.cursor <= strlen(f->app.edit.text[f->app.edit.field]));
        if (app_decoding(&f->app)) assert_int_equal(d->s, 1);
    }
#undef RND
}

/* input_sdl.c's key map and window events: SDL's codes become the app's. */
static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = calloc(1, 4 << 20);
    if (buf) fread(buf, 1, (4 << 20) - 1, fp);
    fclose(fp);
    return buf;
}

/* S in the window: export_start takes what it needs from the app, the
 * trace shown and the window's fonts, and returns; the file is drawn,
 * formatted and written on a thread of its own while the app goes on. Here
 * the trace the exports were made from is recomputed, and freed, before they
 * are written: the files still hold what was on screen. A file that cannot
 * be written is one line naming it. */
static void export_writes_on_its_own_thread(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    const char *dir = getenv("ATTNLAB_TEST_TMP");
    char svg[1024], csv[1024], bad[1024], err[600], name[ATTN_MAX_NAME];
    snprintf(svg, sizeof svg, "%s/export-%d.svg", dir ? dir : "/tmp", (int)getpid());
    snprintf(csv, sizeof csv, "%s/export-%d.csv", dir ? dir : "/tmp", (int)getpid());
    snprintf(bad, sizeof bad, "%s/no-such-folder-%d/x.pdf", dir ? dir : "/tmp", (int)getpid());
    sdl_render(app, f->o.g, &app->layout);
    const attn_tensor *t = app_tensor(app);
    snprintf(name, sizeof name, "%s", t->name);
    float first = t->data[0]; /* batch row 0, head 0, cell (0, 0) */
    export_job *xs, *xc, *xb;
    assert_int_equal(export_start(app, f->o.g, 1280, 800, APP_SAVE_SVG, svg, &xs, err, sizeof err), 0);
    assert_int_equal(export_start(app, NULL, 0, 0, APP_SAVE_CSV, csv, &xc, err, sizeof err), 0);
    assert_int_equal(export_start(app, f->o.g, 640, 400, APP_SAVE_PDF, bad, &xb, err, sizeof err), 0);
    key(f, SDLK_c, 0); /* recomputed here and now (no worker): the old trace is freed */
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_OFF);
    sdl_render(app, f->o.g, &app->layout); /* and the window's fonts and list used again */
    assert_int_equal(export_end(xs, err, sizeof err), 0);
    assert_int_equal(export_end(xc, err, sizeof err), 0);
    assert_int_equal(export_end(xb, err, sizeof err), -1);
    assert_non_null(strstr(err, bad));
    assert_null(strchr(err, '\n'));
    char *text = slurp(svg);
    assert_non_null(text);
    assert_non_null(strstr(text, "<svg"));
    assert_non_null(strstr(text, name)); /* the text layer: the stage shown then */
    free(text);
    text = slurp(csv);
    assert_non_null(text);
    assert_true(!strncmp(text, name, strlen(name)));
    const char *row0 = strstr(text, "\r\n");
    assert_non_null(row0);
    const char *cell = strchr(row0 + 2, ',');
    assert_non_null(cell);
    assert_float_equal(strtof(cell + 1, NULL), first, 0); /* %.9g: the float itself */
    free(text);
    unlink(svg);
    unlink(csv);
}

static void sdl_events_become_app_calls(void **state)
{
    fixture *f = *state;
    assert_int_equal(sdl_input_key(SDLK_KP_ENTER), APP_KEY_RETURN);
    assert_int_equal(sdl_input_key(SDLK_RETURN), APP_KEY_RETURN);
    assert_int_equal(sdl_input_key(SDLK_KP_PLUS), '+');
    assert_int_equal(sdl_input_key(SDLK_a), 'a');
    assert_int_equal(sdl_input_key(SDLK_LEFTBRACKET), '[');
    assert_int_equal(sdl_input_key(SDLK_PAGEDOWN), APP_KEY_PAGEDOWN);
    assert_int_equal(sdl_input_key(SDLK_LCTRL), APP_KEY_NONE);
    assert_int_equal(sdl_input_mods(KMOD_LSHIFT | KMOD_RCTRL), APP_MOD_SHIFT | APP_MOD_CTRL);
    assert_int_equal(sdl_input_mods(KMOD_NONE), 0);
    key(f, SDLK_KP_PLUS, 0); /* the keypad's + is + */
    assert_float_equal(f->app.font_scale, 1.25f, 1e-6);
    key(f, SDLK_EQUALS, KMOD_SHIFT);
    assert_float_equal(f->app.font_scale, 1.5f, 1e-6);
    key(f, SDLK_EQUALS, 0); /* = alone is nothing */
    assert_float_equal(f->app.font_scale, 1.5f, 1e-6);
    f->app.dirty = false;
    SDL_Event ev = {0};
    ev.type = SDL_WINDOWEVENT;
    ev.window.event = SDL_WINDOWEVENT_EXPOSED;
    assert_true(sdl_input_event(&f->app, &ev));
    assert_true(f->app.dirty);
    ev.type = SDL_QUIT;
    assert_true(sdl_input_event(&f->app, &ev));
    assert_true(f->app.req.quit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(causal_mask_hatches_the_future, setup, teardown),
        cmocka_unit_test_setup_teardown(padding_hatches_pad_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(grid_frames_one_colour_per_kv_group, setup_gqa, teardown),
        cmocka_unit_test_setup_teardown(labels_have_every_glyph, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_move_through_stages_and_heads, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_change_the_configuration, setup, teardown),
        cmocka_unit_test_setup_teardown(view_keys_and_overlays, setup, teardown),
        cmocka_unit_test_setup_teardown(toggles_recompute_on_a_worker, setup_big, teardown),
        cmocka_unit_test(a_change_counts_the_trace_shown),
        cmocka_unit_test_setup_teardown(heatmap_pictures_stay_in_their_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(compare_trace_on_the_worker, setup_big, teardown),
        cmocka_unit_test_setup_teardown(lesson_steps_on_the_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(editing_tokens_with_text_input, setup, teardown),
        cmocka_unit_test_setup_teardown(decode_mode_steps_through_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(unguarded_softmax_shows_nan_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(click_row_shows_bars_and_hover_explains, setup, teardown),
        cmocka_unit_test_setup_teardown(nan_from_the_data_is_noticed, setup, teardown),
        cmocka_unit_test_setup_teardown(toolbar_buttons_do_what_keys_do, setup, teardown),
        cmocka_unit_test(file_trace_recomputes_from_its_inputs),
        cmocka_unit_test_setup_teardown(pictures_refuse_bad_stage_and_head, setup, teardown),
        cmocka_unit_test_setup_teardown(random_session_keeps_state_valid, setup, teardown),
        cmocka_unit_test_setup_teardown(sdl_events_become_app_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(export_writes_on_its_own_thread, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
