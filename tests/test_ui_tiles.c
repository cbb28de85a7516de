/* test_ui_tiles.c — the FlashAttention view (key F, `view = tiles`) through
 * the event handler and the command list: the key refused without tiles, the
 * tiles drawn with the skipped ones hatched, every row and column labelled,
 * cells of 16 px or more at 1280 × 800, [ and ] stepping the key tile, m and
 * ℓ read from tile_max and tile_sum, the partial output at the last tile
 * being the traced context (mode mla's too, naive and over the latent), the
 * bytes and the difference said, a learned sink per head found from the
 * trace (gpt-oss), and render --tile N drawing what ] pressed
 * N times shows. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "draw.h"
#include "i18n.h"
#include "player.h"
#include "app_picture.h"
#include "render.h"
#include "tiles_view.h"
#include "view.h"

#include "ui_fixture.h"

static int setup_plain(void **state) { return setup_with(state, NULL); }

static int setup_tiles(void **state)
{
    static const char *const kv[] = {"seq", "8", "tiles", "2x2", NULL};
    return setup_with(state, kv);
}

static int setup_sink(void **state)
{
    static const char *const kv[] = {"seq", "8", "tiles", "2x2", "sink_logit", "0.5", NULL};
    return setup_with(state, kv);
}

static int count(const draw_list *dl, draw_cmd_kind kind)
{
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) n += c->kind == kind;
    return n;
}

static bool has_text(const draw_list *dl, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(dl, c), s)) return true;
    return false;
}

static bool has_part(const draw_list *dl, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(dl, c), s)) return true;
    return false;
}

/* s somewhere in the frame's text, its wrapped lines joined by a space */
static bool has_words(const draw_list *dl, const char *s)
{
    static char all[16384];
    size_t n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT) n += (size_t)snprintf(all + n, n < sizeof all ? sizeof all - n : 0, "%s ",
                                                            draw_cmd_text(dl, c));
    return n < sizeof all && strstr(all, s) != NULL;
}

static const app_hit *hit_at(const app_state *app, app_action act)
{
    for (int i = 0; i < app->layout.n_hits; i++)
        if (app->layout.hits[i].action == act) return &app->layout.hits[i];
    return NULL;
}

/* Without tiles, F says what the view needs and stays in the picture. */
static void test_refused_without_tiles(void **state)
{
    fixture *f = *state;
    assert_false(app_tiles_ok(&f->app));
    app_key(&f->app, 'f', APP_MOD_SHIFT);
    assert_int_equal(f->app.view.mode, LESSON_VIEW_SINGLE);
    assert_non_null(strstr(f->app.status, "--tiles"));
    build(f);
    assert_false(has_part(&f->dl, "FlashAttention tiles")); /* no chip either */
}

/* F opens the view at key tile 1: every token labelled, cells ≥ 16 px, the
 * causally skipped tiles hatched, m and ℓ from the trace, the bytes said. */
static void test_view(void **state)
{
    fixture *f = *state;
    assert_true(app_tiles_ok(&f->app));
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    assert_int_equal(f->app.view.mode, LESSON_VIEW_TILES);
    assert_int_equal(f->app.tile_step, 0);
    build(f);
    assert_true(has_text(&f->dl, "F  FlashAttention tiles"));
    /* 4 × 4 tiles of 2 × 2, causal: the 6 above the diagonal skipped (and the legend's swatch) */
    assert_int_equal(count(&f->dl, DRAW_CMD_HATCH), 6 + 1);
    app_view_slice w;
    char buf[64];
    assert_int_equal(app_view_make(&f->app.trace, "weights", 0, 0, &w), 0);
    for (int i = 0; i < 8; i++) {
        assert_true(has_text(&f->dl, app_view_row_label(&f->app.trace, &w, i, buf, sizeof buf)));
        assert_true(has_text(&f->dl, app_view_col_label(&f->app.trace, &w, i, buf, sizeof buf)));
    }
    const app_hit *g = hit_at(&f->app, APP_ACT_DECODE_NEXT); /* the grid: a click steps on */
    assert_non_null(g);
    assert_true(g->r.w / 8 >= 16 && g->r.h / 8 >= 16);
    assert_true(g->r.x + g->r.w <= W && g->r.y + g->r.h <= H);
    assert_true(has_text(&f->dl, "m") && has_text(&f->dl, "ℓ") && has_text(&f->dl, "‖o‖"));
    assert_true(has_part(&f->dl, "8·8 scores × 4 B = 256 B"));
    assert_true(has_part(&f->dl, "one 2×2 tile × 4 B = 16 B"));
    assert_false(has_part(&f->dl, "the plain one (weights·v) is"));
    app_tiles tv;
    char err[240];
    assert_int_equal(app_tiles_make(&f->app, &tv, err, sizeof err), 0);
    app_view_slice mx, sm;
    assert_int_equal(app_view_make(&f->app.trace, "tile_max", 0, 0, &mx), 0);
    assert_int_equal(app_view_make(&f->app.trace, "tile_sum", 0, 0, &sm), 0);
    for (int i = 0; i < 8; i++) {
        assert_float_equal(tv.m[i], app_slice_at(&mx.slice, i, 0), 0);
        assert_float_equal(tv.l[i], app_slice_at(&sm.slice, i, 0), 0);
    }
    assert_true(has_text(&f->dl, app_view_format(tv.m[0], buf, sizeof buf)));
}

/* ] and [ step the key tile and wrap; at the last one the partial output is
 * the traced (tiled) context, and the difference to weights·v is said. */
static void test_steps(void **state)
{
    fixture *f = *state;
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    assert_true(app_key(&f->app, ']', 0));
    assert_int_equal(f->app.tile_step, 1);
    build(f); /* keys 2 and 3: the first query tile (rows 0 and 1) skips it */
    assert_true(has_part(&f->dl, "Key tile 2 of 4 ([ ] steps): 3 query tiles read it and 1 skip it"));
    assert_false(has_part(&f->dl, "every query tile reads it"));
    assert_true(app_key(&f->app, '[', 0));
    assert_true(app_key(&f->app, '[', 0));
    assert_int_equal(f->app.tile_step, 3); /* back from the first: the last */
    char title[200];
    assert_string_equal(app_title(&f->app, title, sizeof title), "attnlab - weights - head 0 - batch row 0 - key tile 4 of 4");
    assert_int_equal(f->app.view.decode_step, 0); /* not the decoder's step */
    build(f);
    assert_true(has_part(&f->dl, "the plain one (weights·v) is"));
    app_tiles tv;
    char err[240];
    assert_int_equal(app_tiles_make(&f->app, &tv, err, sizeof err), 0);
    assert_true(tv.max_diff < 1e-5f);
    app_view_slice ctx;
    assert_int_equal(app_view_make(&f->app.trace, "context", 0, 0, &ctx), 0);
    for (int i = 0; i < 8; i++) {
        double sq = 0;
        for (int c = 0; c < ctx.slice.cols; c++) sq += (double)app_slice_at(&ctx.slice, i, c) * app_slice_at(&ctx.slice, i, c);
        assert_float_equal(tv.norm[i], sqrt(sq), 1e-5);
        assert_float_equal(tv.first[i], app_slice_at(&ctx.slice, i, 0), 1e-5);
    }
    if (!isinf(f->app.trace.cfg.sink_logit)) return; /* the sink's run: the context reached is all it asks */
    /* a click on the grid steps on: back to the first tile */
    const app_hit *g = hit_at(&f->app, APP_ACT_DECODE_NEXT);
    assert_non_null(g);
    app_mouse_down(&f->app, g->r.x + 4, g->r.y + 4);
    app_mouse_up(&f->app);
    assert_int_equal(f->app.tile_step, 0);
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT)); /* F again: the picture */
    assert_int_equal(f->app.view.mode, LESSON_VIEW_SINGLE);
}

/* Learned sinks, one per head (gpt-oss): the view has no config's X to add
 * at the last tile, and finds each head's from the trace's numbers (s, w and
 * sink_weight). The sink run's trace passed off as such a model's: its one X
 * (0.5) found again, and the last tile's output is the context. */
static void test_learned_sinks(void **state)
{
    fixture *f = *state;
    f->app.trace.arch.sinks = true;
    f->app.trace.cfg.sink_logit = -INFINITY;
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    assert_true(app_key(&f->app, '[', 0)); /* the last key tile */
    app_tiles tv;
    char err[240];
    app_view_slice ctx;
    assert_int_equal(app_view_make(&f->app.trace, "context", 0, 0, &ctx), 0);
    for (int head = 0; head < f->app.trace.dims.h; head++) {
        f->app.view.head = head;
        assert_int_equal(app_tiles_make(&f->app, &tv, err, sizeof err), 0);
        assert_int_equal(app_view_make(&f->app.trace, "context", 0, head, &ctx), 0);
        for (int i = 0; i < 8; i++) {
            double sq = 0;
            for (int c = 0; c < ctx.slice.cols; c++) sq += (double)app_slice_at(&ctx.slice, i, c) * app_slice_at(&ctx.slice, i, c);
            assert_float_equal(tv.norm[i], sqrt(sq), 1e-5);
        }
        assert_float_equal(tv.sink, 0.5, 1e-5);
        build(f); /* and the footer says where it went */
        assert_true(has_words(&f->dl, "at the last tile the sink's e^(X − m) joins ℓ (X = 0.5 for this head)"));
    }
    f->app.trace.arch.sinks = false; /* as it was made, for the teardown */
    f->app.trace.cfg.sink_logit = 0.5f;
}

/* A lesson step's `tile = N` opens the view at key tile N (tile 0 here
 * counts from 0), and entering a step again restores it after ] and [. */
static void show_step(fixture *f, const lesson_view *v)
{
    attn_config c;
    attn_error e;
    attn_config_init(&c);
    if (attn_config_set(&c, "seq", "8", &e) || attn_config_set(&c, "tiles", "2x2", &e)) fail_msg("%s", e.msg);
    assert_int_equal(app_show(&f->app, &c, v), 0); /* c is the app's now */
}

static void test_lesson_tile(void **state)
{
    fixture *f = *state;
    lesson_view v = lesson_view_default();
    v.mode = LESSON_VIEW_TILES;
    v.tile = 2;
    show_step(f, &v);
    assert_int_equal(f->app.view.mode, LESSON_VIEW_TILES);
    assert_int_equal(f->app.tile_step, 2);
    build(f);
    assert_true(has_part(&f->dl, "Key tile 3 of 4"));
    assert_true(app_key(&f->app, ']', 0));
    assert_int_equal(f->app.tile_step, 3);
    show_step(f, &v);
    assert_int_equal(f->app.tile_step, 2);
}

static int setup_32(void **state)
{
    static const char *const kv[] = {"seq", "32", "tiles", "4x8", NULL};
    return setup_with(state, kv);
}

/* 32 tokens (the course's most) at 1280 × 800: cells of 16 px, every text
 * inside the frame, the bytes said (beside the table when the grid is tall). */
static void test_thirty_two_tokens(void **state)
{
    fixture *f = *state;
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    build(f);
    const app_hit *g = hit_at(&f->app, APP_ACT_DECODE_NEXT);
    assert_non_null(g);
    assert_true(g->r.w / 32 >= 16 && g->r.h / 32 >= 16);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT) assert_true(c->r.x >= 0 && c->r.y >= 0 && c->r.x + c->r.w <= W && c->r.y + c->r.h <= H);
    assert_true(has_part(&f->dl, "32·32") && has_part(&f->dl, "4096 B") && has_part(&f->dl, "128 B."));
    assert_int_equal(count(&f->dl, DRAW_CMD_HATCH), 12 + 1); /* 8 × 4 tiles of 4 × 8: 12 wholly in the future */
}

/* Beside a lesson (the picture 845 px wide) there is no room right of the table: the 32 rows'
 * cells shrink so the lines under the grid stay on screen, the labels smaller or one in two,
 * none overlapping the next. */
static void test_beside_a_lesson(void **state)
{
    fixture *f = *state;
    enum { NARROW = 845 };
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    draw_frame(&f->app, &f->dl, &f->app.layout, NARROW, H);
    draw_commit(&f->app, &f->app.layout);
    assert_false(f->dl.failed);
    assert_true(has_part(&f->dl, "32·32 scores × 4 B = 4096 B") && has_part(&f->dl, "at the last tile"));
    int last_y = -1000, rows = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind != DRAW_CMD_TEXT) continue;
        assert_true(c->r.x >= 0 && c->r.y >= 0 && c->r.x + c->r.w <= NARROW && c->r.y + c->r.h <= H);
        if (c->text.turned || c->r.x + c->r.w > 60 || c->r.y < 200) continue; /* the row labels: left of the grid */
        assert_true(c->r.y >= last_y + c->r.h); /* below the one before, not over it */
        last_y = c->r.y, rows++;
    }
    assert_true(rows >= 16);
}

/* Whether two frames are the same command list: kinds, places, colours, texts. */
static void expect_same_frame(const draw_list *a, const draw_list *b, const char *what)
{
    const draw_cmd *x = NULL, *y = NULL;
    int n = 0;
    for (;;) {
        x = draw_list_next(a, x), y = draw_list_next(b, y);
        if (!x || !y) break;
        n++;
        bool same = x->kind == y->kind && !memcmp(&x->r, &y->r, sizeof x->r) && x->color == y->color;
        if (same && x->kind == DRAW_CMD_TEXT) same = !strcmp(draw_cmd_text(a, x), draw_cmd_text(b, y));
        if (!same)
            fail_msg("%s: command %d differs: kind %d at %d,%d %dx%d '%s' against kind %d at %d,%d %dx%d '%s'", what, n,
                     x->kind, x->r.x, x->r.y, x->r.w, x->r.h, x->kind == DRAW_CMD_TEXT ? draw_cmd_text(a, x) : "",
                     y->kind, y->r.x, y->r.y, y->r.w, y->r.h, y->kind == DRAW_CMD_TEXT ? draw_cmd_text(b, y) : "");
    }
    if (x || y) fail_msg("%s: one frame has more commands than the other (after %d)", what, n);
    assert_true(n > 50);
}

/* render --tile N (app_picture_apply, as `attnlab render` calls it; N from 1)
 * draws what the window shows after F and ] pressed N - 1 times; past the last tile,
 * without tiles, or with another view, a one-line refusal (exit 2). */
static void test_render_tile(void **state)
{
    fixture *f = *state; /* the window: F, then ] */
    fixture *g;          /* the picture */
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    for (int n = 0; n < 4; n++) {
        char err[300], what[40];
        setup_tiles((void **)&g);
        app_picture p;
        app_picture_init(&p);
        p.tile = n + 1;
        if (n % 2) p.view.mode = LESSON_VIEW_TILES; /* --view tiles, or --tile alone */
        assert_int_equal(app_picture_apply(&g->app, &p, err, sizeof err), 0);
        assert_int_equal(g->app.tile_step, n);
        /* a picture carries no status line (app_picture_apply clears it): the window's "key tile …" left out */
        snprintf(f->app.status, sizeof f->app.status, "%s", "");
        build(f), build(g);
        snprintf(what, sizeof what, "--tile %d against ] × %d", n + 1, n);
        expect_same_frame(&g->dl, &f->dl, what);
        teardown((void **)&g);
        assert_true(app_key(&f->app, ']', 0));
    }
    static const struct { int tile, mode; bool tiles; const char *msg; } BAD[] = {
        {5, LESSON_VIEW_TILES, true, "--tile: 5 is out of range (this trace has 4 key tiles: 1 to 4)"},
        {1, LESSON_VIEW_GRID, true, "--tile: steps the FlashAttention view's key tiles; it goes with --view tiles, not --view grid"},
        {1, LESSON_VIEW_TILES, false, "--view tiles: the FlashAttention view needs tiles"},
        {-1, LESSON_VIEW_TILES, false, "--view tiles: the FlashAttention view needs tiles"},
        {1, LESSON_VIEW_SINGLE, false, "--tile: the FlashAttention view needs tiles"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        char err[300] = "";
        (BAD[i].tiles ? setup_tiles : setup_plain)((void **)&g);
        app_picture p;
        app_picture_init(&p);
        p.tile = BAD[i].tile, p.view.mode = BAD[i].mode;
        assert_int_equal(app_picture_apply(&g->app, &p, err, sizeof err), 2);
        if (strncmp(err, BAD[i].msg, strlen(BAD[i].msg))) fail_msg("case %zu: '%s', want '%s…'", i, err, BAD[i].msg);
        assert_null(strchr(err, '\n'));
        teardown((void **)&g);
    }
}

static int setup_mla(void **state)
{
    static const char *const kv[] = {"seq", "8", "tiles", "2x4", "mode", "mla", "rope", "true", NULL};
    return setup_with(state, kv);
}

static int setup_mla_absorbed(void **state)
{
    static const char *const kv[] = {"seq", "8", "tiles", "2x4", "mode", "mla", "rope", "true", "mla_absorb", "true",
                                     NULL};
    return setup_with(state, kv);
}

/* Mode mla by tiles: naive, the view reads v_up and ends at the context;
 * absorbed, it reads the latent cache c_kv as its values and ends at
 * context_latent (R wide), and says so. */
static void test_mla(void **state)
{
    fixture *f = *state;
    bool absorbed = f->app.trace.cfg.mla_absorb;
    assert_true(app_tiles_ok(&f->app));
    assert_true(app_key(&f->app, 'f', APP_MOD_SHIFT));
    assert_int_equal(f->app.view.mode, LESSON_VIEW_TILES);
    assert_true(app_key(&f->app, '[', 0)); /* the last key tile */
    build(f);
    app_tiles tv;
    char err[240];
    assert_int_equal(app_tiles_make(&f->app, &tv, err, sizeof err), 0);
    assert_int_equal(tv.latent, absorbed);
    assert_true(tv.max_diff < 1e-5f);
    assert_true(has_part(&f->dl, absorbed ? "the plain one (weights·c_kv) is" : "the plain one (weights·v) is"));
    assert_int_equal(has_part(&f->dl, "o = Σ e^(S − m)·c_kv / ℓ"), absorbed);
    app_view_slice ctx;
    assert_int_equal(app_view_make(&f->app.trace, absorbed ? "context_latent" : "context", 0, 0, &ctx), 0);
    assert_int_equal(ctx.slice.cols, absorbed ? f->app.trace.dims.kv_rank : f->app.trace.dims.k);
    for (int i = 0; i < 8; i++) {
        double sq = 0;
        for (int c = 0; c < ctx.slice.cols; c++) sq += (double)app_slice_at(&ctx.slice, i, c) * app_slice_at(&ctx.slice, i, c);
        assert_float_equal(tv.norm[i], sqrt(sq), 1e-5);
        assert_float_equal(tv.first[i], app_slice_at(&ctx.slice, i, 0), 1e-5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refused_without_tiles, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(test_view, setup_tiles, teardown),
        cmocka_unit_test_setup_teardown(test_steps, setup_tiles, teardown),
        cmocka_unit_test_setup_teardown(test_lesson_tile, setup_tiles, teardown),
        cmocka_unit_test_setup_teardown(test_thirty_two_tokens, setup_32, teardown),
        cmocka_unit_test_setup_teardown(test_beside_a_lesson, setup_32, teardown),
        cmocka_unit_test_setup_teardown(test_steps, setup_sink, teardown), /* the sink joins ℓ at the last tile */
        cmocka_unit_test_setup_teardown(test_learned_sinks, setup_sink, teardown),
        cmocka_unit_test_setup_teardown(test_render_tile, setup_tiles, teardown),
        cmocka_unit_test_setup_teardown(test_mla, setup_mla, teardown),
        cmocka_unit_test_setup_teardown(test_mla, setup_mla_absorbed, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
