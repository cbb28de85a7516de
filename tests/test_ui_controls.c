/* test_ui_controls.c — the controls a class uses, through the event handler
 * (app_key, app_mouse_down, app_wheel, app_do) and the frame's
 * command list, built with a fake text measurer (no font, no display):
 * Esc never quits and leaves the lesson, q asks with a lesson open, Check
 * keeps a number field focused, a quiz holds still under the pointer, the
 * picker numbers and scrolls its lessons, opening a lesson says so in the
 * first frame, and the token editor keeps its caret in view. */
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
#include "draw.h"
#include "engine/base/utf8.h"
#include "engine/formats/safetensors.h"
#include "engine/trace/stages.h"
#include "i18n.h"
#include "jobs_thread.h"
#include "keys.h"
#include "player.h"
#include "render.h"

#include "fake_measure.h"

#define W 1280
#define H 800

static const draw_text_measure FAKE = {NULL, fake_width, fake_line, NULL};

typedef struct {
    app_state app;
    draw_list dl;
    char lesson[600]; /* a lesson file the test wrote, removed at teardown */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    char err[400];
    attn_config c;
    app_i18n_init("en");
    attn_config_init(&c);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    /* a progress file of its own that does not exist: lessons open on step 1, whatever the user's progress says */
    char progress[600];
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(progress, sizeof progress, "%s/ui-controls-none/progress.json", tmp ? tmp : "/tmp");
    app_player_init(&f->app.lesson, "en", progress);
    f->app.lesson.keep_progress = false;
    draw_list_init(&f->dl, FAKE);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    draw_list_free(&f->dl);
    app_free(&f->app);
    if (f->lesson[0]) remove(f->lesson);
    free(f);
    return 0;
}

/* A frame of the app as it is, its layout handed back as sdl_render does. */
static void build(fixture *f)
{
    draw_frame(&f->app, &f->dl, &f->app.layout, W, H);
    draw_commit(&f->app, &f->app.layout);
    assert_false(f->dl.failed);
}

/* A text command holding s, or NULL. */
static const draw_cmd *text_with(const draw_list *dl, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(dl, c), s)) return c;
    return NULL;
}

static const app_hit *hit_of(const app_state *app, app_action act, int arg)
{
    for (int i = app->layout.n_hits - 1; i >= 0; i--)
        if (app->layout.hits[i].action == act && app->layout.hits[i].arg == arg && app->layout.hits[i].r.w > 0)
            return &app->layout.hits[i];
    return NULL;
}

static void press(fixture *f, app_action act, int arg)
{
    const app_hit *h = hit_of(&f->app, act, arg);
    if (!h) fail_msg("no hit for action %d arg %d", act, arg);
    app_mouse_down(&f->app, h->r.x + h->r.w / 2, h->r.y + h->r.h / 2);
}

static void open_shipped(fixture *f, const char *name)
{
    char dir[512], path[700], err[600];
    snprintf(path, sizeof path, "%s/%s", lesson_catalog_dir("en", dir, sizeof dir), name);
    if (app_lesson_open(&f->app, path, 0, err, sizeof err)) fail_msg("%s", err);
}

/* Writes a one-step lesson with body under its attnlab block and opens it. */
static void open_written(fixture *f, const char *body)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char err[600];
    snprintf(f->lesson, sizeof f->lesson, "%s/controls-lesson-%d.md", tmp ? tmp : "/tmp", (int)getpid());
    FILE *fp = fopen(f->lesson, "w");
    assert_non_null(fp);
    fprintf(fp, "# Controls\n\n## One\n\n```attnlab\nstage = weights\n```\n\n%s", body);
    fclose(fp);
    if (app_lesson_open(&f->app, f->lesson, 0, err, sizeof err)) fail_msg("%s", err);
}

/* ---- Esc and q ---------------------------------------------------------- */

/* Esc leaves what is innermost (the help, then the lesson) and never quits. */
static void esc_leaves_the_lesson_and_never_quits(void **state)
{
    fixture *f = *state;
    open_shipped(f, "04-causal-mask.md");
    assert_true(f->app.lesson.open);
    app_key(&f->app, '?', 0);
    assert_true(f->app.help);
    app_key(&f->app, APP_KEY_ESCAPE, 0);
    assert_false(f->app.help);
    assert_true(f->app.lesson.open);
    if (f->app.view.row >= 0) { /* the step's bar chart is inner to the lesson: Esc closes it first */
        app_key(&f->app, APP_KEY_ESCAPE, 0);
        assert_int_equal(f->app.view.row, -1);
        assert_true(f->app.lesson.open);
    }
    app_key(&f->app, APP_KEY_ESCAPE, 0);
    assert_false(f->app.lesson.open);
    assert_false(f->app.req.quit);
    build(f);
    assert_int_equal(f->app.layout.width, W); /* the panel is gone: the picture has the window */
    for (int i = 0; i < 3; i++) app_key(&f->app, APP_KEY_ESCAPE, 0);
    assert_false(f->app.req.quit);
    /* the picker: Esc closes it, and with it open nothing quits either */
    app_key(&f->app, 'l', 0);
    assert_true(f->app.lesson.picker);
    app_key(&f->app, APP_KEY_ESCAPE, 0);
    assert_false(f->app.lesson.picker);
    assert_false(f->app.req.quit);
}

/* q with a lesson open asks; q again or Enter quits, Esc (or Stay) stays. */
static void q_in_a_lesson_asks(void **state)
{
    fixture *f = *state;
    open_shipped(f, "04-causal-mask.md");
    app_key(&f->app, 'q', 0);
    assert_true(f->app.quit_confirm);
    assert_false(f->app.req.quit);
    build(f);
    assert_non_null(text_with(&f->dl, "Quit attnlab?"));
    assert_non_null(text_with(&f->dl, "q again / Enter to quit, Esc to stay"));
    assert_non_null(hit_of(&f->app, APP_ACT_QUIT, 0));
    /* other keys wait; Esc stays, in the lesson */
    app_key(&f->app, APP_KEY_SPACE, 0);
    assert_int_equal(f->app.lesson.step, 0);
    app_key(&f->app, APP_KEY_ESCAPE, 0);
    assert_false(f->app.quit_confirm);
    assert_true(f->app.lesson.open);
    assert_false(f->app.req.quit);
    build(f);
    assert_null(text_with(&f->dl, "Quit attnlab?"));
    /* the Stay button stays, the Quit button quits */
    app_key(&f->app, 'q', 0);
    build(f);
    press(f, APP_ACT_BACK, 0);
    assert_false(f->app.quit_confirm);
    assert_false(f->app.req.quit);
    app_key(&f->app, 'q', 0);
    app_key(&f->app, 'q', 0);
    assert_true(f->app.req.quit);
    f->app.req.quit = false;
    app_key(&f->app, 'q', 0);
    app_key(&f->app, APP_KEY_RETURN, 0);
    assert_true(f->app.req.quit);
    /* without a lesson, q quits at once */
    f->app.req.quit = false;
    for (int i = 0; i < 3; i++) app_key(&f->app, APP_KEY_ESCAPE, 0); /* the bar chart, the lesson */
    assert_false(f->app.lesson.open);
    assert_false(f->app.req.quit);
    app_key(&f->app, 'q', 0);
    assert_false(f->app.quit_confirm);
    assert_true(f->app.req.quit);
}

/* ---- quizzes ------------------------------------------------------------ */

/* After Check the number field keeps the keys: Backspace edits the answer
 * instead of going back a step, by Enter and by the Check button. */
static void focus_stays_after_check(void **state)
{
    fixture *f = *state;
    open_shipped(f, "01-self-attention.md");
    app_player *p = &f->app.lesson;
    int q = -1;
    while (q < 0) { /* the first step with a number quiz */
        for (int i = 0; i < p->ls.steps[p->step].n_quizzes && q < 0; i++)
            if (p->ls.steps[p->step].quizzes[i].kind == LESSON_QUIZ_NUMBER) q = i;
        if (q < 0) assert_int_equal(app_lesson_go(&f->app, p->step + 1), 0);
    }
    int step = p->step;
    build(f);
    p->scroll = 100000; /* the quiz is at the step's end */
    build(f);
    press(f, APP_ACT_LESSON_FIELD, q);
    assert_int_equal(p->focus, q);
    app_text(&f->app, "12");
    app_key(&f->app, APP_KEY_RETURN, 0); /* Check by Enter */
    assert_true(p->answers[q].graded);
    assert_int_equal(p->focus, q);
    app_key(&f->app, APP_KEY_BACKSPACE, 0);
    assert_int_equal(p->step, step);
    assert_string_equal(p->answers[q].text, "1");
    build(f);
    press(f, APP_ACT_LESSON_CHECK, q); /* Check by the button */
    assert_true(p->answers[q].graded);
    assert_int_equal(p->focus, q);
    app_key(&f->app, APP_KEY_BACKSPACE, 0);
    assert_int_equal(p->step, step);
    assert_string_equal(p->answers[q].text, "");
    app_key(&f->app, APP_KEY_ESCAPE, 0); /* Esc leaves the field, not the lesson */
    assert_int_equal(p->focus, -1);
    assert_true(p->open);
}

/* Choosing another answer after a wrong Check moves neither the choices nor
 * Check, and the old "Not this one" goes. */
static void quiz_holds_still_under_the_pointer(void **state)
{
    fixture *f = *state;
    open_written(f, "Which?\n\n- [ ] first\n  - wrongfirst because of many words that wrap over several lines of "
                    "the panel, long enough to push anything below it down\n- [x] second\n  - rightsecond\n"
                    "- [ ] third\n  - wrongthird\n");
    build(f);
    app_rect check0 = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0)->r;
    app_rect third0 = hit_of(&f->app, APP_ACT_LESSON_CHOICE, 2)->r;
    press(f, APP_ACT_LESSON_CHOICE, 0 << 8 | 0);
    build(f);
    press(f, APP_ACT_LESSON_CHECK, 0);
    build(f);
    assert_non_null(text_with(&f->dl, "again.")); /* "Not this one. Try again.", a word a command */
    assert_non_null(text_with(&f->dl, "wrongfirst"));
    app_rect check1 = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0)->r;
    assert_memory_equal(&check0, &check1, sizeof check0);
    assert_memory_equal(&third0, &hit_of(&f->app, APP_ACT_LESSON_CHOICE, 2)->r, sizeof third0);
    press(f, APP_ACT_LESSON_CHOICE, 0 << 8 | 2); /* another answer */
    build(f);
    app_rect check2 = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0)->r;
    assert_memory_equal(&check0, &check2, sizeof check0);
    assert_memory_equal(&third0, &hit_of(&f->app, APP_ACT_LESSON_CHOICE, 2)->r, sizeof third0);
    assert_null(text_with(&f->dl, "again."));
    assert_true(f->app.lesson.answers[0].picked[2]);
    assert_false(f->app.lesson.answers[0].picked[0]);
}

/* A quiz after more text than the panel holds: docked under the text, Check
 * on screen from the start; pressed, the verdict shows under it (it used to
 * appear below the fold, unseen), Check staying on screen; the text's scroll
 * is the reader's. */
static void quiz_feedback_scrolls_into_view(void **state)
{
    fixture *f = *state;
    char body[8192] = "";
    for (int i = 0; i < 14; i++)
        strcat(body, "A paragraph that says enough to take up a few lines of the lesson panel, before the question. \n\n");
    strcat(body, "Which?\n\n- [ ] first\n  - wrongfirst: a long explanation of why not, over a few lines of the "
                 "panel, so that the feedback is taller than the room left under Check\n- [x] second\n"
                 "  - rightsecond\n");
    open_written(f, body);
    build(f);
    const app_hit *next = hit_of(&f->app, APP_ACT_LESSON_NEXT, 0);
    int bottom = next ? next->r.y : H; /* the panel's body ends above its buttons */
    assert_true(f->app.layout.lesson_dock.h > 0);
    assert_true(f->app.layout.lesson_scroll_max > 0);
    const app_hit *check = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0);
    assert_non_null(check);
    assert_true(check->r.h >= draw_line_h(&f->dl));
    int dock_y = f->app.layout.lesson_dock.y;
    press(f, APP_ACT_LESSON_CHOICE, 0 << 8 | 0);
    build(f);
    press(f, APP_ACT_LESSON_CHECK, 0);
    build(f);
    const draw_cmd *verdict = text_with(&f->dl, "again.");
    assert_non_null(verdict);
    if (verdict->r.y + verdict->r.h > bottom) fail_msg("the verdict at y %d is below the panel's body (%d)", verdict->r.y, bottom);
    assert_true(f->app.layout.lesson_dock.y < dock_y); /* the dock grew upwards, over the text */
    check = hit_of(&f->app, APP_ACT_LESSON_CHECK, 0);
    assert_non_null(check); /* Check still on screen, whole */
    assert_true(check->r.h >= draw_line_h(&f->dl));
    f->app.lesson.scroll = 20; /* the reader scrolls the text: it stays */
    build(f);
    build(f);
    assert_int_equal(f->app.lesson.scroll, 20);
    /* the wheel over the text scrolls the text; over the dock too while the dock has nothing to scroll */
    app_rect dock = f->app.layout.lesson_dock, view = f->app.layout.lesson_view;
    app_mouse_move(&f->app, view.x + view.w / 2, view.y + 4);
    assert_true(app_wheel(&f->app, -1));
    build(f);
    assert_true(f->app.lesson.scroll > 20);
    int text = f->app.lesson.scroll;
    if (f->app.layout.dock_scroll_max == 0) {
        app_mouse_move(&f->app, dock.x + dock.w / 2, dock.y + dock.h / 2);
        assert_true(app_wheel(&f->app, 1));
        build(f);
        assert_true(f->app.lesson.scroll < text);
    }
}

/* ---- the picker --------------------------------------------------------- */

/* The lesson numbered as its file, or NULL when no row shows it. */
static const app_hit *picker_row(fixture *f, int i)
{
    return hit_of(&f->app, APP_ACT_PICK, i);
}

static void picker_numbers_and_scrolls(void **state)
{
    fixture *f = *state;
    app_player *p = &f->app.lesson;
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    int n = p->catalog.n;
    assert_true(n >= 17);
    p->sel = 0;
    build(f);
    /* numbered as the files are */
    char num[16];
    for (int i = 0; i < n; i++) {
        const app_hit *h = picker_row(f, i);
        if (!h) continue;
        app_player_lesson_number(p->catalog.items[i].name, num, sizeof num);
        assert_true(num[0]);
        bool found = false;
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
            found |= c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, c), num) && c->r.y >= h->r.y &&
                     c->r.y < h->r.y + h->r.h;
        if (!found) fail_msg("lesson %s has no number %s in its row", p->catalog.items[i].name, num);
    }
    assert_string_equal(app_player_lesson_number(p->catalog.items[n - 1].name, num, sizeof num), "99"); /* glossary last */
    /* at 1280 × 800 not all fit: a cue says how many are below */
    int shown = 0;
    for (int i = 0; i < n; i++) shown += picker_row(f, i) != NULL;
    assert_true(shown < n);
    char cue[32];
    snprintf(cue, sizeof cue, "▼ %d more", n - shown);
    assert_non_null(text_with(&f->dl, cue));
    assert_null(text_with(&f->dl, "▲"));
    /* a click on the cue pages down, and on "▲ N more" back up: the picker opens nothing */
    const app_hit *down = NULL;
    for (int i = f->app.layout.n_hits - 1; i >= 0 && !down; i--)
        if (f->app.layout.hits[i].action == APP_ACT_PICK_SHOW) down = &f->app.layout.hits[i];
    assert_non_null(down);
    press(f, APP_ACT_PICK_SHOW, down->arg);
    build(f);
    assert_true(p->picker);
    assert_false(p->open);
    assert_true(p->sel >= shown);
    assert_non_null(picker_row(f, p->sel));
    assert_null(picker_row(f, 0));
    assert_non_null(text_with(&f->dl, "▲"));
    const app_hit *up = hit_of(&f->app, APP_ACT_PICK_SHOW, 0);
    assert_non_null(up);
    press(f, APP_ACT_PICK_SHOW, 0);
    build(f);
    assert_int_equal(p->sel, 0);
    assert_non_null(picker_row(f, 0));
    assert_null(text_with(&f->dl, "▲"));
    /* Down to the last: every lesson is reached, the selection always on screen */
    for (int i = 1; i < n; i++) {
        app_key(&f->app, APP_KEY_DOWN, 0);
        build(f);
        assert_int_equal(p->sel, i);
        assert_non_null(picker_row(f, i));
    }
    assert_non_null(text_with(&f->dl, "▲"));
    assert_null(text_with(&f->dl, "▼"));
    /* the wheel scrolls back up; the selection moves along to stay on screen */
    f->app.mouse_x = W / 2, f->app.mouse_y = H / 2;
    assert_true(app_wheel(&f->app, 3));
    build(f);
    assert_non_null(picker_row(f, p->sel));
    assert_true(p->sel < n - 1);
    assert_non_null(text_with(&f->dl, "▼"));
    assert_true(app_wheel(&f->app, 100));
    build(f);
    assert_non_null(picker_row(f, 0));
    assert_non_null(picker_row(f, p->sel));
    assert_null(text_with(&f->dl, "▲"));
    /* Enter opens the one selected, which is on screen */
    int sel = p->sel;
    app_key(&f->app, APP_KEY_RETURN, 0);
    assert_true(p->open);
    assert_string_equal(p->name, p->catalog.items[sel].name);
}

/* ---- opening ------------------------------------------------------------ */

static void sleep_ms(int ms) { nanosleep(&(struct timespec){0, ms * 1000000L}, NULL); }

/* In the window (async), picking a lesson draws "opening …" in the very next
 * frame, before any of the reading; the notice stays while it is read and
 * checked on a thread of its own (the window's thread reads none of it: on the
 * old main it did, for up to 1.2 s) and while its first step is computed, and
 * goes once it is shown. */
static void opening_says_so_in_the_first_frame(void **state)
{
    fixture *f = *state;
    app_player *p = &f->app.lesson;
    f->app.jobs = f->app.lesson.jobs = posix_jobs(); /* the window's threads */
    f->app.async = true;
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    int at = -1;
    for (int i = 0; i < p->catalog.n; i++)
        if (!strcmp(p->catalog.items[i].name, "12-trained-heads.md")) at = i;
    assert_true(at >= 0);
    app_do(&f->app, APP_ACT_PICK, at);
    assert_false(p->open); /* nothing read yet */
    build(f);
    const draw_cmd *c = text_with(&f->dl, "opening lesson 12");
    if (!c) fail_msg("no 'opening lesson 12' in the frame after the pick");
    assert_true(app_pending(&f->app)); /* the window comes back for it without an event */
    assert_true(app_poll(&f->app)); /* now it is read, on a thread of its own */
    assert_false(p->open);
    assert_true(p->picker); /* shown until the lesson is read */
    assert_true(app_pending(&f->app));
    bool read = false;
    for (int i = 0; i < 5000 && app_pending(&f->app); i++) {
        build(f);
        assert_non_null(text_with(&f->dl, "opening lesson 12"));
        app_poll(&f->app);
        if (p->open && !read) { /* read: its step starts on the worker */
            read = true;
            assert_false(p->picker);
            assert_non_null(f->app.job);
        }
        sleep_ms(2);
    }
    assert_true(read);
    assert_null(f->app.job);
    app_poll(&f->app);
    build(f);
    assert_null(text_with(&f->dl, "opening"));
    assert_false(app_pending(&f->app));
    assert_true(f->app.model != NULL);
    assert_int_equal(p->step, 0);
}

/* o in the window: the event handler returns at once, the shipped models
 * being listed on a thread of their own under "opening the next model …";
 * once they are, the notice names the model ("opening model …"), which is
 * read and computed on the worker (the window's thread reads none of its
 * files: the app's model changes only when its first trace is installed),
 * then its layer 0's weights shown. */
static void next_model_says_so_and_computes_on_the_worker(void **state)
{
    fixture *f = *state;
    f->app.jobs = f->app.lesson.jobs = posix_jobs(); /* the window's threads */
    f->app.async = true;
    assert_true(app_do(&f->app, APP_ACT_MODEL_NEXT, 0));
    assert_null(f->app.model);               /* nothing read yet ... */
    assert_non_null(f->app.opening.models);  /* ... the models' folder is listed on a thread */
    assert_null(f->app.job);
    assert_true(app_pending(&f->app));
    build(f);
    assert_non_null(text_with(&f->dl, "opening the next model"));
    for (int i = 0; i < 3000 && !f->app.job; i++) { /* the listing, then the worker */
        app_poll(&f->app);
        if (!f->app.job) sleep_ms(2);
    }
    assert_non_null(f->app.job);
    assert_null(f->app.opening.models); /* taken in */
    for (int i = 0; i < 3000 && f->app.job; i++) {
        build(f);
        if (f->app.job) assert_non_null(text_with(&f->dl, "opening model "));
        if (f->app.job) assert_null(f->app.model); /* the worker's, until installed */
        app_poll(&f->app);
        sleep_ms(2);
    }
    app_poll(&f->app);
    build(f);
    assert_null(text_with(&f->dl, "opening"));
    assert_false(app_pending(&f->app));
    assert_non_null(f->app.model);
    assert_string_equal(app_tensor(&f->app)->name, "layers.0.weights");
    assert_true(attn_trace_is_model(&f->app.trace));
}

/* l in the window: the picker opens at once, saying "Reading the lessons …"
 * while the course folder (every lesson in it parsed) is read on a thread of
 * its own; app_poll takes the list in. Enter pressed before that opens the
 * selected lesson once the list is read. */
static void picker_reads_its_list_on_a_thread(void **state)
{
    fixture *f = *state;
    app_player *p = &f->app.lesson;
    f->app.jobs = f->app.lesson.jobs = posix_jobs(); /* the window's threads */
    f->app.async = true;
    p->async_read = true;
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    assert_true(p->picker);
    assert_true(app_player_listing(p)); /* taken in only by a poll: the handler returned first */
    assert_false(p->have_catalog);
    assert_true(app_pending(&f->app));
    build(f);
    assert_non_null(text_with(&f->dl, "Reading the lessons"));
    assert_null(text_with(&f->dl, "No lessons found"));
    app_key(&f->app, APP_KEY_RETURN, 0);
    assert_true(p->pick_listed);
    for (int i = 0; i < 5000 && app_player_listing(p); i++) {
        app_poll(&f->app);
        if (app_player_listing(p)) sleep_ms(2);
    }
    assert_false(app_player_listing(p));
    assert_true(p->have_catalog);
    assert_true(p->catalog.n >= 10);
    assert_true(p->sel >= 0 && p->sel < p->catalog.n);
    app_poll(&f->app);
    assert_false(p->pick_listed);
    assert_true(f->app.opening.pending); /* the lesson selected, opening */
    assert_int_equal(f->app.opening.act, APP_ACT_PICK);
    assert_int_equal(f->app.opening.arg, p->sel);
    build(f);
    assert_null(text_with(&f->dl, "Reading the lessons"));
    assert_non_null(text_with(&f->dl, "opening lesson"));
}

/* m on a trained model in the window: its next variant read and computed on
 * the worker (on the old main it was read and computed here, after waiting for
 * the worker, the longest of the window's freezes), the view staying on the
 * stage shown. A second m asked meanwhile steps from the variant asked, not
 * from the one shown. */
static void next_variant_computes_on_the_worker(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_set(&f->app, "model", "tang"), 0); /* no window: here and now */
    assert_string_equal(f->app.model->name, "tang");
    assert_true(f->app.n_variants == 4); /* tang-mha, tang, tang-mqa, tang-mla */
    app_set_stage(&f->app, "layers.1.weights");
    f->app.jobs = f->app.lesson.jobs = posix_jobs(); /* the window's threads */
    f->app.async = true;
    assert_true(app_do(&f->app, APP_ACT_MODE, 0));
    assert_non_null(f->app.job);
    const char *first = app_settings(&f->app)->model;
    assert_string_not_equal(first, "tang");
    char asked[64];
    snprintf(asked, sizeof asked, "%s", first);
    assert_string_equal(f->app.model->name, "tang"); /* the one shown, until the variant's trace is in */
    assert_true(app_do(&f->app, APP_ACT_MODE, 0));
    const char *second = app_settings(&f->app)->model;
    assert_string_not_equal(second, asked);
    assert_string_not_equal(second, "tang");
    snprintf(asked, sizeof asked, "%s", second);
    for (int i = 0; i < 3000 && f->app.job; i++) {
        if (f->app.job) assert_string_equal(f->app.model->name, "tang");
        app_poll(&f->app);
        sleep_ms(2);
    }
    assert_null(f->app.job);
    assert_string_equal(f->app.model->name, asked);
    assert_string_equal(app_tensor(&f->app)->name, "layers.1.weights");
    assert_true(attn_trace_is_model(&f->app.trace));
    assert_false(f->app.status_error);
}

/* ---- the token editor --------------------------------------------------- */

/* The frame's DRAW_ACCENT frame of thickness 1 that holds (x, y): the field. */
static const draw_cmd *field_at(const draw_list *dl, int x, int y)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_FRAME && c->t == 1 && c->color == DRAW_ACCENT && app_rect_contains(c->r, x, y)) return c;
    return NULL;
}

static bool inside(app_rect in, app_rect out)
{
    return in.x >= out.x && in.y >= out.y && in.x + in.w <= out.x + out.w && in.y + in.h <= out.y + out.h;
}

/* The caret: the last white vertical line of the frame. */
static const draw_cmd *caret(const draw_list *dl)
{
    const draw_cmd *last = NULL;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_LINE && c->color == DRAW_WHITE && c->r.w == 2 && c->r.h > 2) last = c;
    return last;
}

static void check_caret(fixture *f)
{
    build(f);
    const draw_cmd *c = caret(&f->dl);
    assert_non_null(c);
    const draw_cmd *box = field_at(&f->dl, c->r.x, c->r.y);
    if (!box) fail_msg("the caret at (%d, %d) is outside the edit field", c->r.x, c->r.y);
    assert_true(inside(c->r, box->r));
    assert_true(inside(f->app.layout.edit_rect, (app_rect){0, 0, W, H}));
    assert_true(app_rect_contains(box->r, f->app.layout.edit_rect.x, f->app.layout.edit_rect.y + 1));
    /* every line of text drawn in the field stays inside it */
    for (const draw_cmd *t = NULL; (t = draw_list_next(&f->dl, t));)
        if (t->kind == DRAW_CMD_TEXT && app_rect_contains(box->r, t->r.x, t->r.y) && !inside(t->r, box->r))
            fail_msg("'%.40s…' (%d px wide) runs out of the edit field", draw_cmd_text(&f->dl, t), t->r.w);
}

static void editor_keeps_the_caret_in_view(void **state)
{
    fixture *f = *state;
    char text[600];
    int n = 0;
    while (n < 522) n += snprintf(text + n, sizeof text - (size_t)n, "tok%d ", n % 97); /* words to wrap at */
    text[522] = '\0';
    assert_int_equal((int)strlen(text), 522);
    app_do(&f->app, APP_ACT_EDIT, 0);
    app_key(&f->app, 'u', APP_MOD_CTRL);
    app_text(&f->app, text);
    assert_int_equal(f->app.edit.cursor, 522);
    check_caret(f); /* at the end */
    app_key(&f->app, APP_KEY_HOME, 0);
    check_caret(f); /* at the start */
    for (int i = 0; i < 260; i++) app_key(&f->app, APP_KEY_RIGHT, 0);
    check_caret(f); /* in the middle */
    app_compose(&f->app, "中文");
    check_caret(f); /* an IME composition at the caret */
    app_compose(&f->app, "");
    /* one long word, no space to break at: it wraps between characters */
    app_key(&f->app, 'u', APP_MOD_CTRL);
    memset(text, 'x', 522);
    text[522] = '\0';
    app_text(&f->app, text);
    check_caret(f);
    app_key(&f->app, APP_KEY_ESCAPE, 0);
    assert_false(f->app.edit.open);
    assert_false(f->app.req.quit);
}

/* The editor's dialog in the frame just built: the panel filled right after
 * the dimming of the whole window; every command after it is the editor's. */
static const draw_cmd *edit_dialog(const draw_list *dl, int w, int h)
{
    bool dimmed = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) {
        if (c->kind == DRAW_CMD_RECT && c->color == 0x90000000u && c->r.w == w && c->r.h == h) dimmed = true;
        else if (dimmed && c->kind == DRAW_CMD_RECT && c->color == DRAW_PANEL) return c;
    }
    return NULL;
}

/* Every command the editor draws (fields, text, caret, scroll bar) stays
 * inside its dialog, whatever the text size (+ up to 3×), the window (down
 * to its smallest, 640 × 400), one field or two, and a short or a long text
 * (issue 21: the fields ran out of the dialog after +). */
static void editor_stays_inside_its_dialog(void **state)
{
    fixture *f = *state;
    static const int sizes[][2] = {{1280, 800}, {800, 600}, {640, 400}};
    char text[600];
    int n = 0;
    while (n < 500) n += snprintf(text + n, sizeof text - (size_t)n, "tok%d ", n % 89);
    text[500] = '\0';
    for (int two = 0; two < 2; two++) {
        if (two) app_do(&f->app, APP_ACT_CROSS, 0); /* cross-attention: a source field under the target */
        for (int font = 0; font < 10; font++) {
            if (font) app_key(&f->app, '+', 0);
            for (int k = 0; k < 2; k++) {
                app_do(&f->app, APP_ACT_EDIT, 0);
                assert_true(f->app.edit.open);
                if (k) app_text(&f->app, text);
                for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                    int w = sizes[z][0], h = sizes[z][1];
                    draw_frame(&f->app, &f->dl, &f->app.layout, w, h);
                    draw_commit(&f->app, &f->app.layout);
                    const draw_cmd *d = edit_dialog(&f->dl, w, h);
                    assert_non_null(d);
                    assert_true(inside(d->r, (app_rect){0, 0, w, h}));
                    for (const draw_cmd *c = d; (c = draw_list_next(&f->dl, c));)
                        if (c->kind != DRAW_CMD_CLIP_POP && !inside(c->r, d->r))
                            fail_msg("%s fields, text ×%.2f, %d × %d: command %d at (%d, %d) %d × %d ('%s') leaves the "
                                     "dialog (%d, %d) %d × %d", two ? "two" : "one", f->app.font_scale, w, h, c->kind,
                                     c->r.x, c->r.y, c->r.w, c->r.h, c->kind == DRAW_CMD_TEXT ? draw_cmd_text(&f->dl, c) : "",
                                     d->r.x, d->r.y, d->r.w, d->r.h);
                }
                app_key(&f->app, APP_KEY_ESCAPE, 0);
            }
        }
        while (f->app.font_scale > 1.0f) app_key(&f->app, '-', 0);
    }
}

/* ---- traces another program wrote: a stage missing, a size 0 (issue 21) */


/* A safetensors file of one float32 tensor "weights" of shape (b, h, s, t), zeros. */
static void write_weights(const char *path, int b, int h, int s, int t)
{
    char hdr[256];
    size_t bytes = (size_t)b * h * s * t * 4;
    int n = snprintf(hdr, sizeof hdr,
                     "{\"weights\":{\"dtype\":\"F32\",\"shape\":[%d,%d,%d,%d],\"data_offsets\":[0,%zu]}}", b, h, s,
                     t, bytes);
    while (n % 8) hdr[n++] = ' ';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t len = (uint64_t)n;
    fwrite(&len, 8, 1, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (size_t i = 0; i < bytes; i++) fputc(0, f);
    fclose(f);
}

/* Opened, every view key and stepping key, and a frame of each view: no
 * division by zero (g = 0 with no K/V tensor; h, b or s = 0), no crash; a
 * trace with nothing to show is refused with a message. */
static void foreign_traces_with_sizes_zero(void **state)
{
    (void)state;
    static const int shapes[][4] = {{1, 2, 3, 3}, {1, 0, 3, 3}, {0, 2, 3, 3}, {1, 2, 0, 0}, {1, 1, 1, 1}};
    static const int keys[] = {APP_KEY_UP, APP_KEY_DOWN, 'b', 'g', APP_KEY_TAB, 't', 'a', 'y', 'n', APP_KEY_LEFT,
                               APP_KEY_RIGHT, ',', '.', 'z', 'u', 'k', ']', '[', 'g', 'g'};
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[512], msg[400];
    snprintf(path, sizeof path, "%s/appcore-foreign.safetensors", tmp ? tmp : "/tmp");
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        write_weights(path, shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3]);
        app_state *app = calloc(1, sizeof *app);
        if (app_init_file(app, path, msg, sizeof msg)) {
            assert_true(msg[0] != '\0'); /* refused, saying why */
            free(app);
            continue;
        }
        draw_list dl;
        draw_list_init(&dl, FAKE);
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            app_key(app, keys[i], 0);
            draw_frame(app, &dl, &app->layout, 1280, 800);
            draw_commit(app, &app->layout);
            app_mouse_move(app, 400, 300);
            app_mouse_down(app, 400, 300);
            app_mouse_up(app);
        }
        draw_list_free(&dl);
        app_free(app);
        free(app);
    }
    remove(path);
}

/* A trace of every contract stage at the sizes of dims (memory only for
 * cross-attention: it makes the trace one), in `layers` layers
 * (layers.N.<stage>), each cell `value` + `ramp` × its column, with the
 * metadata pairs meta[0..2n) (NULL-terminated): what another program
 * following the contract writes. */
static void write_stages(const char *path, attn_dims d, int layers, float value, float ramp, const char *const *meta)
{
    int n_stages, n = 0, nm = 0;
    const attn_stage_info *st = attn_stages(&n_stages);
    enum { MAX = ATTN_STAGE_COUNT * 3 };
    attn_st_tensor ts[MAX];
    int64_t shapes[MAX][ATTN_MAX_NDIM];
    char names[MAX][64];
    float *data[MAX];
    d.n = d.cross ? d.t : d.s;
    for (int i = 0; i < n_stages; i++)
        for (int l = 0; l < (st[i].model_level ? 1 : layers) && (d.cross || i != ATTN_STAGE_MEMORY); l++) {
            int nd = attn_stage_shape(&st[i], &d, shapes[n]);
            size_t count = 1;
            for (int j = 0; j < nd; j++) count *= (size_t)shapes[n][j];
            if (layers > 1 && !st[i].model_level) snprintf(names[n], sizeof names[n], "layers.%d.%s", l, st[i].name);
            else snprintf(names[n], sizeof names[n], "%s", st[i].name);
            data[n] = malloc((count ? count : 1) * sizeof(float));
            assert_non_null(data[n]);
            for (size_t c = 0; c < count; c++) data[n][c] = value + ramp * (float)(c % (size_t)shapes[n][nd - 1]);
            ts[n] = (attn_st_tensor){names[n], nd, shapes[n], data[n]};
            n++;
        }
    while (meta && meta[2 * nm]) nm++;
    attn_error err;
    if (attn_st_write(path, ts, n, meta, nm, &err)) fail_msg("%s", err.msg);
    for (int i = 0; i < n; i++) free(data[i]);
}

/* Whether [first, last] lies inside one tensor of tr. */
static bool in_tensor(const attn_trace *tr, const float *first, const float *last)
{
    for (int i = 0; i < tr->n_tensors; i++) {
        const attn_tensor *t = &tr->tensors[i];
        if (t->count && first >= t->data && last < t->data + t->count) return true;
    }
    return false;
}

/* What every frame of any trace must be: each heatmap reads only cells of one
 * tensor of the traces shown (or the frame's own floats: a difference; or
 * the one-cell NaN legend), and each polygon has finite corners. */
static void check_frame(const app_state *app, const draw_list *dl, const char *what)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) {
        /* a command a million pixels away is a size computed from a number out of range */
        if (abs(c->r.x) > 1000000 || abs(c->r.y) > 1000000 || abs(c->r.w) > 1000000 || abs(c->r.h) > 1000000)
            fail_msg("%s: a command at (%d, %d) %d × %d", what, c->r.x, c->r.y, c->r.w, c->r.h);
        if (c->kind == DRAW_CMD_POLY)
            for (int k = 0; k < c->poly.n; k++)
                if (!isfinite(c->poly.x[k]) || !isfinite(c->poly.y[k])) fail_msg("%s: a polygon at NaN or ∞", what);
        if (c->kind != DRAW_CMD_HEATMAP) continue;
        const app_slice *sl = &c->heat.slice;
        const float *first = sl->data, *last = sl->data + (sl->rows - 1) * sl->row_stride + (sl->cols - 1) * sl->col_stride;
        bool ok = in_tensor(&app->trace, first, last) || (app->has_alt && in_tensor(&app->alt, first, last)) ||
                  (sl->rows == 1 && sl->cols == 1 && isnan(*first));
        for (int k = 0; !ok && k < dl->floats_used; k++)
            ok = first >= dl->floats[k] && last < dl->floats[k] + dl->floats_len[k];
        if (sl->mask) {
            const float *m0 = sl->mask, *m1 = sl->mask + (sl->rows - 1) * sl->mask_row_stride + (sl->cols - 1) * sl->mask_col_stride;
            ok = ok && in_tensor(&app->trace, m0, m1);
        }
        if (!ok) fail_msg("%s: a %d × %d heatmap reads outside every tensor", what, sl->rows, sl->cols);
    }
}

/* Every stage of every layer in every view (single, grid or overview,
 * compare, geometry), with a query row's bar chart and the ranked view
 * toggled, in a large and a tiny window; each frame checked. Returns how
 * many frames had text containing `want` (NULL: not counted). */
static int every_view(app_state *app, draw_list *dl, const char *name, const char *want)
{
    static const app_action MODES[] = {APP_ACT_NONE, APP_ACT_GRID, APP_ACT_COMPARE, APP_ACT_GEOMETRY};
    static const int SIZES[][2] = {{1280, 800}, {160, 120}};
    int found = 0;
    char what[300];
    for (int i = 0; i < app->trace.n_tensors; i++)
        for (size_t m = 0; m < sizeof MODES / sizeof MODES[0]; m++)
            for (int extra = 0; extra < 3; extra++) {
                app_do(app, APP_ACT_STAGE, i);
                if (MODES[m] != APP_ACT_NONE) app_do(app, MODES[m], 0);
                if (extra == 1) app_do(app, APP_ACT_ROW, 0);
                if (extra == 2) app_do(app, APP_ACT_VOCAB_VIEW, 0);
                for (size_t z = 0; z < sizeof SIZES / sizeof SIZES[0]; z++) {
                    draw_frame(app, dl, &app->layout, SIZES[z][0], SIZES[z][1]);
                    draw_commit(app, &app->layout);
                    snprintf(what, sizeof what, "%s, stage %s, view %d, %d × %d", name, app->trace.tensors[i].name,
                             app->view.mode, SIZES[z][0], SIZES[z][1]);
                    check_frame(app, dl, what);
                    app_mouse_move(app, SIZES[z][0] / 2, SIZES[z][1] / 2); /* a tooltip, a hovered query */
                    draw_frame(app, dl, &app->layout, SIZES[z][0], SIZES[z][1]);
                    draw_commit(app, &app->layout);
                    check_frame(app, dl, what);
                    if (want && text_with(dl, want)) found++;
                }
                if (extra == 1) app_do(app, APP_ACT_ROW, -1);
                if (extra == 2) app_do(app, APP_ACT_VOCAB_VIEW, 0);
                if (app->view.mode != LESSON_VIEW_SINGLE) app_do(app, MODES[m], 0);
            }
    return found;
}

/* Traces another program could write, of every stage, with one size 0 at a
 * time (b, h, g, s, t, d, k, f, V), no K/V heads, two layers of no heads,
 * and NaN or ∞ everywhere, opened as `attnlab view FILE` does and shown in
 * every view: no frame reads outside a tensor (a size-0 axis made a slice of
 * data that is not there: b = 0 read other tensors' numbers), no index −1
 * (the arrows of s = 0), no division by zero (the overview of h = 0), no
 * polygon at NaN (the arrows of NaN q and k); the views with nothing to
 * draw say so (found by fuzz_app). */
static void crafted_traces_in_every_view(void **state)
{
    (void)state;
    static const char *const TOKENS2[] = {"tokens", "[[],[]]", "lengths", "[0,0]", NULL}; /* two rows of no tokens */
    const attn_dims base = {.b = 2, .h = 2, .g = 1, .s = 3, .t = 3, .d = 4, .k = 2, .f = 3, .V = 5};
    struct {
        const char *name;
        attn_dims d;
        int layers;
        float value;
        const char *const *meta;
        const char *want; /* a text some frame must show (in the arrows view) */
    } cases[] = {
        {"every stage", base, 1, 0.5f, NULL, NULL},
        {"b = 0", base, 1, 0.5f, NULL, NULL},
        {"h = 0", base, 1, 0.5f, NULL, NULL},
        {"g = 0", base, 1, 0.5f, NULL, NULL},
        {"s = 0", base, 1, 0.5f, NULL, "the geometry view has nothing to draw"},
        {"t = 0", base, 1, 0.5f, NULL, "the geometry view has nothing to draw"},
        {"d = 0", base, 1, 0.5f, NULL, NULL},
        {"k = 0, d = 0", base, 1, 0.5f, NULL, "the geometry view has nothing to draw"},
        {"f = 0", base, 1, 0.5f, NULL, NULL},
        {"V = 0", base, 1, 0.5f, NULL, NULL},
        {"two layers, h = 0", base, 2, 0.5f, NULL, NULL},
        {"NaN", base, 1, NAN, NULL, "the arrows need finite numbers"},
        {"+∞", base, 1, INFINITY, NULL, "the arrows need finite numbers"},
        {"10³⁰", base, 1, 1e30f, NULL, NULL},
        {"10⁷", base, 1, 1e7f, NULL, NULL},
        {"−10⁷", base, 1, -1e7f, NULL, NULL},
        {"3·10³⁸", base, 1, 3e38f, NULL, NULL},
        {"rows of no tokens", base, 1, 0.5f, TOKENS2, NULL},
    };
    cases[1].d.b = 0, cases[2].d.h = 0, cases[3].d.g = 0, cases[6].d.d = 0;
    cases[4].d.s = 0, cases[4].d.P = 3;     /* every position cached, no query */
    cases[5].d.t = 0, cases[5].d.cross = 1; /* cross-attention on a source of no tokens */
    cases[7].d.k = cases[7].d.d = 0; /* k = 0 alone is refused: d / h gives it */
    cases[8].d.f = 0, cases[9].d.V = 0, cases[10].d.h = 0;
    cases[17].d.s = cases[17].d.t = 0;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[512], err[700];
    snprintf(path, sizeof path, "%s/appcore-crafted-%d.safetensors", tmp ? tmp : "/tmp", (int)getpid());
    app_i18n_init("en");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        write_stages(path, cases[k].d, cases[k].layers, cases[k].value, 0, cases[k].meta);
        app_state *app = calloc(1, sizeof *app);
        assert_non_null(app);
        if (app_init_file(app, path, err, sizeof err)) fail_msg("%s: refused: %s", cases[k].name, err);
        draw_list dl;
        draw_list_init(&dl, FAKE);
        int found = every_view(app, &dl, cases[k].name, cases[k].want);
        if (cases[k].want && !found) fail_msg("%s: no frame says '%s'", cases[k].name, cases[k].want);
        draw_list_free(&dl);
        app_free(app);
        free(app);
    }
    remove(path);
}

/* The ranked view ranks the whole vocabulary, also after the heatmap (y) was
 * zoomed: it ranked the zoomed window's columns and named them from 0 (v2 as
 * v0), and missed the best tokens outside it. */
static void ranked_view_ranks_the_whole_row(void **state)
{
    (void)state;
    const attn_dims d = {.b = 1, .h = 2, .g = 1, .s = 3, .t = 3, .d = 4, .k = 2, .f = 3, .V = 64};
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[512], err[700];
    snprintf(path, sizeof path, "%s/appcore-ranked-%d.safetensors", tmp ? tmp : "/tmp", (int)getpid());
    write_stages(path, d, 1, 0.0f, 1.0f / 64, NULL); /* each row's values rise with the column: v63 is best */
    app_state *app = calloc(1, sizeof *app);
    assert_non_null(app);
    if (app_init_file(app, path, err, sizeof err)) fail_msg("%s", err);
    draw_list dl;
    draw_list_init(&dl, FAKE);
    assert_int_equal(app_set_stage(app, "logits"), 0);
    app_do(app, APP_ACT_VOCAB_VIEW, 0); /* the heatmap: zoom into its left */
    draw_frame(app, &dl, &app->layout, W, H);
    draw_commit(app, &app->layout);
    assert_true(app->layout.n_areas > 0);
    app_rect r = app->layout.areas[0].r;
    app_mouse_move(app, r.x + 1, r.y + r.h / 2);
    for (int i = 0; i < 3; i++) app_wheel(app, 1);
    assert_true(app->zoom.level > 0);
    app_do(app, APP_ACT_VOCAB_VIEW, 0); /* ranked again */
    draw_frame(app, &dl, &app->layout, W, H);
    draw_commit(app, &app->layout);
    assert_non_null(text_with(&dl, "v63"));
    assert_non_null(text_with(&dl, "v62"));
    assert_null(text_with(&dl, "v0"));
    draw_list_free(&dl);
    app_free(app);
    free(app);
    remove(path);
}

/* A file of no tensors is refused in words, not opened on nothing (the stage
 * list's scroll went to −1 under the wheel; found by fuzz_app). */
static void a_trace_of_no_tensors_is_refused(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[512], err[700];
    snprintf(path, sizeof path, "%s/appcore-empty-%d.safetensors", tmp ? tmp : "/tmp", (int)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t len = 8;
    fwrite(&len, 8, 1, f);
    fputs("{}      ", f);
    fclose(f);
    app_state *app = calloc(1, sizeof *app);
    assert_int_equal(app_init_file(app, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "no tensors"));
    assert_non_null(strstr(err, path));
    free(app);
    remove(path);
}

/* The help in a window too narrow for a column of it at any text size: one
 * column from the left, every entry inside the window (the column of each
 * entry was read uninitialised; found by fuzz_app). */
static void help_in_a_tiny_window(void **state)
{
    fixture *f = *state;
    app_do(&f->app, APP_ACT_HELP, 0);
    for (int w = 40; w <= 200; w += 40) {
        draw_frame(&f->app, &f->dl, &f->app.layout, w, 120);
        draw_commit(&f->app, &f->app.layout);
        const draw_cmd *dim = NULL; /* the help dims the whole window, then draws its entries */
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
            if (c->kind == DRAW_CMD_RECT && c->color == 0xB0000000u) dim = c;
        assert_non_null(dim);
        int x = -1;
        for (int i = 0; i < app_n_keys; i++) {
            if (!app_keys[i].help_keys) continue;
            const draw_cmd *c = dim;
            while ((c = draw_list_next(&f->dl, c)) && !(c->kind == DRAW_CMD_TEXT && c->color == DRAW_ACCENT && /* a key, not its words */
                                                          !strcmp(draw_cmd_text(&f->dl, c), _(app_keys[i].help_keys)))) {}
            if (!c) fail_msg("%d px: the help lacks '%s'", w, app_keys[i].help_keys);
            if (x < 0) x = c->r.x;
            if (c->r.x != x || x >= w) fail_msg("%d px: '%s' at x = %d, not in the one column at %d", w, app_keys[i].help_keys, c->r.x, x);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(foreign_traces_with_sizes_zero),
        cmocka_unit_test(crafted_traces_in_every_view),
        cmocka_unit_test(a_trace_of_no_tensors_is_refused),
        cmocka_unit_test(ranked_view_ranks_the_whole_row),
        cmocka_unit_test_setup_teardown(help_in_a_tiny_window, setup, teardown),
        cmocka_unit_test_setup_teardown(esc_leaves_the_lesson_and_never_quits, setup, teardown),
        cmocka_unit_test_setup_teardown(q_in_a_lesson_asks, setup, teardown),
        cmocka_unit_test_setup_teardown(focus_stays_after_check, setup, teardown),
        cmocka_unit_test_setup_teardown(quiz_holds_still_under_the_pointer, setup, teardown),
        cmocka_unit_test_setup_teardown(quiz_feedback_scrolls_into_view, setup, teardown),
        cmocka_unit_test_setup_teardown(picker_numbers_and_scrolls, setup, teardown),
        cmocka_unit_test_setup_teardown(opening_says_so_in_the_first_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(next_model_says_so_and_computes_on_the_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(picker_reads_its_list_on_a_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(next_variant_computes_on_the_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(editor_keeps_the_caret_in_view, setup, teardown),
        cmocka_unit_test_setup_teardown(editor_stays_inside_its_dialog, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
