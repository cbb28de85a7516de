/* test_ui_course.c — every step of every shipped lesson, English and Chinese,
 * drawn as `attnlab render --lesson` draws it (app_picture_open, then the
 * window's Next ▶ from step to step, each frame through sdl_render), at
 * 1280×800 and in presenter mode at 1920×1080; then read from the layout the
 * frame recorded:
 *
 *   (a) a quiz's question, its choices or field and its Check are on screen
 *       without scrolling (in the lesson panel's view, in its dock when the
 *       quizzes are docked, Check not cut off);
 *   (b) no "layer N / M" above a stage that is in no layer (embeddings,
 *       logits, probs);
 *   (c) a heatmap of at most 32 × 32 has cells of 16 px (28 presenting) and a
 *       label on every row and column (an overview of more than 8 pictures
 *       aside: heatmaps_readable says why).
 *
 * A failing step is one line ("en 16:4 1280x800: heatmap 31x31 cells 11 px,
 * labels 1 in 4"), and each test fails at its end with the count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app_picture.h"
#include "catalog.h"
#include "engine/base/clock.h"
#include "i18n.h"
#include "offscreen.h"

typedef struct {
    const char *lang;
    int w, h;
    bool present;
    char size[32];      /* "1280x800", "1920x1080 presenter" */
    const char *lesson; /* its number, "16" */
    int step;           /* from 1 */
    char line[1200];    /* the step's problems so far */
    int failed;         /* steps that failed */
    int steps;
} course_run;

/* A problem of the step being checked, added to its line. */
static void problem(course_run *r, const char *fmt, ...)
{
    size_t n = strlen(r->line);
    if (n >= sizeof r->line - 2) return;
    if (n) n += (size_t)snprintf(r->line + n, sizeof r->line - n, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->line + n, sizeof r->line - n, fmt, ap);
    va_end(ap);
}

static bool inside(app_rect a, app_rect b)
{
    return a.w > 0 && a.h > 0 && a.x >= b.x && a.y >= b.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
}

/* The hit of (act, arg) with some area, or NULL. */
static const app_hit *hit_of(const app_layout *l, app_action act, int arg)
{
    for (int i = 0; i < l->n_hits; i++)
        if (l->hits[i].action == act && l->hits[i].arg == arg && l->hits[i].r.w > 0 && l->hits[i].r.h > 0)
            return &l->hits[i];
    return NULL;
}

/* (a): quiz q of step st on screen. Hits are cut to what the panel shows, so
 * Check is whole when its bottom is the answer's, which is recorded whole. */
static void quiz_visible(course_run *r, const app_layout *l, const lesson_step *st, int q)
{
    const lesson_quiz *qz = &st->quizzes[q];
    if (q >= APP_MAX_QUIZ_PLACES) {
        problem(r, "quiz %d: past the %d quizzes the layout records", q + 1, APP_MAX_QUIZ_PLACES);
        return;
    }
    const app_quiz_place *pl = &l->quizzes[q];
    app_rect shown = l->lesson_dock.w > 0 ? l->lesson_dock : l->lesson_view;
    if (qz->question[0] && !inside(pl->question, shown))
        problem(r, "quiz %d: question at y %d..%d, the panel shows %d..%d", q + 1, pl->question.y,
                pl->question.y + pl->question.h, shown.y, shown.y + shown.h);
    if (!inside(pl->answer, shown))
        problem(r, "quiz %d: answer at y %d..%d, the panel shows %d..%d", q + 1, pl->answer.y,
                pl->answer.y + pl->answer.h, shown.y, shown.y + shown.h);
    for (int c = 0; qz->kind == LESSON_QUIZ_CHOICE && c < qz->n_choices; c++) {
        const app_hit *h = hit_of(l, APP_ACT_LESSON_CHOICE, q << 8 | c);
        if (!h || !inside(h->r, pl->answer)) problem(r, "quiz %d: choice %d not on screen", q + 1, c + 1);
    }
    const app_hit *field = hit_of(l, APP_ACT_LESSON_FIELD, q);
    if (qz->kind == LESSON_QUIZ_NUMBER && (!field || !inside(field->r, pl->answer)))
        problem(r, "quiz %d: its field not on screen", q + 1);
    const app_hit *check = hit_of(l, APP_ACT_LESSON_CHECK, q);
    if (!check || !inside(check->r, pl->answer) || check->r.y + check->r.h != pl->answer.y + pl->answer.h)
        problem(r, "quiz %d: Check %s", q + 1, check ? "cut off" : "not on screen");
}

/* (c): the heatmaps of 32 × 32 or fewer cells; alike ones (a grid's heads) said once, with how many.
 * An overview of more than 8 pictures (every layer × every head, 16 of them
 * in lessons 03, 13, 14, 15 and the glossary) is a map of where to look, not
 * a picture to read: sixteen of them cannot have 16 px cells in the room a
 * frame has, so they are left out here; their tokens are read by hovering a
 * cell or opening one head (g), as the view's own line says. */
#define COURSE_OVERVIEW 8
static void heatmaps_readable(course_run *r, const app_layout *l)
{
    int least = r->present ? 28 : 16;
    if (l->n_areas > COURSE_OVERVIEW) return;
    char said[APP_MAX_AREAS][96];
    int count[APP_MAX_AREAS], n = 0;
    for (int k = 0; k < l->n_areas; k++) {
        const app_heat_area *a = &l->areas[k];
        if (a->rows > 32 || a->cols > 32 || a->rows <= 0 || a->cols <= 0) continue;
        int cell = draw_imin(a->r.w / a->cols, a->r.h / a->rows);
        int step = draw_imax(a->row_label_step, a->col_label_step);
        bool none = a->row_label_step == 0 || a->col_label_step == 0;
        if (cell >= least && step == 1 && !none) continue;
        char labels[32], one[96];
        if (none) snprintf(labels, sizeof labels, "%s", a->row_label_step || a->col_label_step ? "some none" : "none");
        else snprintf(labels, sizeof labels, "1 in %d", step);
        snprintf(one, sizeof one, "heatmap %dx%d cells %d px, labels %s", a->rows, a->cols, cell, labels);
        int i = 0;
        while (i < n && strcmp(said[i], one)) i++;
        if (i == n) snprintf(said[n++], sizeof said[0], "%s", one), count[i] = 0;
        count[i]++;
    }
    for (int i = 0; i < n; i++) {
        if (count[i] > 1) problem(r, "%s (%d of them)", said[i], count[i]);
        else problem(r, "%s", said[i]);
    }
}

/* A click on the stage's cell (i, j) where the last frame drew it; false when it is not on screen. */
static bool click_cell(app_state *app, int i, int j)
{
    for (int k = 0; k < app->layout.n_areas; k++) {
        const app_heat_area *a = &app->layout.areas[k];
        int x, y, w, h;
        if (a->pane || a->head != app->view.head || i < a->row0 || j < a->col0 || i >= a->row0 + a->rows ||
            j >= a->col0 + a->cols)
            continue;
        app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i - a->row0, j - a->col0, &x, &y, &w, &h);
        app_mouse_down(app, a->r.x + x + w / 2, a->r.y + y + h / 2);
        return true;
    }
    return false;
}

/* Quiz q answered right, as a student answers it: its right choices ticked,
 * its number typed, or its right cells clicked (one a row for argmax, argmin);
 * then Check. */
static void answer_right(course_run *r, app_state *app, int q)
{
    const lesson_quiz *qz = &app->lesson.ls.steps[app->lesson.step].quizzes[q];
    app_quiz_answer *a = &app->lesson.answers[q];
    char buf[64];
    unsigned char right[4096];
    int rows, cols;
    if (qz->kind == LESSON_QUIZ_CHOICE)
        for (int c = 0; c < qz->n_choices; c++)
            if (qz->correct[c] != a->picked[c]) app_do(app, APP_ACT_LESSON_CHOICE, q << 8 | c);
    if (qz->kind == LESSON_QUIZ_NUMBER) {
        app_do(app, APP_ACT_LESSON_FIELD, q);
        snprintf(buf, sizeof buf, "%.17g", qz->answer);
        app_text(app, buf);
    }
    if (qz->kind == LESSON_QUIZ_CELLS &&
        app_player_answer_cells(&app->lesson, &app->trace, &app->view, right, sizeof right, &rows, &cols) > 0) {
        bool one = qz->rule == LESSON_CELLS_ARGMAX || qz->rule == LESSON_CELLS_ARGMIN;
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                if (right[i * cols + j] && click_cell(app, i, j) && one) break;
    }
    app_do(app, APP_ACT_LESSON_CHECK, q);
    if (!a->graded || !a->grade.right) problem(r, "quiz %d: not answered right here (%s)", q + 1, a->feedback);
}

/* With ATTNLAB_COURSE_SHOTS=DIR, the frame just drawn as DIR/en-11-1-1280x800[-what].png, to look at. */
static void shot(const course_run *r, sdl_offscreen *o, const char *what)
{
    const char *dir = getenv("ATTNLAB_COURSE_SHOTS");
    char path[1200], err[300];
    if (!dir) return;
    snprintf(path, sizeof path, "%s/%s-%.2s-%d-%dx%d%s%s.png", dir, r->lang, r->lesson, r->step, r->w, r->h,
             what[0] ? "-" : "", what);
    if (sdl_save_png(o->r, path, err, sizeof err)) print_message("%s\n", err);
}

/* The step just drawn: (b) and (c); then (a), each quiz on screen when it is
 * the one to answer (those before it answered right). */
static void check_step(course_run *r, app_state *app, sdl_offscreen *o)
{
    const app_layout *l = &app->layout;
    const lesson_step *st = &app->lesson.ls.steps[app->lesson.step];
    const attn_tensor *t = app_tensor(app);
    if (t && t->layer < 0 && l->layer_shown) problem(r, "\"layer N / M\" above %s, in no layer", t->name);
    heatmaps_readable(r, l);
    shot(r, o, "");
    char what[16];
    for (int q = 0; q < st->n_quizzes; q++) {
        if (q) {
            answer_right(r, app, q - 1);
            sdl_render(app, o->g, &app->layout);
            snprintf(what, sizeof what, "q%d", q + 1);
            shot(r, o, what);
        }
        quiz_visible(r, l, st, q);
    }
    if (st->n_quizzes && getenv("ATTNLAB_COURSE_SHOTS")) { /* and the last one answered, its explanations shown */
        answer_right(r, app, st->n_quizzes - 1);
        sdl_render(app, o->g, &app->layout);
        shot(r, o, "done");
    }
}

/* One lesson, every step: opened as render opens it, then Next ▶. */
static void play_lesson(course_run *r, sdl_offscreen *o, const lesson_entry *e)
{
    app_state app;
    attn_config c;
    char err[600];
    const char *lang = app_i18n_init(r->lang); /* before the app, as render does */
    attn_config_init(&c);
    if (app_init(&app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    app_picture p;
    app_picture_init(&p);
    p.lesson = e->path;
    p.step = 1;
    p.lang = r->lang;
    p.present = r->present;
    if (app_picture_open(&app, &p, lang, err, sizeof err)) fail_msg("%s: %s", e->path, err);
    r->lesson = e->name;
    for (int s = 0; s < app.lesson.ls.n_steps; s++) {
        if (s && !app_do(&app, APP_ACT_LESSON_NEXT, 0)) fail_msg("%s: no step %d", e->path, s + 1);
        assert_int_equal(app.lesson.step, s);
        sdl_render(&app, o->g, &app.layout);
        r->step = s + 1;
        r->line[0] = '\0';
        check_step(r, &app, o);
        r->steps++;
        if (r->line[0]) {
            print_message("%s %.2s:%d %s: %s\n", r->lang, r->lesson, r->step, r->size, r->line);
            r->failed++;
        }
    }
    app_free(&app);
}

static void course(const char *lang, int w, int h, bool present)
{
    course_run r = {.lang = lang, .w = w, .h = h, .present = present};
    snprintf(r.size, sizeof r.size, "%dx%d%s", w, h, present ? " presenter" : "");
    char dir[1024], err[600];
    sdl_offscreen o;
    lesson_catalog cat;
    double t0 = attn_clock_ms();
    if (sdl_offscreen_open(&o, w, h, err, sizeof err)) fail_msg("offscreen: %s", err);
    assert_int_equal(lesson_catalog_load(&cat, lesson_catalog_dir(lang, dir, sizeof dir), err, sizeof err), 0);
    assert_true(cat.n >= 11);
    for (int l = 0; l < cat.n; l++)
        if (cat.items[l].n_steps > 0) play_lesson(&r, &o, &cat.items[l]);
    lesson_catalog_free(&cat);
    sdl_offscreen_close(&o);
    app_i18n_init("en");
    print_message("%s %s: %d steps of %d failed (%.1f s)\n", lang, r.size, r.failed, r.steps,
                  (attn_clock_ms() - t0) / 1000);
    assert_true(r.steps >= 100);
    if (r.failed) fail_msg("%d steps failed", r.failed);
}

static void course_en(void **state)
{
    (void)state;
    course("en", 1280, 800, false);
}

static void course_zh(void **state)
{
    (void)state;
    course("zh", 1280, 800, false);
}

static void course_en_presenting(void **state)
{
    (void)state;
    course("en", 1920, 1080, true);
}

static void course_zh_presenting(void **state)
{
    (void)state;
    course("zh", 1920, 1080, true);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(course_en),
        cmocka_unit_test(course_zh),
        cmocka_unit_test(course_en_presenting),
        cmocka_unit_test(course_zh_presenting),
    };
    if (argc > 1) cmocka_set_test_filter(argv[1]); /* one of them: test_ui_course course_zh */
#if defined(__SANITIZE_ADDRESS__)
    /* under the sanitizers (make test-asan) the Chinese course at 1280x800: the
     * presenting runs repeat its code at another size, and test_ui_lesson plays
     * the English one through the same player. The release build runs all four. */
    else cmocka_set_test_filter("course_zh");
#endif
    return cmocka_run_group_tests(tests, NULL, NULL);
}
