/* player.c — lesson steps, quizzes, picker and progress (state only). */
#include "player.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/paths.h"
#include "engine/base/utf8.h"
#include "i18n.h"

void app_player_init(app_player *p, const char *lang, const char *progress_path)
{
    memset(p, 0, sizeof *p);
    p->focus = p->cell_quiz = p->shown_quiz = -1;
    p->keep_progress = true;
    snprintf(p->lang, sizeof p->lang, "%s", lang && !strcmp(lang, "zh") ? "zh" : "en");
    /* a path that does not fit is no file: nothing is saved, rather than into another */
    if (progress_path && attn_path_format(p->progress_path, sizeof p->progress_path, NULL, "%s", progress_path))
        p->keep_progress = false;
}

static void free_answers(app_player *p)
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

static void list_drop(app_player *p);

void app_player_free(app_player *p)
{
    app_player_finish(p);
    list_drop(p);
    app_player_close(p);
    if (p->have_catalog) lesson_catalog_free(&p->catalog);
    lesson_progress_close(p->progress);
    memset(p, 0, sizeof *p);
}

static void note(app_player *p, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->note, sizeof p->note, fmt, ap);
    va_end(ap);
    p->note_error = error;
}

/* What the progress store said: a problem stays on a chip (and is printed
 * once on stderr), since the step's status text soon replaces the status line. */
static void progress_note(app_player *p, lesson_progress_status st, const char *msg)
{
    char text[sizeof p->progress_note];
    if (st == LESSON_PROGRESS_OK) {
        if (p->progress_failed) p->progress_note[0] = p->progress_full[0] = '\0';
        p->progress_failed = false;
        return;
    }
    if (st < 0 && !p->keep_progress) return; /* nothing was to be saved */
    if (st == LESSON_PROGRESS_BUSY)
        /* TRANSLATORS: %s says which file another attnlab keeps locked */
        snprintf(text, sizeof text, _("progress not saved yet: %s; kept, and saved with the next step"), msg);
    else if (st == LESSON_PROGRESS_UNSAVED) snprintf(text, sizeof text, _("progress not saved: %s"), msg);
    else snprintf(text, sizeof text, "%s", msg);
    note(p, true, "%s", text);
    p->progress_failed = st < 0;
    if (strcmp(text, p->progress_full)) fprintf(stderr, "attnlab: %s\n", text);
    memcpy(p->progress_full, text, sizeof text);
    /* the chip names files without the progress folder, to leave room for the cause */
    const char *slash = strrchr(p->progress_path, '/');
    size_t dir = slash ? (size_t)(slash - p->progress_path) + 1 : 0, n = 0;
    for (const char *s = text; *s;)
        if (dir && !strncmp(s, p->progress_path, dir)) s += dir;
        else p->progress_note[n++] = *s++;
    p->progress_note[n] = '\0';
}

/* Progress is opened on first use, so the plain visualizer never touches it.
 * The window does not wait for another instance's lock here: a corrupt file
 * it would move aside is then moved by the first save. */
static lesson_progress *progress(app_player *p)
{
    if (p->progress) return p->progress;
    if (!p->progress_path[0] && !lesson_progress_path(p->progress_path, sizeof p->progress_path)) return NULL;
    char err[600];
    p->progress = lesson_progress_open(p->progress_path, p->async_save ? 0 : LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    if (err[0] && p->progress)
        progress_note(p, lesson_progress_unsaved(p->progress) ? LESSON_PROGRESS_UNSAVED : LESSON_PROGRESS_MOVED, err);
    return p->progress;
}

/* ---- saving: here, or in the window as a request to the job service (jobs.h) */

struct app_player_save {
    app_task *task;
    lesson_progress_batch *batch;
    atomic_bool done;
};

static bool save_work(void *arg)
{
    struct app_player_save *s = arg;
    lesson_progress_write(s->batch, LESSON_PROGRESS_LOCK_MS);
    atomic_store(&s->done, true);
    return false;
}

/* Takes in the save under way once it has ended (wait: waits for it);
 * returns whether it did. */
static bool save_end(app_player *p, bool wait)
{
    struct app_player_save *s = p->saving;
    char err[600];
    if (!s || (!wait && !atomic_load(&s->done))) return false;
    app_jobs_join(p->jobs, s->task);
    lesson_progress_status st = lesson_progress_end(p->progress, s->batch, err, sizeof err);
    free(s);
    p->saving = NULL;
    progress_note(p, st, err);
    return true;
}

/* Saves the changes: here and now, or (async_save) started as a request to the job service, a
 * save asked while one runs following it. Returns the status, OK once started. */
static lesson_progress_status save_progress(app_player *p)
{
    char err[600];
    lesson_progress *pg = progress(p);
    lesson_progress_status st;
    if (!p->keep_progress || !pg) return LESSON_PROGRESS_OK;
    if (!p->async_save) {
        st = lesson_progress_save(pg, err, sizeof err);
        progress_note(p, st, err);
        return st;
    }
    if (p->saving) {
        p->save_again = true;
        return LESSON_PROGRESS_OK;
    }
    p->save_again = false;
    struct app_player_save *s = calloc(1, sizeof *s);
    if (s && (s->batch = lesson_progress_begin(pg))) {
        atomic_init(&s->done, false);
        if ((s->task = app_jobs_start(p->jobs, save_work, s))) {
            p->saving = s;
            return LESSON_PROGRESS_OK;
        }
        lesson_progress_write(s->batch, 0); /* no service to be had: one try here, never a wait */
    }
    st = lesson_progress_end(pg, s ? s->batch : NULL, err, sizeof err);
    free(s);
    progress_note(p, st, err);
    return st;
}

static bool list_end(app_player *p);

bool app_player_poll(app_player *p)
{
    if (list_end(p)) return true;
    if (!save_end(p, false)) return false;
    if (p->save_again) save_progress(p);
    return true;
}

bool app_player_saving(const app_player *p)
{
    return p->saving != NULL;
}

void app_player_finish(app_player *p)
{
    save_end(p, true);
    p->save_again = false;
    if (!p->progress || !p->keep_progress || !lesson_progress_pending(p->progress) ||
        lesson_progress_unsaved(p->progress)) /* kept in memory only: that was said */
        return;
    char err[600];
    lesson_progress_status st = lesson_progress_save(p->progress, err, sizeof err);
    if (st < 0) fprintf(stderr, "attnlab: progress not saved: %s\n", err); /* the last word on it */
}

const char *app_player_lesson_number(const char *name, char *buf, size_t size)
{
    size_t n = 0;
    const char *slash = strrchr(name, '/');
    if (slash) name = slash + 1;
    while (name[n] >= '0' && name[n] <= '9' && n + 1 < size) n++;
    if (size) snprintf(buf, size, "%.*s", (int)n, name);
    return buf;
}

const char *app_player_step_label(const app_player *p, char *buf, size_t size)
{
    snprintf(buf, size, _("step %d / %d"), p->step + 1, p->ls.n_steps);
    return buf;
}

int app_player_step(const app_player *p, int step, attn_config *cfg, lesson_view *view, lesson_marks *marks,
                    char *err, size_t errsize)
{
    lesson_diags dg = {0};
    if (!p->open || step < 0 || step >= p->ls.n_steps) {
        attn_config_init(cfg);
        snprintf(err, errsize, "%s", p->open ? "no such step" : "no lesson is open");
        return -1;
    }
    int rc = lesson_step_state(&p->ls, step, cfg, view, marks, &dg);
    if (rc) {
        char buf[400];
        snprintf(err, errsize, "%s", dg.n ? lesson_diag_format(p->ls.path, &dg.items[0], buf, sizeof buf) : "?");
    }
    lesson_diags_free(&dg);
    return rc;
}

void app_player_enter(app_player *p, int step, const lesson_view *view, const lesson_marks *marks)
{
    free_answers(p);
    p->step = step;
    p->view = *view;
    p->marks = *marks;
    p->scroll = p->dock_scroll = 0;
    p->shown_quiz = -1;
    const lesson_step *st = &p->ls.steps[step];
    p->answers = calloc((size_t)(st->n_quizzes ? st->n_quizzes : 1), sizeof *p->answers);
    for (int q = 0; p->answers && q < st->n_quizzes; q++) {
        if (st->quizzes[q].kind == LESSON_QUIZ_CHOICE)
            p->answers[q].picked = calloc((size_t)st->quizzes[q].n_choices + 1, sizeof(bool));
        if (st->quizzes[q].kind == LESSON_QUIZ_CELLS) p->cell_quiz = q;
    }
    lesson_progress *pg = progress(p);
    if (pg) {
        lesson_progress_visit(pg, p->name, step, p->ls.n_steps);
        save_progress(p);
    }
    char label[64];
    note(p, false, "%s · %s", app_player_step_label(p, label, sizeof label), st->title);
}

void app_player_read_begin(app_player_reading *r, const char *path)
{
    *r = (app_player_reading){0};
    r->rc = lesson_load(path, &r->ls, &r->dg);
    if (r->rc) return;
    lesson_checker_init(&r->check, &r->ls, NULL, &r->dg);
    r->checking = true;
}

bool app_player_read_step(app_player_reading *r) { return r->checking && lesson_checker_step(&r->check, &r->dg); }

void app_player_read_stop(app_player_reading *r)
{
    if (r->checking) lesson_checker_stop(&r->check);
}

int app_player_read_end(app_player_reading *r, const char *path, lesson *ls, char *err, size_t errsize)
{
    if (r->checking) r->rc = lesson_checker_end(&r->check, &r->dg);
    if (r->rc) {
        char buf[600];
        snprintf(err, errsize, "%s", r->dg.n ? lesson_diag_format(path, &r->dg.items[0], buf, sizeof buf) : path);
        lesson_free(&r->ls);
    } else {
        *ls = r->ls;
    }
    lesson_diags_free(&r->dg);
    int rc = r->rc ? -1 : 0;
    *r = (app_player_reading){0};
    return rc;
}

int app_player_read(const char *path, lesson *ls, char *err, size_t errsize)
{
    app_player_reading r;
    app_player_read_begin(&r, path);
    return app_player_read_end(&r, path, ls, err, errsize);
}

void app_player_adopt(app_player *p, lesson *ls, const char *path, lesson_entry *next)
{
    app_player_close(p);
    p->ls = *ls;
    p->quizzes = lesson_step_quizzes(&p->ls); /* NULL (out of memory): progress counts no quiz of it */
    if (next) p->next = *next, *next = (lesson_entry){0};
    p->open = true;
    p->step = 0;
    const char *slash = strrchr(path, '/');
    snprintf(p->name, sizeof p->name, "%s", slash ? slash + 1 : path);
    p->picker = false;
}

int app_player_load(app_player *p, const char *path, char *err, size_t errsize)
{
    lesson ls;
    lesson_entry next;
    if (app_player_read(path, &ls, err, errsize)) return -1;
    lesson_catalog_next(path, &next); /* none (or none readable): no offer */
    app_player_adopt(p, &ls, path, &next);
    return 0;
}

void app_player_close(app_player *p)
{
    free_answers(p);
    if (p->open) lesson_free(&p->ls);
    free(p->quizzes);
    p->quizzes = NULL;
    lesson_entry_free(&p->next);
    p->open = false;
}

/* ---- the picker's list: here, or in the window as a request to the job service */

struct app_player_list {
    app_task *task;
    atomic_int refs;         /* the player's and the request's: the last to let go frees it */
    atomic_bool done;
    char dir[PATH_MAX];
    bool have_dir;           /* lesson_catalog_dir found one */
    lesson_catalog catalog;  /* read, when rc is 0 */
    int rc;
    char err[600];
};

static void list_read(struct app_player_list *l)
{
    l->rc = lesson_catalog_load(&l->catalog, l->have_dir ? l->dir : NULL, l->err, sizeof l->err);
}

static void list_release(struct app_player_list *l)
{
    if (atomic_fetch_sub(&l->refs, 1) != 1) return;
    if (atomic_load(&l->done) && !l->rc) lesson_catalog_free(&l->catalog);
    free(l);
}

static bool list_work(void *arg)
{
    struct app_player_list *l = arg;
    list_read(l);
    atomic_store(&l->done, true);
    list_release(l);
    return false;
}

/* A list being read is given up (it frees itself when done). */
static void list_drop(app_player *p)
{
    struct app_player_list *l = p->listing;
    if (!l) return;
    p->listing = NULL;
    app_jobs_leave(p->jobs, l->task);
    list_release(l);
}

lesson_record app_player_entry_record(const app_player *p, const lesson_entry *e)
{
    lesson_shape shape = lesson_entry_shape(e);
    return p->progress ? lesson_progress_get(p->progress, e->name, &shape) : (lesson_record){.first_open = -1};
}

int app_player_resume(const app_player *p, const lesson_entry *e)
{
    lesson_record r = app_player_entry_record(p, e);
    if (r.finished || r.step <= 0) return 0;
    return r.reached_end && r.first_open >= 0 ? r.first_open : r.step - 1;
}

lesson_record app_player_record(const app_player *p)
{
    lesson_shape shape = {p->quizzes ? p->ls.n_steps : 0, p->quizzes};
    return p->progress && p->open ? lesson_progress_get(p->progress, p->name, &shape) : (lesson_record){.first_open = -1};
}

/* The list read (catalog, or rc and err) becomes the picker's, its selection
 * the open lesson, else the first one not finished. */
static int list_take(app_player *p, lesson_catalog *catalog, int rc, const char *err)
{
    if (p->have_catalog) lesson_catalog_free(&p->catalog);
    p->have_catalog = false;
    if (rc) {
        note(p, true, _("no lessons: %s"), err);
        p->picker = false;
        return -1;
    }
    p->catalog = *catalog;
    p->have_catalog = true;
    progress(p);
    p->sel = -1;
    for (int i = 0; i < p->catalog.n && p->sel < 0; i++)
        if (p->open && !strcmp(p->catalog.items[i].name, p->name)) p->sel = i;
    for (int i = 0; i < p->catalog.n && p->sel < 0; i++)
        if (!app_player_entry_record(p, &p->catalog.items[i]).finished) p->sel = i;
    if (p->sel < 0) p->sel = 0;
    return 0;
}

/* Takes in the list read by a request once it is; returns whether it did. */
static bool list_end(app_player *p)
{
    struct app_player_list *l = p->listing;
    if (!l || !atomic_load(&l->done)) return false;
    app_jobs_join(p->jobs, l->task);
    p->listing = NULL;
    if (p->picker) list_take(p, &l->catalog, l->rc, l->err);
    else if (!l->rc) lesson_catalog_free(&l->catalog); /* closed meanwhile */
    l->rc = -1; /* the catalog moved into the player, or freed */
    list_release(l);
    return true;
}

bool app_player_listing(const app_player *p)
{
    return p->listing != NULL;
}

int app_player_picker(app_player *p)
{
    struct app_player_list *l = calloc(1, sizeof *l);
    if (!l) {
        note(p, true, _("no lessons: %s"), "out of memory");
        return -1;
    }
    l->have_dir = lesson_catalog_dir(p->lang, l->dir, sizeof l->dir) != NULL;
    p->confirm_reset = false;
    p->picker = true;
    if (p->async_read) {
        list_drop(p); /* the newer request wins */
        atomic_init(&l->refs, 2);
        atomic_init(&l->done, false);
        if ((l->task = app_jobs_start(p->jobs, list_work, l))) {
            p->listing = l;
            return 0;
        }
    }
    list_read(l); /* no service (or none to be had): read here */
    int rc = list_take(p, &l->catalog, l->rc, l->err);
    free(l);
    return rc;
}

int app_player_pick(app_player *p, int i, const char **path, int *step)
{
    if (!p->have_catalog || i < 0 || i >= p->catalog.n) return -1;
    const lesson_entry *e = &p->catalog.items[i];
    if (e->error) {
        note(p, true, "%s", e->error);
        return -1;
    }
    /* resume where the student left off: a lesson whose end was reached at the
     * first quiz not yet answered right, a finished one from the start */
    *step = app_player_resume(p, e);
    *path = e->path;
    return 0;
}

void app_player_reset(app_player *p)
{
    if (!p->confirm_reset) {
        p->confirm_reset = true;
        return;
    }
    p->confirm_reset = false;
    lesson_progress *pg = progress(p);
    if (!pg) return;
    lesson_progress_reset(pg, NULL);
    if (p->keep_progress && save_progress(p) == LESSON_PROGRESS_OK) note(p, false, _("progress reset"));
}

/* ---- quizzes */

static lesson_quiz *quiz(app_player *p, int q)
{
    if (!p->open || !p->answers || q < 0 || q >= p->ls.steps[p->step].n_quizzes) return NULL;
    return &p->ls.steps[p->step].quizzes[q];
}

void app_player_choice(app_player *p, int q, int c)
{
    lesson_quiz *qz = quiz(p, q);
    if (!qz || qz->kind != LESSON_QUIZ_CHOICE || c < 0 || c >= qz->n_choices) return;
    app_quiz_answer *a = &p->answers[q];
    if (qz->n_correct == 1) /* one right answer: radio buttons */
        for (int i = 0; i < qz->n_choices; i++)
            if (i != c) a->picked[i] = false;
    a->picked[c] = !a->picked[c];
    a->graded = false;
    a->feedback[0] = '\0'; /* "Not this one" was about the choice before */
}

int app_player_answer_cells(const app_player *p, const attn_trace *tr, const lesson_view *shown, unsigned char *out,
                            size_t max, int *rows, int *cols)
{
    if (!p->open || p->cell_quiz < 0) return -1;
    const lesson_quiz *qz = &p->ls.steps[p->step].quizzes[p->cell_quiz];
    const char *stage = qz->stage[0] ? qz->stage : p->view.stage;
    char why[200];
    int r = 0, c = 0;
    if (lesson_quiz_cells(qz, tr, stage, shown->layer, shown->batch, shown->head, NULL, &r, &c, why, sizeof why) < 0) return -1;
    if (rows) *rows = r;
    if (cols) *cols = c;
    if (!out) return 0;
    if ((size_t)r * (size_t)c > max) return -1;
    return lesson_quiz_cells(qz, tr, stage, shown->layer, shown->batch, shown->head, out, NULL, NULL, why, sizeof why);
}

static void cell_feedback(app_player *p, const attn_trace *tr, const lesson_view *shown, lesson_quiz *qz,
                          app_quiz_answer *a)
{
    int r = 0, c = 0;
    if (app_player_answer_cells(p, tr, shown, NULL, 0, &r, &c) < 0 || r != a->rows || c != a->cols) {
        snprintf(a->feedback, sizeof a->feedback, "%s", _("Show the quiz's stage in the single view, then click cells."));
        return;
    }
    unsigned char *right = calloc((size_t)r * c + 1, 1);
    if (!right) return;
    app_player_answer_cells(p, tr, shown, right, (size_t)r * c, NULL, NULL);
    a->grade = lesson_grade_cells(qz, right, a->cells, r, c);
    free(right);
    if (a->grade.right)
        snprintf(a->feedback, sizeof a->feedback, _("Right: all %d."), a->grade.n_right);
    else
        snprintf(a->feedback, sizeof a->feedback, _("Not yet: %d right, %d wrong (red), %d missing."), a->grade.n_right,
                 a->grade.n_wrong, a->grade.n_missed);
}

/* Grades answer a; false (with the feedback saying why) when there is nothing to grade yet. */
static bool grade(app_player *p, const attn_trace *tr, const lesson_view *shown, lesson_quiz *qz, app_quiz_answer *a)
{
    switch (qz->kind) {
    case LESSON_QUIZ_CHOICE: {
        bool any = false;
        for (int i = 0; i < qz->n_choices; i++) any |= a->picked[i];
        if (!any) {
            snprintf(a->feedback, sizeof a->feedback, "%s", _("Pick an answer first."));
            return false;
        }
        a->grade = lesson_grade_choice(qz, a->picked);
        if (a->grade.right) snprintf(a->feedback, sizeof a->feedback, "%s", _("Right."));
        else if (qz->n_correct == 1) snprintf(a->feedback, sizeof a->feedback, "%s", _("Not this one. Try again."));
        else
            snprintf(a->feedback, sizeof a->feedback, _("Not yet: %d right, %d wrong, %d missing."), a->grade.n_right,
                     a->grade.n_wrong, a->grade.n_missed);
        return true;
    }
    case LESSON_QUIZ_NUMBER:
        if (lesson_grade_number(qz, a->text, &a->grade)) {
            snprintf(a->feedback, sizeof a->feedback, _("'%s' is not a number."), a->text);
            return false;
        }
        snprintf(a->feedback, sizeof a->feedback, "%s", a->grade.right ? _("Right.") : _("Not quite. Try again."));
        return true;
    case LESSON_QUIZ_CELLS: {
        int picks = 0;
        for (int i = 0; a->cells && i < a->rows * a->cols; i++) picks += a->cells[i];
        if (!picks) {
            snprintf(a->feedback, sizeof a->feedback, "%s", _("Click cells of the heatmap first."));
            return false;
        }
        cell_feedback(p, tr, shown, qz, a);
        return true;
    }
    }
    return false;
}

void app_player_check(app_player *p, int q, const attn_trace *tr, const lesson_view *shown)
{
    lesson_quiz *qz = quiz(p, q);
    if (!qz) return;
    app_quiz_answer *a = &p->answers[q];
    a->grade = (lesson_grade){0};
    if (!grade(p, tr, shown, qz, a)) {
        a->graded = false;
        return;
    }
    a->graded = true;
    a->tries++;
    if (qz->kind == LESSON_QUIZ_NUMBER) p->focus = q; /* typing goes on in the field (Esc or a click leaves it) */
    lesson_progress *pg = progress(p);
    if (pg) {
        lesson_progress_quiz(pg, p->name, p->step, q, a->grade.right);
        save_progress(p);
    }
}

void app_player_reveal(app_player *p, int q)
{
    lesson_quiz *qz = quiz(p, q);
    if (!qz || qz->kind != LESSON_QUIZ_CELLS) return;
    p->answers[q].show = !p->answers[q].show;
}

const attn_tensor *app_player_quiz_tensor(const app_player *p, const attn_trace *tr, const lesson_view *shown)
{
    if (!p->open || p->cell_quiz < 0) return NULL;
    const lesson_quiz *qz = &p->ls.steps[p->step].quizzes[p->cell_quiz];
    return lesson_stage_tensor(tr, qz->stage[0] ? qz->stage : p->view.stage, shown->layer);
}

bool app_player_cell(app_player *p, const attn_trace *tr, const lesson_view *shown, const char *stage, int head, int i,
                     int j)
{
    if (shown->mode != LESSON_VIEW_SINGLE && shown->mode != LESSON_VIEW_GRID) return false;
    /* the very tensor graded: in a model, "weights" is the shown layer's, not layer 0's thumbnail in the grid */
    const attn_tensor *t = app_player_quiz_tensor(p, tr, shown);
    if (!t || strcmp(t->name, stage) || head != shown->head) return false;
    lesson_quiz *qz = &p->ls.steps[p->step].quizzes[p->cell_quiz];
    int r, c, r0, r1, c0, c1;
    if (app_player_answer_cells(p, tr, shown, NULL, 0, &r, &c) < 0 || i < 0 || j < 0 || i >= r || j >= c) return false;
    lesson_quiz_region(qz, r, c, &r0, &r1, &c0, &c1);
    if (i < r0 || i > r1 || j < c0 || j > c1) { /* taken, so it does not open a row, but not picked */
        note(p, false, _("This quiz is about rows %d–%d and columns %d–%d only."), r0, r1, c0, c1);
        return true;
    }
    app_quiz_answer *a = &p->answers[p->cell_quiz];
    if (a->rows != r || a->cols != c || !a->cells) { /* the picture changed shape: start again */
        free(a->cells);
        a->cells = calloc((size_t)r * c, 1);
        if (!a->cells) return false;
        a->rows = r;
        a->cols = c;
    }
    a->cells[(size_t)i * c + j] ^= 1;
    a->graded = false;
    return true;
}

void app_player_type(app_player *p, const char *text)
{
    lesson_quiz *qz = quiz(p, p->focus);
    if (!qz || qz->kind != LESSON_QUIZ_NUMBER) return;
    app_quiz_answer *a = &p->answers[p->focus];
    size_t n = strlen(a->text), add = strlen(text);
    if (n + add >= sizeof a->text) return;
    memcpy(a->text + n, text, add + 1);
    a->graded = false;
}

void app_player_backspace(app_player *p)
{
    lesson_quiz *qz = quiz(p, p->focus);
    if (!qz || qz->kind != LESSON_QUIZ_NUMBER) return;
    char *s = p->answers[p->focus].text;
    s[attn_utf8_prev(s, strlen(s))] = '\0';
    p->answers[p->focus].graded = false;
}
