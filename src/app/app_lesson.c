/* app_lesson.c — the app drives the lesson player: shows its steps, passes it
 * what is on screen, and puts its messages on the status line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "engine/base/paths.h"
#include "i18n.h"
#include "lesson.h"

void app_take_note(app_state *app)
{
    app_player *p = &app->lesson;
    if (p->note[0]) app_status(app, p->note_error, "%s", p->note);
    p->note[0] = '\0';
    app->dirty = true;
}

/* A step opens on the whole picture, or zoomed to the region its cell quiz is about. */
static void zoom_to_quiz(app_state *app)
{
    const app_player *p = &app->lesson;
    const lesson_quiz *q = p->cell_quiz >= 0 ? &p->ls.steps[p->step].quizzes[p->cell_quiz] : NULL;
    if (q && lesson_quiz_has_region(q)) app_zoom_to(app, q->rows[0], q->rows[1] - 1, q->cols[0], q->cols[1] - 1);
    else app_zoom_to(app, 0, -1, 0, -1);
}

int app_lesson_go(app_state *app, int step)
{
    app_player *p = &app->lesson;
    attn_config cfg;
    lesson_view view;
    lesson_marks marks;
    char err[400];
    if (!p->open || step < 0 || step >= p->ls.n_steps) return -1;
    if (app_player_step(p, step, &cfg, &view, &marks, err, sizeof err)) {
        attn_config_free(&cfg);
        app_status(app, true, "%s", err);
        return -1;
    }
    if (app_show(app, &cfg, &view)) return -1;
    app_player_enter(p, step, &view, &marks);
    zoom_to_quiz(app);
    app_take_note(app);
    return 0;
}

/* "lesson 12 · Trained heads", as the opening notice names it. */
static void lesson_label(const char *path, const char *title, char *buf, size_t size)
{
    char num[16];
    app_player_lesson_number(path, num, sizeof num);
    /* TRANSLATORS: what opens: a lesson, its number and title */
    if (num[0]) snprintf(buf, size, _("lesson %s · %s"), num, title);
    else snprintf(buf, size, _("lesson %s"), title);
}

int app_lesson_open(app_state *app, const char *path, int step, char *err, size_t errsize)
{
    app_player *p = &app->lesson;
    if (app->async && !app->opening.running) { /* the window: the notice first, then reading (it checks every step) */
        lesson ls;
        lesson_diags dg = {0};
        char label[200];
        lesson_load(path, &ls, &dg); /* its title only: parsing is quick */
        lesson_label(path, ls.title && *ls.title ? ls.title : path, label, sizeof label);
        lesson_free(&ls);
        lesson_diags_free(&dg);
        attn_error e;
        if (attn_path_format(app->opening.path, sizeof app->opening.path, &e, "%s", path)) {
            snprintf(err, errsize, "%s", e.msg);
            return -1;
        }
        if (app_open_later(app, APP_ACT_NONE, step, label)) return 0;
    }
    if (app->async) { /* the window: read on a thread of its own, shown once it is (app_open.c) */
        if (!app_read_lesson(app, path, step)) return 0;
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    if (app_player_load(p, path, err, errsize)) return -1;
    app->dirty = true;
    if (step >= p->ls.n_steps) step = p->ls.n_steps - 1;
    char label[200];
    lesson_label(path, p->ls.title, label, sizeof label);
    if (app_open_later(app, APP_ACT_LESSON_RESTORE, step < 0 ? 0 : step, label)) return 0; /* the window: notice first */
    if (app_lesson_go(app, step < 0 ? 0 : step)) {
        snprintf(err, errsize, "%s", app->status);
        app_player_close(p);
        return -1;
    }
    return 0;
}

int app_lesson_picker(app_state *app)
{
    int rc = app_player_picker(&app->lesson);
    app_take_note(app);
    return rc;
}

static int pick(app_state *app, int i)
{
    app_player *p = &app->lesson;
    const char *entry;
    int step;
    if (app_player_pick(p, i, &entry, &step)) {
        app_take_note(app);
        return -1;
    }
    char label[200];
    lesson_label(entry, p->catalog.items[i].title, label, sizeof label);
    if (app_open_later(app, APP_ACT_PICK, i, label)) return 0; /* the window: notice first, then reading it */
    char err[600];
    char *path = strdup(entry); /* the catalog entry goes if the lesson is the picker's own */
    if (!path) return -1;
    int rc = app_lesson_open(app, path, step, err, sizeof err);
    free(path);
    if (rc) {
        app_status(app, true, "%s", err);
        return -1;
    }
    if (!app->opening.reading) p->picker = false; /* else it closes once the lesson is read */
    return 0;
}

static bool next_step(app_state *app)
{
    app_player *p = &app->lesson;
    if (p->open && p->step + 1 >= p->ls.n_steps) {
        if (p->next.path)
            /* TRANSLATORS: Next pressed on a lesson's last step; the panel ends with a "Next lesson" button */
            app_status(app, false, _("That was the last step. The button at its end opens the next lesson, l the lesson list."));
        else
            app_status(app, false, _("That was the last step. l opens the lesson list."));
        return true;
    }
    return app_lesson_go(app, p->step + 1) == 0;
}

/* The course's next lesson, which the last step offers, where the student left it. */
static int onward(app_state *app)
{
    app_player *p = &app->lesson;
    if (!p->open || !p->next.path) return -1;
    char label[200], err[600];
    lesson_label(p->next.path, p->next.title, label, sizeof label);
    if (app_open_later(app, APP_ACT_LESSON_ONWARD, 0, label)) return 0; /* the window: notice first, then reading it */
    int step = app_player_resume(p, &p->next);
    char *path = strdup(p->next.path); /* the entry goes once the lesson it names is the player's */
    if (!path) return -1;
    int rc = app_lesson_open(app, path, step, err, sizeof err);
    free(path);
    if (rc) app_status(app, true, "%s", err);
    return rc;
}

/* "▼ more below" (arg 1: the docked quiz's): most of a view further down. */
static bool more_below(app_state *app, int arg)
{
    app_player *p = &app->lesson;
    const app_layout *l = &app->layout;
    bool dock = arg == 1;
    int view = dock ? l->lesson_dock.h : l->lesson_dock.h > 0 ? l->lesson_dock.y - l->lesson_view.y : l->lesson_view.h;
    int *at = dock ? &p->dock_scroll : &p->scroll, max = dock ? p->dock_h : p->content_h;
    int s = *at + view * 3 / 4 > max ? max : *at + view * 3 / 4;
    if (s <= *at) return false;
    *at = s;
    return true;
}

bool app_lesson_do(app_state *app, app_action act, int arg)
{
    app_player *p = &app->lesson;
    bool changed = true;
    switch (act) {
    case APP_ACT_LESSON_NEXT: return next_step(app);
    case APP_ACT_LESSON_PREV: return app_lesson_go(app, p->step - 1) == 0;
    case APP_ACT_LESSON_RESTORE: return app_lesson_go(app, p->step) == 0;
    case APP_ACT_LESSON_CHOICE: app_player_choice(p, arg >> 8, arg & 255); break;
    case APP_ACT_LESSON_CHECK:
        app_player_check(p, arg, &app->trace, &app->view);
        p->shown_quiz = arg; /* its verdict and explanations, into view if below the fold */
        if (p->open && arg >= 0 && arg < p->ls.steps[p->step].n_quizzes &&
            p->ls.steps[p->step].quizzes[arg].kind == LESSON_QUIZ_NUMBER)
            /* not right yet: the field keeps (or takes) the keys, so Backspace edits it; right: they
             * go back to the lesson, so Space goes on to the next step */
            p->focus = p->answers[arg].graded && p->answers[arg].grade.right ? -1 : arg;
        break;
    case APP_ACT_LESSON_REVEAL: app_player_reveal(p, arg); break;
    case APP_ACT_LESSON_ONWARD: changed = onward(app) == 0; break;
    case APP_ACT_LESSON_MORE: changed = more_below(app, arg); break;
    case APP_ACT_LESSON_FIELD: p->focus = arg; break; /* arg -1: leave the field */
    case APP_ACT_PICKER:
        if (p->picker) p->picker = false;
        else changed = app_lesson_picker(app) == 0;
        break;
    case APP_ACT_PICK: changed = pick(app, arg) == 0; break;
    case APP_ACT_PICK_SHOW:
        changed = p->picker && p->have_catalog && arg >= 0 && arg < p->catalog.n;
        if (changed) p->sel = arg;
        break;
    default: app_player_reset(p); break; /* APP_ACT_PICKER_RESET */
    }
    app_take_note(app);
    return changed;
}
