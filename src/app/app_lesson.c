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

void ui_app_take_note(ui_app *app)
{
    ui_player *p = &app->lesson;
    if (p->note[0]) ui_app_status(app, p->note_error, "%s", p->note);
    p->note[0] = '\0';
    app->dirty = true;
}

/* A step opens on the whole picture, or zoomed to the region its cell quiz is about. */
static void zoom_to_quiz(ui_app *app)
{
    const ui_player *p = &app->lesson;
    const lesson_quiz *q = p->cell_quiz >= 0 ? &p->ls.steps[p->step].quizzes[p->cell_quiz] : NULL;
    if (q && lesson_quiz_has_region(q)) ui_app_zoom_to(app, q->rows[0], q->rows[1] - 1, q->cols[0], q->cols[1] - 1);
    else ui_app_zoom_to(app, 0, -1, 0, -1);
}

int ui_app_lesson_go(ui_app *app, int step)
{
    ui_player *p = &app->lesson;
    attn_config cfg;
    lesson_view view;
    lesson_marks marks;
    char err[400];
    if (!p->open || step < 0 || step >= p->ls.n_steps) return -1;
    if (ui_player_step(p, step, &cfg, &view, &marks, err, sizeof err)) {
        attn_config_free(&cfg);
        ui_app_status(app, true, "%s", err);
        return -1;
    }
    if (ui_app_show(app, &cfg, &view)) return -1;
    ui_player_enter(p, step, &view, &marks);
    zoom_to_quiz(app);
    ui_app_take_note(app);
    return 0;
}

/* "lesson 12 · Trained heads", as the opening notice names it. */
static void lesson_label(const char *path, const char *title, char *buf, size_t size)
{
    char num[16];
    ui_player_lesson_number(path, num, sizeof num);
    /* TRANSLATORS: what opens: a lesson, its number and title */
    if (num[0]) snprintf(buf, size, _("lesson %s · %s"), num, title);
    else snprintf(buf, size, _("lesson %s"), title);
}

int ui_app_lesson_open(ui_app *app, const char *path, int step, char *err, size_t errsize)
{
    ui_player *p = &app->lesson;
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
        if (ui_app_open_later(app, UI_ACT_NONE, step, label)) return 0;
    }
    if (app->async) { /* the window: read on a thread of its own, shown once it is (app_open.c) */
        if (!ui_app_read_lesson(app, path, step)) return 0;
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    if (ui_player_load(p, path, err, errsize)) return -1;
    app->dirty = true;
    if (step >= p->ls.n_steps) step = p->ls.n_steps - 1;
    char label[200];
    lesson_label(path, p->ls.title, label, sizeof label);
    if (ui_app_open_later(app, UI_ACT_LESSON_RESTORE, step < 0 ? 0 : step, label)) return 0; /* the window: notice first */
    if (ui_app_lesson_go(app, step < 0 ? 0 : step)) {
        snprintf(err, errsize, "%s", app->status);
        ui_player_close(p);
        return -1;
    }
    return 0;
}

int ui_app_lesson_picker(ui_app *app)
{
    int rc = ui_player_picker(&app->lesson);
    ui_app_take_note(app);
    return rc;
}

static int pick(ui_app *app, int i)
{
    ui_player *p = &app->lesson;
    const char *entry;
    int step;
    if (ui_player_pick(p, i, &entry, &step)) {
        ui_app_take_note(app);
        return -1;
    }
    char label[200];
    lesson_label(entry, p->catalog.items[i].title, label, sizeof label);
    if (ui_app_open_later(app, UI_ACT_PICK, i, label)) return 0; /* the window: notice first, then reading it */
    char err[600];
    char *path = strdup(entry); /* the catalog entry goes if the lesson is the picker's own */
    if (!path) return -1;
    int rc = ui_app_lesson_open(app, path, step, err, sizeof err);
    free(path);
    if (rc) {
        ui_app_status(app, true, "%s", err);
        return -1;
    }
    if (!app->opening.reading) p->picker = false; /* else it closes once the lesson is read */
    return 0;
}

static bool next_step(ui_app *app)
{
    ui_player *p = &app->lesson;
    if (p->open && p->step + 1 >= p->ls.n_steps) {
        ui_app_status(app, false, _("That was the last step. l opens the lesson list."));
        return true;
    }
    return ui_app_lesson_go(app, p->step + 1) == 0;
}

bool ui_app_lesson_do(ui_app *app, ui_action act, int arg)
{
    ui_player *p = &app->lesson;
    bool changed = true;
    switch (act) {
    case UI_ACT_LESSON_NEXT: return next_step(app);
    case UI_ACT_LESSON_PREV: return ui_app_lesson_go(app, p->step - 1) == 0;
    case UI_ACT_LESSON_RESTORE: return ui_app_lesson_go(app, p->step) == 0;
    case UI_ACT_LESSON_CHOICE: ui_player_choice(p, arg >> 8, arg & 255); break;
    case UI_ACT_LESSON_CHECK:
        ui_player_check(p, arg, &app->trace, &app->view);
        p->shown_quiz = arg; /* its verdict and explanations, into view if below the fold */
        if (p->open && arg >= 0 && arg < p->ls.steps[p->step].n_quizzes &&
            p->ls.steps[p->step].quizzes[arg].kind == LESSON_QUIZ_NUMBER)
            /* not right yet: the field keeps (or takes) the keys, so Backspace edits it; right: they
             * go back to the lesson, so Space goes on to the next step */
            p->focus = p->answers[arg].graded && p->answers[arg].grade.right ? -1 : arg;
        break;
    case UI_ACT_LESSON_REVEAL: ui_player_reveal(p, arg); break;
    case UI_ACT_LESSON_FIELD: p->focus = arg; break; /* arg -1: leave the field */
    case UI_ACT_PICKER:
        if (p->picker) p->picker = false;
        else changed = ui_app_lesson_picker(app) == 0;
        break;
    case UI_ACT_PICK: changed = pick(app, arg) == 0; break;
    case UI_ACT_PICK_SHOW:
        changed = p->picker && p->have_catalog && arg >= 0 && arg < p->catalog.n;
        if (changed) p->sel = arg;
        break;
    default: ui_player_reset(p); break; /* UI_ACT_PICKER_RESET */
    }
    ui_app_take_note(app);
    return changed;
}
