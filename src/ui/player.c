/* player.c — lesson steps, quizzes, picker and progress (state only). */
#include "player.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "i18n.h"
#include "utf8.h"

void ui_player_init(ui_player *p, const char *lang, const char *progress_path)
{
    memset(p, 0, sizeof *p);
    p->focus = p->cell_quiz = -1;
    p->keep_progress = true;
    snprintf(p->lang, sizeof p->lang, "%s", lang && !strcmp(lang, "zh") ? "zh" : "en");
    if (progress_path) snprintf(p->progress_path, sizeof p->progress_path, "%s", progress_path);
}

static void free_answers(ui_player *p)
{
    if (p->answers && p->open)
        for (int q = 0; q < p->ls.steps[p->step].n_quizzes; q++) {
            free(p->answers[q].picked);
            free(p->answers[q].cells);
        }
    free(p->answers);
    p->answers = NULL;
    p->focus = p->cell_quiz = -1;
}

void ui_player_free(ui_player *p)
{
    free_answers(p);
    if (p->open) lesson_free(&p->ls);
    if (p->have_catalog) lesson_catalog_free(&p->catalog);
    lesson_progress_close(p->progress);
    memset(p, 0, sizeof *p);
}

/* What the progress store said: a problem stays on a chip (and is printed
 * once on stderr), since the step's status text soon replaces the status line. */
static void progress_note(ui_app *app, lesson_progress_status st, const char *msg)
{
    ui_player *p = &app->lesson;
    char note[sizeof p->progress_note];
    if (st == LESSON_PROGRESS_OK) {
        if (p->progress_failed) p->progress_note[0] = p->progress_full[0] = '\0';
        p->progress_failed = false;
        return;
    }
    if (st == LESSON_PROGRESS_UNSAVED && !p->keep_progress) return; /* nothing was to be saved */
    if (st == LESSON_PROGRESS_UNSAVED) snprintf(note, sizeof note, _("progress not saved: %s"), msg);
    else snprintf(note, sizeof note, "%s", msg);
    ui_app_status(app, true, "%s", note);
    p->progress_failed = st == LESSON_PROGRESS_UNSAVED;
    if (strcmp(note, p->progress_full)) fprintf(stderr, "attnlab: %s\n", note);
    memcpy(p->progress_full, note, sizeof note);
    /* the chip names files without the progress folder, to leave room for the cause */
    const char *slash = strrchr(p->progress_path, '/');
    size_t dir = slash ? (size_t)(slash - p->progress_path) + 1 : 0, n = 0;
    for (const char *s = note; *s;)
        if (dir && !strncmp(s, p->progress_path, dir)) s += dir;
        else p->progress_note[n++] = *s++;
    p->progress_note[n] = '\0';
    app->dirty = true;
}

/* Progress is opened on first use, so the plain visualizer never touches it. */
static lesson_progress *progress(ui_app *app)
{
    ui_player *p = &app->lesson;
    if (p->progress) return p->progress;
    if (!p->progress_path[0] && !lesson_progress_path(p->progress_path, sizeof p->progress_path)) return NULL;
    char err[600];
    p->progress = lesson_progress_open(p->progress_path, err, sizeof err);
    if (err[0] && p->progress)
        progress_note(app, lesson_progress_unsaved(p->progress) ? LESSON_PROGRESS_UNSAVED : LESSON_PROGRESS_MOVED, err);
    return p->progress;
}

static void save_progress(ui_app *app)
{
    char err[600];
    lesson_progress *pg = progress(app);
    if (!app->lesson.keep_progress || !pg) return;
    lesson_progress_status st = lesson_progress_save(pg, err, sizeof err);
    progress_note(app, st, err);
}

void ui_player_reset_progress(ui_app *app)
{
    lesson_progress *pg = progress(app);
    if (!pg) return;
    lesson_progress_reset(pg, NULL);
    if (!app->lesson.keep_progress) return;
    char err[600];
    lesson_progress_status st = lesson_progress_save(pg, err, sizeof err);
    progress_note(app, st, err);
    if (st == LESSON_PROGRESS_OK) ui_app_status(app, false, _("progress reset"));
}

const char *ui_player_step_label(const ui_player *p, char *buf, size_t size)
{
    snprintf(buf, size, _("step %d / %d"), p->step + 1, p->ls.n_steps);
    return buf;
}

int ui_player_go(ui_app *app, int step)
{
    ui_player *p = &app->lesson;
    if (!p->open || step < 0 || step >= p->ls.n_steps) return -1;
    attn_config cfg;
    lesson_view v;
    lesson_diags dg = {0};
    if (lesson_step_state(&p->ls, step, &cfg, &v, &dg)) {
        char buf[400];
        ui_app_status(app, true, "%s", dg.n ? lesson_diag_format(p->ls.path, &dg.items[0], buf, sizeof buf) : "?");
        attn_config_free(&cfg);
        lesson_diags_free(&dg);
        return -1;
    }
    lesson_diags_free(&dg);
    ui_show show = {.decode_step = v.decode_step,
                    .view = (ui_view_mode)v.view,
                    .compare = (ui_toggle)v.compare,
                    .stage = v.stage,
                    .head = v.head,
                    .batch = v.batch_row,
                    .row = v.row};
    if (ui_app_show(app, &cfg, &show)) return -1;

    free_answers(p);
    p->step = step;
    p->view = v;
    p->scroll = 0;
    const lesson_step *st = &p->ls.steps[step];
    p->answers = calloc((size_t)(st->n_quizzes ? st->n_quizzes : 1), sizeof *p->answers);
    for (int q = 0; p->answers && q < st->n_quizzes; q++) {
        if (st->quizzes[q].kind == LESSON_QUIZ_CHOICE)
            p->answers[q].picked = calloc((size_t)st->quizzes[q].n_choices + 1, sizeof(bool));
        if (st->quizzes[q].kind == LESSON_QUIZ_CELLS) p->cell_quiz = q;
    }
    lesson_progress *pg = progress(app);
    if (pg) {
        lesson_progress_visit(pg, p->name, step, p->ls.n_steps);
        save_progress(app);
    }
    char label[64];
    ui_app_status(app, false, "%s · %s", ui_player_step_label(p, label, sizeof label), st->title);
    app->dirty = true;
    return 0;
}

int ui_player_open(ui_app *app, const char *path, int step, char *err, size_t errsize)
{
    ui_player *p = &app->lesson;
    lesson ls;
    lesson_diags dg = {0};
    int rc = lesson_load(path, &ls, &dg);
    if (!rc) rc = lesson_check(&ls, &dg);
    if (rc) {
        char buf[600];
        snprintf(err, errsize, "%s", dg.n ? lesson_diag_format(path, &dg.items[0], buf, sizeof buf) : path);
        lesson_free(&ls);
        lesson_diags_free(&dg);
        return -1;
    }
    lesson_diags_free(&dg);
    ui_player_close(app);
    p->ls = ls;
    p->open = true;
    const char *slash = strrchr(path, '/');
    snprintf(p->name, sizeof p->name, "%s", slash ? slash + 1 : path);
    p->picker = false;
    if (step >= ls.n_steps) step = ls.n_steps - 1;
    if (ui_player_go(app, step < 0 ? 0 : step)) {
        snprintf(err, errsize, "%s", app->status);
        ui_player_close(app);
        return -1;
    }
    return 0;
}

void ui_player_close(ui_app *app)
{
    ui_player *p = &app->lesson;
    free_answers(p);
    if (p->open) lesson_free(&p->ls);
    p->open = false;
    app->dirty = true;
}

int ui_player_picker(ui_app *app)
{
    ui_player *p = &app->lesson;
    char dir[1024], err[600];
    if (p->have_catalog) lesson_catalog_free(&p->catalog);
    p->have_catalog = false;
    if (lesson_catalog_load(&p->catalog, lesson_catalog_dir(p->lang, dir, sizeof dir), err, sizeof err)) {
        ui_app_status(app, true, _("no lessons: %s"), err);
        return -1;
    }
    p->have_catalog = true;
    p->picker = true;
    p->confirm_reset = false;
    progress(app);
    /* select the open lesson, else the first one not finished */
    p->sel = -1;
    for (int i = 0; i < p->catalog.n && p->sel < 0; i++)
        if (p->open && !strcmp(p->catalog.items[i].name, p->name)) p->sel = i;
    for (int i = 0; i < p->catalog.n && p->sel < 0; i++)
        if (!p->progress || !lesson_progress_get(p->progress, p->catalog.items[i].name).finished) p->sel = i;
    if (p->sel < 0) p->sel = 0;
    app->dirty = true;
    return 0;
}

int ui_player_pick(ui_app *app, int i)
{
    ui_player *p = &app->lesson;
    if (!p->have_catalog || i < 0 || i >= p->catalog.n) return -1;
    const lesson_entry *e = &p->catalog.items[i];
    if (e->error) {
        ui_app_status(app, true, "%s", e->error);
        return -1;
    }
    /* resume where the student left off */
    int step = 0;
    if (p->progress) {
        lesson_record r = lesson_progress_get(p->progress, e->name);
        if (r.step > 0 && !r.finished) step = r.step - 1;
    }
    char err[600];
    char *path = strdup(e->path);
    if (!path) return -1;
    int rc = ui_player_open(app, path, step, err, sizeof err);
    free(path);
    if (rc) {
        ui_app_status(app, true, "%s", err);
        return -1;
    }
    p->picker = false;
    return 0;
}

/* ---- quizzes */

static lesson_quiz *quiz(ui_app *app, int q)
{
    ui_player *p = &app->lesson;
    if (!p->open || !p->answers || q < 0 || q >= p->ls.steps[p->step].n_quizzes) return NULL;
    return &p->ls.steps[p->step].quizzes[q];
}

void ui_player_choice(ui_app *app, int q, int c)
{
    lesson_quiz *qz = quiz(app, q);
    if (!qz || qz->kind != LESSON_QUIZ_CHOICE || c < 0 || c >= qz->n_choices) return;
    ui_quiz_answer *a = &app->lesson.answers[q];
    if (qz->n_correct == 1) /* one right answer: radio buttons */
        for (int i = 0; i < qz->n_choices; i++)
            if (i != c) a->picked[i] = false;
    a->picked[c] = !a->picked[c];
    a->graded = false;
    app->dirty = true;
}

int ui_player_answer_cells(const ui_app *app, unsigned char *out, size_t max, int *rows, int *cols)
{
    const ui_player *p = &app->lesson;
    if (!p->open || p->cell_quiz < 0) return -1;
    const lesson_quiz *qz = &p->ls.steps[p->step].quizzes[p->cell_quiz];
    const char *stage = qz->stage[0] ? qz->stage : p->view.stage;
    char why[200];
    int r = 0, c = 0;
    if (lesson_quiz_cells(qz, &app->trace, stage, app->batch, app->head, NULL, &r, &c, why, sizeof why) < 0) return -1;
    if (rows) *rows = r;
    if (cols) *cols = c;
    if (!out) return 0;
    if ((size_t)r * (size_t)c > max) return -1;
    return lesson_quiz_cells(qz, &app->trace, stage, app->batch, app->head, out, NULL, NULL, why, sizeof why);
}

static void cell_feedback(ui_app *app, lesson_quiz *qz, ui_quiz_answer *a)
{
    int r = 0, c = 0;
    if (ui_player_answer_cells(app, NULL, 0, &r, &c) < 0 || r != a->rows || c != a->cols) {
        snprintf(a->feedback, sizeof a->feedback, "%s", _("Show the quiz's stage in the single view, then click cells."));
        return;
    }
    unsigned char *right = calloc((size_t)r * c + 1, 1);
    if (!right) return;
    ui_player_answer_cells(app, right, (size_t)r * c, NULL, NULL);
    a->grade = lesson_grade_cells(qz, right, a->cells, r, c);
    free(right);
    if (a->grade.right)
        snprintf(a->feedback, sizeof a->feedback, _("Right: all %d."), a->grade.n_right);
    else
        snprintf(a->feedback, sizeof a->feedback, _("Not yet: %d right, %d wrong (red), %d missing."), a->grade.n_right,
                 a->grade.n_wrong, a->grade.n_missed);
}

void ui_player_check(ui_app *app, int q)
{
    lesson_quiz *qz = quiz(app, q);
    if (!qz) return;
    ui_player *p = &app->lesson;
    ui_quiz_answer *a = &p->answers[q];
    a->grade = (lesson_grade){0};
    switch (qz->kind) {
    case LESSON_QUIZ_CHOICE: {
        bool any = false;
        for (int i = 0; i < qz->n_choices; i++) any |= a->picked[i];
        if (!any) {
            snprintf(a->feedback, sizeof a->feedback, "%s", _("Pick an answer first."));
            a->graded = false;
            app->dirty = true;
            return;
        }
        a->grade = lesson_grade_choice(qz, a->picked);
        if (a->grade.right) snprintf(a->feedback, sizeof a->feedback, "%s", _("Right."));
        else if (qz->n_correct == 1) snprintf(a->feedback, sizeof a->feedback, "%s", _("Not this one. Try again."));
        else
            snprintf(a->feedback, sizeof a->feedback, _("Not yet: %d right, %d wrong, %d missing."), a->grade.n_right,
                     a->grade.n_wrong, a->grade.n_missed);
        break;
    }
    case LESSON_QUIZ_NUMBER:
        if (lesson_grade_number(qz, a->text, &a->grade)) {
            snprintf(a->feedback, sizeof a->feedback, _("'%s' is not a number."), a->text);
            a->graded = false;
            app->dirty = true;
            return;
        }
        snprintf(a->feedback, sizeof a->feedback, "%s", a->grade.right ? _("Right.") : _("Not quite. Try again."));
        break;
    case LESSON_QUIZ_CELLS: {
        int picks = 0;
        for (int i = 0; a->cells && i < a->rows * a->cols; i++) picks += a->cells[i];
        if (!picks) {
            snprintf(a->feedback, sizeof a->feedback, "%s", _("Click cells of the heatmap first."));
            a->graded = false;
            app->dirty = true;
            return;
        }
        cell_feedback(app, qz, a);
        break;
    }
    }
    a->graded = true;
    a->tries++;
    p->focus = -1;
    lesson_progress *pg = progress(app);
    if (pg) {
        lesson_progress_quiz(pg, p->name, p->step, q, a->grade.right);
        save_progress(app);
    }
    app->dirty = true;
}

void ui_player_reveal(ui_app *app, int q)
{
    lesson_quiz *qz = quiz(app, q);
    if (!qz || qz->kind != LESSON_QUIZ_CELLS) return;
    app->lesson.answers[q].show = !app->lesson.answers[q].show;
    app->dirty = true;
}

bool ui_player_cell(ui_app *app, const char *stage, int head, int i, int j)
{
    ui_player *p = &app->lesson;
    if (!p->open || p->cell_quiz < 0 || app->view != UI_VIEW_SINGLE) return false;
    lesson_quiz *qz = &p->ls.steps[p->step].quizzes[p->cell_quiz];
    if (strcmp(stage, qz->stage[0] ? qz->stage : p->view.stage) || head != app->head) return false;
    int r, c;
    if (ui_player_answer_cells(app, NULL, 0, &r, &c) < 0 || i < 0 || j < 0 || i >= r || j >= c) return false;
    ui_quiz_answer *a = &p->answers[p->cell_quiz];
    if (a->rows != r || a->cols != c || !a->cells) { /* the picture changed shape: start again */
        free(a->cells);
        a->cells = calloc((size_t)r * c, 1);
        if (!a->cells) return false;
        a->rows = r;
        a->cols = c;
    }
    a->cells[(size_t)i * c + j] ^= 1;
    a->graded = false;
    app->dirty = true;
    return true;
}

void ui_player_type(ui_app *app, const char *text)
{
    ui_player *p = &app->lesson;
    lesson_quiz *qz = quiz(app, p->focus);
    if (!qz || qz->kind != LESSON_QUIZ_NUMBER) return;
    ui_quiz_answer *a = &p->answers[p->focus];
    size_t n = strlen(a->text), add = strlen(text);
    if (n + add >= sizeof a->text) return;
    memcpy(a->text + n, text, add + 1);
    a->graded = false;
    app->dirty = true;
}

void ui_player_backspace(ui_app *app)
{
    ui_player *p = &app->lesson;
    lesson_quiz *qz = quiz(app, p->focus);
    if (!qz || qz->kind != LESSON_QUIZ_NUMBER) return;
    char *s = p->answers[p->focus].text;
    s[attn_utf8_prev(s, strlen(s))] = '\0';
    p->answers[p->focus].graded = false;
    app->dirty = true;
}
