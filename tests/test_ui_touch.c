/* test_ui_touch.c — a finger and a phone's screen, through the event handler
 * (app_touch_down, app_touch_move, app_touch_up) and the frame's command
 * list, built with a fake text measurer (no font, no display): a tap ticks a
 * choice and a drag scrolls the lesson without ticking one; a tap's tooltip
 * leaves with the finger; in portrait the lesson goes under the picture,
 * whose cells stay large enough to tap; the picker closes with ✕ and a tap
 * outside, scrolls under a finger and shows whole titles; presenter mode is
 * a chip; the page's help leaves out the desktop's keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app.h"
#include "catalog.h"
#include "draw.h"
#include "i18n.h"
#include "player.h"
#include "render.h"

#include "fake_measure.h"

/* a phone (390 × 844 CSS px, the page's bar taken off) and a tablet, at 3 and 2 device pixels a CSS px */
#define PHONE_W (390 * 3)
#define PHONE_H (800 * 3)
#define TABLET_W (820 * 2)
#define TABLET_H (1140 * 2)

static const draw_text_measure FAKE = {NULL, fake_width, fake_line, NULL};

typedef struct {
    app_state app;
    draw_list dl;
    int w, h;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char err[400], progress[600];
    attn_config c;
    app_i18n_init("en");
    attn_config_init(&c);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(progress, sizeof progress, "%s/ui-touch-none/progress.json", tmp ? tmp : "/tmp");
    app_player_init(&f->app.lesson, "en", progress);
    f->app.lesson.keep_progress = false;
    f->app.pixel_ratio = 3;
    f->w = PHONE_W, f->h = PHONE_H;
    draw_list_init(&f->dl, FAKE);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    draw_list_free(&f->dl);
    app_free(&f->app);
    free(f);
    return 0;
}

static void build(fixture *f)
{
    draw_frame(&f->app, &f->dl, &f->app.layout, f->w, f->h);
    draw_commit(&f->app, &f->app.layout);
    assert_false(f->dl.failed);
}

static const app_hit *hit_of(const app_state *app, app_action act, int arg)
{
    for (int i = app->layout.n_hits - 1; i >= 0; i--)
        if (app->layout.hits[i].action == act && app->layout.hits[i].arg == arg && app->layout.hits[i].r.w > 0)
            return &app->layout.hits[i];
    return NULL;
}

static void open_lesson(fixture *f, const char *name, int step)
{
    char dir[512], path[700], err[600];
    snprintf(path, sizeof path, "%s/%s", lesson_catalog_dir("en", dir, sizeof dir), name);
    if (app_lesson_open(&f->app, path, step, err, sizeof err)) fail_msg("%s", err);
}

/* A finger down at (x, y), moved by (dx, dy) in steps, lifted. */
static void swipe(fixture *f, int x, int y, int dx, int dy)
{
    app_touch_down(&f->app, x, y);
    for (int k = 1; k <= 4; k++) app_touch_move(&f->app, x + dx * k / 4, y + dy * k / 4);
    app_touch_up(&f->app);
}

/* A tap with a finger's jitter (a few pixels, under the slop). */
static void tap(fixture *f, int x, int y)
{
    app_touch_down(&f->app, x, y);
    app_touch_move(&f->app, x + 4, y - 3);
    app_touch_up(&f->app);
}

static void tap_hit(fixture *f, const app_hit *h)
{
    if (!h) fail_msg("nothing to tap");
    tap(f, h->r.x + h->r.w / 2, h->r.y + h->r.h / 2);
}

/* ---- the lesson --------------------------------------------------------- */

/* Lesson 4 step 1 on a phone: the panel under the picture, across the
 * screen; a drag over the panel scrolls it, a drag that starts on a choice
 * ticks nothing, a tap ticks it, Check grades it. */
static void a_tap_ticks_a_drag_scrolls(void **state)
{
    fixture *f = *state;
    app_player *p = &f->app.lesson;
    open_lesson(f, "04-causal-mask.md", 0);
    build(f);
    app_rect box = f->app.layout.lesson_box;
    assert_int_equal(box.x, 0);
    assert_int_equal(box.w, PHONE_W);
    assert_true(box.y >= PHONE_H / 3 && box.y + box.h == PHONE_H);
    assert_true(box.h >= PHONE_H * 2 / 5);
    assert_int_equal(f->app.height, box.y);
    const app_hit *more = hit_of(&f->app, APP_ACT_LESSON_MORE, 0); /* "▼ more below": a tap pages down */
    assert_non_null(more);
    int before = p->scroll;
    tap_hit(f, more);
    assert_true(p->scroll > before);
    build(f);
    int choice = 3; /* 只 */
    const app_hit *c = hit_of(&f->app, APP_ACT_LESSON_CHOICE, choice);
    int scrolls = p->content_h + p->dock_h;
    for (int i = 0; !c && i < 40; i++) { /* scrolled to it by dragging the panel up */
        assert_true(scrolls > 0);
        swipe(f, PHONE_W / 2, box.y + box.h * 3 / 4, 0, -box.h / 4);
        build(f);
        c = hit_of(&f->app, APP_ACT_LESSON_CHOICE, choice);
    }
    assert_non_null(c);
    /* a drag from the choice: scrolls (or not, at the end), ticks nothing */
    int cy = c->r.y + c->r.h / 2;
    swipe(f, c->r.x + c->r.w / 2, cy, 0, 30 * 3);
    assert_false(p->answers[0].picked[choice]);
    build(f);
    swipe(f, PHONE_W / 2, cy, 0, -30 * 3); /* and back */
    build(f);
    c = hit_of(&f->app, APP_ACT_LESSON_CHOICE, choice);
    assert_non_null(c);
    tap_hit(f, c);
    assert_true(p->answers[0].picked[choice]);
    build(f);
    tap_hit(f, hit_of(&f->app, APP_ACT_LESSON_CHOICE, choice));
    assert_false(p->answers[0].picked[choice]); /* a second tap unticks it */
    for (int k = 3; k < 6; k++) {
        build(f);
        tap_hit(f, hit_of(&f->app, APP_ACT_LESSON_CHOICE, k));
    }
    build(f);
    const app_hit *check = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0);
    for (int i = 0; !check && i < 40; i++) {
        swipe(f, PHONE_W / 2, box.y + box.h * 3 / 4, 0, -box.h / 4);
        build(f);
        check = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0);
    }
    tap_hit(f, check);
    assert_true(p->answers[0].graded);
    assert_true(p->answers[0].grade.right);
}

/* Step 2's cell quiz on a phone and a tablet in portrait: the picture above
 * the lesson, every row and column labelled, cells at least 32 CSS px; a tap
 * on a cell picks it, and its explanation leaves when the finger lifts. */
static void portrait_keeps_the_picture_readable(void **state)
{
    fixture *f = *state;
    open_lesson(f, "04-causal-mask.md", 1);
    for (int k = 0; k < 2; k++) {
        f->w = k ? TABLET_W : PHONE_W, f->h = k ? TABLET_H : PHONE_H;
        f->app.pixel_ratio = k ? 2 : 3;
        build(f);
        assert_true(f->app.layout.n_areas >= 1);
        const app_heat_area *a = &f->app.layout.areas[0];
        app_rect box = f->app.layout.lesson_box;
        assert_int_equal(a->rows, 6);
        assert_int_equal(box.w, f->w);
        assert_true(a->r.y + a->r.h <= box.y);
        if (a->r.w / a->cols < 32 * f->app.pixel_ratio || a->r.h / a->rows < 32 * f->app.pixel_ratio)
            fail_msg("%d × %d: cells of %d × %d px", f->w, f->h, a->r.w / a->cols, a->r.h / a->rows);
        assert_int_equal(a->row_label_step, 1);
        assert_int_equal(a->col_label_step, 1);
    }
    const app_heat_area *a = &f->app.layout.areas[0];
    int x = a->r.x + a->r.w * 5 / 12, y = a->r.y + a->r.h / 12; /* cell (0, 2) */
    app_touch_down(&f->app, x, y);
    assert_true(f->app.hover_area >= 0); /* the cell's explanation, while the finger is down */
    app_touch_up(&f->app);
    assert_int_equal(f->app.hover_area, -1);
    assert_int_equal(f->app.hover_hit, -1);
    const app_quiz_answer *ans = &f->app.lesson.answers[f->app.lesson.cell_quiz];
    assert_non_null(ans->cells);
    assert_int_equal(ans->cells[0 * ans->cols + 2], 1);
    /* landscape: the panel on the right, as on the desktop */
    f->w = 1280, f->h = 800, f->app.pixel_ratio = 1;
    build(f);
    assert_int_equal(f->app.layout.lesson_box.y, 0);
    assert_int_equal(f->app.layout.lesson_box.x, f->app.width);
}

/* A tooltip shown under a finger leaves when it lifts. */
static void a_tooltip_leaves_with_the_finger(void **state)
{
    fixture *f = *state;
    f->w = TABLET_W, f->h = TABLET_H, f->app.pixel_ratio = 2;
    build(f);
    const app_hit *tip = NULL;
    for (int i = 0; i < f->app.layout.n_hits && !tip; i++)
        if (f->app.layout.hits[i].tip && f->app.layout.hits[i].action == APP_ACT_MENU) tip = &f->app.layout.hits[i];
    assert_non_null(tip);
    app_touch_down(&f->app, tip->r.x + 2, tip->r.y + 2);
    assert_true(f->app.hover_hit >= 0);
    app_touch_up(&f->app);
    assert_int_equal(f->app.hover_hit, -1);
    assert_true(f->app.menu_open); /* and the tap did what a click does */
}

/* ---- the picker --------------------------------------------------------- */

/* The texts drawn inside r, joined by spaces in the order drawn. */
static void texts_in(const draw_list *dl, app_rect r, char *out, size_t size)
{
    out[0] = '\0';
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && app_rect_contains(r, c->r.x, c->r.y)) {
            size_t n = strlen(out);
            snprintf(out + n, size - n, "%s ", draw_cmd_text(dl, c));
        }
}

static void picker_on_a_phone(void **state)
{
    fixture *f = *state;
    app_player *p = &f->app.lesson;
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    p->sel = 0;
    build(f);
    /* every title shown whole: wrapped, not cut */
    char all[4000];
    int rows = 0;
    for (int i = 0; i < p->catalog.n; i++) {
        const app_hit *h = hit_of(&f->app, APP_ACT_PICK, i);
        if (!h) continue;
        rows++;
        texts_in(&f->dl, h->r, all, sizeof all);
        char title[300], *save = NULL;
        snprintf(title, sizeof title, "%s", p->catalog.items[i].title);
        for (char *w = strtok_r(title, " ", &save); w; w = strtok_r(NULL, " ", &save))
            if (!strstr(all, w)) fail_msg("lesson %d's title \"%s\": \"%s\" is not in its row: %s", i,
                                          p->catalog.items[i].title, w, all);
    }
    assert_true(rows >= 3);
    /* a drag up the list scrolls it and opens nothing */
    app_rect list = f->app.layout.picker_list;
    assert_true(list.h > 0);
    swipe(f, list.x + list.w / 2, list.y + list.h * 3 / 4, 0, -list.h / 2);
    assert_true(p->picker);
    assert_false(p->open);
    build(f);
    assert_true(p->picker_first > 0);
    /* ✕ closes it */
    tap_hit(f, hit_of(&f->app, APP_ACT_PICKER, 0));
    assert_false(p->picker);
    /* and a tap outside it */
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    build(f);
    app_rect box = f->app.layout.picker_box;
    assert_true(box.x >= 3 * 10); /* room outside it for a finger */
    tap(f, box.x / 2 - 4, PHONE_H / 2);
    assert_false(p->picker);
    assert_false(p->open);
    /* a tap on a row opens that lesson */
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    build(f);
    int first = f->app.layout.picker_first;
    tap_hit(f, hit_of(&f->app, APP_ACT_PICK, first));
    assert_true(p->open);
    assert_string_equal(p->name, p->catalog.items[first].name);
}

/* ---- presenter mode and the help ----------------------------------------- */

static bool text_drawn(const draw_list *dl, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(dl, c), s)) return true;
    return false;
}

static int texts_equal(const draw_list *dl, const char *s)
{
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        n += c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(dl, c), s);
    return n;
}

/* Presenter mode is a chip (in the "⋯" menu when the row is full). */
static void presenter_mode_is_a_chip(void **state)
{
    fixture *f = *state;
    f->w = 1280, f->h = 800, f->app.pixel_ratio = 1;
    build(f);
    if (!hit_of(&f->app, APP_ACT_PRESENT, 0)) {
        assert_true(app_do(&f->app, APP_ACT_MENU, 0));
        build(f);
    }
    const app_hit *h = hit_of(&f->app, APP_ACT_PRESENT, 0);
    assert_non_null(h);
    app_mouse_down(&f->app, h->r.x + h->r.w / 2, h->r.y + h->r.h / 2);
    assert_true(f->app.present);
    assert_true(f->app.req.fullscreen);
}

/* The page's help leaves out q and --memory-gib; the desktop's has them. */
static void the_page_help_has_no_desktop_keys(void **state)
{
    fixture *f = *state;
    f->w = 1920, f->h = 1200, f->app.pixel_ratio = 1;
    f->app.help = true;
    build(f);
    int q = texts_equal(&f->dl, "q"); /* the help's key, and the stage q in the stage list */
    assert_true(q >= 1);
    assert_true(text_drawn(&f->dl, "--memory-gib"));
    f->app.web = true;
    build(f);
    assert_int_equal(texts_equal(&f->dl, "q"), q - 1);
    assert_false(text_drawn(&f->dl, "--memory-gib"));
    assert_true(text_drawn(&f->dl, "memory: this trace"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_tap_ticks_a_drag_scrolls, setup, teardown),
        cmocka_unit_test_setup_teardown(portrait_keeps_the_picture_readable, setup, teardown),
        cmocka_unit_test_setup_teardown(a_tooltip_leaves_with_the_finger, setup, teardown),
        cmocka_unit_test_setup_teardown(picker_on_a_phone, setup, teardown),
        cmocka_unit_test_setup_teardown(presenter_mode_is_a_chip, setup, teardown),
        cmocka_unit_test_setup_teardown(the_page_help_has_no_desktop_keys, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
