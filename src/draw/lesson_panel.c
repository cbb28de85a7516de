/* lesson_panel.c — draws the lesson panel, the quiz marks on the heatmap and the picker. */
#include "lesson_panel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "i18n.h"
#include "linebreak.h"

#define DRAW_CODE   0xFFFFD580u
#define DRAW_EMPH   0xFFB3E5FCu


/* ---- wrapped, styled text */

static unsigned style_at(const lesson_span *sp, int n, int pos)
{
    for (int i = 0; i < n; i++)
        if (pos >= sp[i].start && pos < sp[i].end) return sp[i].style;
    return 0;
}

typedef struct {
    draw_list *dl;
    int x0, right;  /* line start and end */
    int x, y;       /* pen */
    int u;
    bool draw;      /* false: measure only */
    uint32_t color;
} pen;

static void newline(pen *p)
{
    p->x = p->x0;
    p->y += p->u + p->u / 4;
}

#define WORD_MAX 512

/* The n bytes at s as a string in buf (WORD_MAX bytes; longer words are cut). */
static const char *word_str(char *buf, const char *s, int n)
{
    if (n >= WORD_MAX) n = WORD_MAX - 1;
    memcpy(buf, s, (size_t)n);
    buf[n] = '\0';
    return buf;
}

/* The width of the piece s[0..n) in its style. */
static int piece_w(pen *p, const char *s, int n, unsigned style)
{
    char buf[WORD_MAX];
    if (n <= 0) return 0;
    word_str(buf, s, n);
    return style & LESSON_STRONG ? draw_text_w_bold(p->dl, buf) : draw_text_w(p->dl, buf);
}

/* Draws the piece s[0..n), of one style and without spaces, at the pen; on a
 * new line first when wrap and it does not fit. */
static void piece(pen *p, const char *s, int n, unsigned style, bool wrap)
{
    char buf[WORD_MAX];
    if (n <= 0) return;
    bool bold = style & LESSON_STRONG;
    int w = piece_w(p, s, n, style);
    if (wrap && p->x + w > p->right && p->x > p->x0) newline(p);
    word_str(buf, s, n);
    if (p->draw) {
        uint32_t c = p->color;
        if (style & LESSON_CODE) {
            draw_fill(p->dl, p->x - 2, p->y, w + 4, p->u + 2, DRAW_PANEL_HI);
            c = DRAW_CODE;
        } else if (style & LESSON_STRONG) {
            c = DRAW_WHITE;
        } else if (style & (LESSON_EM | LESSON_LINK)) {
            c = DRAW_EMPH;
        }
        if (bold) draw_text_bold(p->dl, buf, p->x, p->y, c);
        else draw_text(p->dl, buf, p->x, p->y, c);
        if (style & LESSON_LINK) draw_line_to(p->dl, p->x, p->y + p->u, p->x + w, p->y + p->u, 1, c);
        if (style & LESSON_DEL) draw_line_to(p->dl, p->x, p->y + p->u / 2, p->x + w, p->y + p->u / 2, 1, c);
    }
    p->x += w;
}

typedef struct {
    const char *text;
    const lesson_span *sp;
    int nsp;
    int space; /* the width of a space */
} prose;

static bool wide_at(const char *s, size_t i, size_t e)
{
    uint32_t cp;
    attn_utf8_decode(s + i, e - i, &cp);
    return attn_utf8_is_wide(cp);
}

/* The end of the piece at i, before e: a style change, a space or a newline
 * ends it; when split, a wide character also stands alone. */
static size_t piece_end(const prose *t, size_t i, size_t e, bool split)
{
    unsigned st = style_at(t->sp, t->nsp, (int)i);
    if (split && wide_at(t->text, i, e)) return attn_utf8_next(t->text, e, i);
    size_t j = i;
    while (j < e && t->text[j] != ' ' && t->text[j] != '\n' && style_at(t->sp, t->nsp, (int)j) == st &&
           !(split && wide_at(t->text, j, e)))
        j = attn_utf8_next(t->text, e, j);
    return j;
}

/* Walks the pieces and spaces of text[i..e): measures them (draw false, the
 * width returned) or draws them, a piece on a new line where it does not fit
 * when wrap. A space at the start of a line takes no room. */
static int pieces(pen *p, const prose *t, size_t i, size_t e, bool draw, bool wrap)
{
    int w = 0;
    while (i < e) {
        if (t->text[i] == ' ') {
            if (!draw) w += t->space;
            else if (p->x > p->x0) p->x += t->space;
            i++;
            continue;
        }
        size_t j = piece_end(t, i, e, wrap);
        unsigned st = style_at(t->sp, t->nsp, (int)i);
        if (draw) piece(p, t->text + i, (int)(j - i), st, wrap);
        else w += piece_w(p, t->text + i, (int)(j - i), st);
        i = j;
    }
    return w;
}

/* Lays text[i..e) out at the pen: run by run, a run being what lies between
 * two places a line may break (linebreak.h), on a new line when it does not
 * fit. A run wider than a whole line (a long formula or tuple) is laid out
 * again at the loose breaks, and what is still too wide piece by piece. */
static void runs(pen *p, const prose *t, size_t i, size_t e, bool loose)
{
    bool (*brk)(const char *, size_t) = loose ? draw_break_before_loose : draw_break_before;
    while (i < e) {
        if (t->text[i] == '\n') {
            newline(p);
            i++;
            continue;
        }
        if (t->text[i] == ' ') {
            if (p->x > p->x0) p->x += t->space;
            i++;
            continue;
        }
        size_t r = attn_utf8_next(t->text, e, i);
        while (r < e && t->text[r] != '\n' && !brk(t->text, r)) r = attn_utf8_next(t->text, e, r);
        while (r > i && t->text[r - 1] == ' ') r--;
        int w = pieces(p, t, i, r, false, false);
        if (p->x + w > p->right && p->x > p->x0) newline(p);
        if (w <= p->right - p->x0) pieces(p, t, i, r, true, false);
        else if (!loose) runs(p, t, i, r, true);
        else pieces(p, t, i, r, true, true);
        i = r;
    }
}

/* Lays text out from (x0, y) within [x0, right); returns the y below it. */
static int flow(draw_list *dl, const char *text, const lesson_span *sp, int nsp, int x0, int y, int right,
                uint32_t color, bool draw)
{
    pen p = {dl, x0, right, x0, y, draw_line_h(dl), draw, color};
    prose t = {text, sp, nsp, draw_text_w(dl, " ")};
    runs(&p, &t, 0, strlen(text), false);
    return p.y + p.u + p.u / 4;
}

/* A progress problem (player.h), framed and wrapped, which the status line's
 * messages never replace. Returns the height it takes (and draws it if draw). */
static int progress_chip(draw_list *dl, const app_player *p, int x, int y, int w, bool draw)
{
    if (!p->progress_note[0]) return 0;
    int u = draw_line_h(dl), pad = u / 3;
    int h = flow(dl, p->progress_note, NULL, 0, x + pad, y + u / 6, x + w - pad, DRAW_ERROR, false) - y;
    if (draw) {
        draw_fill(dl, x, y, w, h, DRAW_PANEL_HI);
        draw_outline(dl, x, y, w, h, 1, DRAW_ERROR);
        flow(dl, p->progress_note, NULL, 0, x + pad, y + u / 6, x + w - pad, DRAW_ERROR, true);
    }
    return h + pad;
}

/* ---- buttons */

/* A button's width: its label and half a line either side. */
static int button_w(draw_list *dl, const char *label) { return draw_text_w(dl, label) + draw_line_h(dl); }

static int button(draw_list *dl, int x, int y, const char *label, bool primary, app_action act, int arg)
{
    int u = draw_line_h(dl);
    int w = button_w(dl, label);
    app_rect r = {x, y, w, u + u / 2};
    draw_fill(dl, r.x, r.y, r.w, r.h, primary ? 0xFF2E5E78u : DRAW_PANEL_HI);
    draw_outline(dl, r.x, r.y, r.w, r.h, 1, primary ? DRAW_ACCENT : DRAW_TEXT_DIM);
    draw_text(dl, label, x + u / 2, y + u / 4, DRAW_WHITE);
    app_layout_hit(dl->layout, r, act, arg);
    return w;
}

/* ---- quizzes */

/* Where quiz `quiz` is recorded in the layout (NULL past APP_MAX_QUIZ_PLACES). */
static app_quiz_place *place(draw_list *dl, int quiz)
{
    return quiz >= 0 && quiz < APP_MAX_QUIZ_PLACES ? &dl->layout->quizzes[quiz] : NULL;
}

/* The quiz's answer begins at y, unless it already began above (at its first choice). */
static void answer_from(draw_list *dl, int quiz, int x, int y, int right)
{
    app_quiz_place *pl = place(dl, quiz);
    if (pl && !pl->answer.w) pl->answer = (app_rect){x, y, right - x, 0};
}

/* before_mask: the picture is a stage before the mask (the scores), so the
 * mask has not removed anything there yet */
static const char *cell_instruction(lesson_cell_rule r, bool before_mask)
{
    switch (r) {
    case LESSON_CELLS_MASKED:
        return before_mask ? _("Click every cell the mask will remove, then Check.")
                           : _("Click every cell the mask removes, then Check.");
    case LESSON_CELLS_UNMASKED:
        return before_mask ? _("Click every cell the mask will keep, then Check.")
                           : _("Click every cell the mask keeps, then Check.");
    case LESSON_CELLS_ARGMAX: return _("In every row, click the cell with the largest value, then Check.");
    case LESSON_CELLS_ARGMIN: return _("In every row, click the cell with the smallest value, then Check.");
    default: return _("Click every NaN cell, then Check.");
    }
}

/* The choices' explanations once Check was pressed: for the choices picked,
 * and for all of them once the answer is right. ✓ marks a right choice, ✗ a
 * wrong one, whether picked or not; the choice's own words, dim, say which.
 * They go below Check, never between the choices: what the student points at
 * (a choice, Check) stays where it is whatever is picked or graded. */
static int explanations(draw_list *dl, const app_state *app, int quiz, int x, int y, int right, bool draw)
{
    const app_player *p = &app->lesson;
    const app_quiz_answer *a = &p->answers[quiz];
    const lesson_quiz *q = &p->ls.steps[p->step].quizzes[quiz];
    const lesson_step *st = &p->ls.steps[p->step];
    if (!a->graded) return y;
    int u = draw_line_h(dl);
    for (int i = 0; i < st->n_blocks; i++) {
        const lesson_block *b = &st->blocks[i];
        if (b->kind != LESSON_BLOCK_WHY || b->quiz != quiz || !(a->grade.right || a->picked[b->choice])) continue;
        bool ok = q->correct[b->choice];
        const char *mark = ok ? "✓" : "✗";
        if (draw) draw_text(dl, mark, x, y, ok ? DRAW_GOOD : DRAW_ERROR);
        int mw = draw_text_w(dl, mark) + u / 3;
        for (int k = 0; k < st->n_blocks; k++) /* which choice: its words, on one line */
            if (st->blocks[k].kind == LESSON_BLOCK_CHOICE && st->blocks[k].quiz == quiz &&
                st->blocks[k].choice == b->choice) {
                if (draw) draw_text_fit(dl, st->blocks[k].text, x + mw, y, right - x - mw, DRAW_TEXT_DIM);
                y += u + u / 4;
            }
        y = flow(dl, b->text, b->spans, b->n_spans, x + mw, y, right, DRAW_TEXT, draw) + u / 2;
    }
    return y;
}

/* The quiz's widget from y; returns the y below it. shown (when not NULL, for
 * the quiz just checked): where its Check row begins and its verdict ends. */
static int quiz_widget(draw_list *dl, const app_state *app, const lesson_block *b, int x, int y, int right, bool draw,
                       int shown[2])
{
    const app_player *p = &app->lesson;
    const lesson_quiz *q = &p->ls.steps[p->step].quizzes[b->quiz];
    const app_quiz_answer *a = &p->answers[b->quiz];
    int u = draw_line_h(dl), row = u + u / 2;
    char buf[160];
    if (draw) answer_from(dl, b->quiz, x, y, right);
    if (q->kind == LESSON_QUIZ_CHOICE && q->n_correct > 1)
        y = flow(dl, _("Choose all that apply."), NULL, 0, x, y, right, DRAW_TEXT_DIM, draw);
    if (q->kind == LESSON_QUIZ_CELLS) {
        y = flow(dl, cell_instruction(q->rule, attn_stage_index(app->view.stage) < ATTN_STAGE_MASK), NULL, 0, x, y,
                 right, DRAW_TEXT_DIM, draw);
        int rows, cols, r0, r1, c0, c1;
        if (lesson_quiz_has_region(q) && app_player_answer_cells(p, &app->trace, &app->view, NULL, 0, &rows, &cols) >= 0) {
            lesson_quiz_region(q, rows, cols, &r0, &r1, &c0, &c1);
            snprintf(buf, sizeof buf, _("This quiz is about rows %d–%d and columns %d–%d only."), r0, r1, c0, c1);
            y = flow(dl, buf, NULL, 0, x, y, right, DRAW_TEXT_DIM, draw);
        }
        int picks = 0;
        for (int i = 0; a->cells && i < a->rows * a->cols; i++) picks += a->cells[i];
        snprintf(buf, sizeof buf, _("%d cells picked"), picks);
        y = flow(dl, buf, NULL, 0, x, y, right, DRAW_TEXT_DIM, draw);
    }
    int bx = x;
    if (shown) shown[0] = shown[1] = y;
    if (draw) {
        if (q->kind == LESSON_QUIZ_NUMBER) {
            bool focus = p->focus == b->quiz;
            int fw = 8 * u;
            draw_fill(dl, bx, y, fw, row, focus ? DRAW_BG : DRAW_PANEL_HI);
            draw_outline(dl, bx, y, fw, row, 1, focus ? DRAW_ACCENT : DRAW_TEXT_DIM);
            int tw = draw_text(dl, a->text, bx + u / 3, y + u / 4, DRAW_WHITE);
            if (focus) draw_line_to(dl, bx + u / 3 + tw, y + u / 4, bx + u / 3 + tw, y + u / 4 + u, 2, DRAW_WHITE);
            else if (!a->text[0]) draw_text(dl, _("type a number"), bx + u / 3, y + u / 4, DRAW_TEXT_DIM);
            app_layout_hit(dl->layout, (app_rect){bx, y, fw, row}, APP_ACT_LESSON_FIELD, b->quiz);
            bx += fw + u / 2;
        }
        bx += button(dl, bx, y, _("Check"), true, APP_ACT_LESSON_CHECK, b->quiz) + u / 2;
        if (q->kind == LESSON_QUIZ_CELLS && a->tries && !a->grade.right)
            button(dl, bx, y, a->show ? _("Hide answer") : _("Show answer"), false, APP_ACT_LESSON_REVEAL, b->quiz);
        app_quiz_place *pl = place(dl, b->quiz);
        if (pl) pl->answer.h = y + row - pl->answer.y;
    }
    y += row + u / 2;
    if (a->feedback[0]) {
        uint32_t c = !a->graded ? DRAW_TEXT : a->grade.right ? DRAW_GOOD : DRAW_ERROR;
        y = flow(dl, a->feedback, NULL, 0, x, y, right, c, draw);
        if (shown) shown[1] = y;
        if (a->graded && a->grade.right && q->explain) y = flow(dl, q->explain, NULL, 0, x, y, right, DRAW_TEXT, draw);
        if (a->graded && !a->grade.right && q->hint) {
            const char *lead = _("Hint: ");
            char line[600];
            snprintf(line, sizeof line, "%s%s", lead, q->hint);
            lesson_span sp = {0, (int)strlen(lead), LESSON_STRONG};
            y = flow(dl, line, &sp, 1, x, y, right, DRAW_TEXT, draw);
        }
    } else if (p->progress && lesson_progress_quiz_result(p->progress, p->name, p->step, b->quiz) == 1) {
        y = flow(dl, _("✓ answered right before"), NULL, 0, x, y, right, DRAW_TEXT_DIM, draw);
    }
    if (q->kind == LESSON_QUIZ_CHOICE) y = explanations(dl, app, b->quiz, x, y, right, draw);
    return y + u / 2;
}

/* ---- blocks */

static int block(draw_list *dl, const app_state *app, const lesson_block *b, int x, int y, int right, bool draw,
                 int shown[2])
{
    int u = draw_line_h(dl);
    int gap = u / 2;
    switch (b->kind) {
    case LESSON_BLOCK_HEADING:
        return flow(dl, b->text, NULL, 0, x, y + u / 4, right, DRAW_WHITE, draw) + gap / 2;
    case LESSON_BLOCK_ITEM: {
        int ind = x + (b->level - 1) * u;
        int mw = draw_imax(draw_text_w(dl, b->marker), u / 2) + u / 3;
        if (draw) draw_text(dl, b->marker, ind, y, DRAW_ACCENT);
        return flow(dl, b->text, b->spans, b->n_spans, ind + mw, y, right, DRAW_TEXT, draw) + gap / 2;
    }
    case LESSON_BLOCK_QUOTE: {
        int ny = flow(dl, b->text, b->spans, b->n_spans, x + u, y, right, DRAW_TEXT_DIM, draw);
        if (draw) draw_line_to(dl, x + u / 4, y, x + u / 4, ny - u / 4, 3, DRAW_TEXT_DIM);
        return ny + gap;
    }
    case LESSON_BLOCK_CODE: {
        int lines = 1;
        for (const char *c = b->text; *c; c++) lines += *c == '\n';
        int h = lines * (u + u / 8) + u / 2;
        if (draw) {
            draw_fill(dl, x, y, right - x, h, DRAW_BG);
            char line[512];
            const char *s = b->text;
            for (int i = 0; i < lines; i++) {
                const char *nl = strchr(s, '\n');
                int n = nl ? (int)(nl - s) : (int)strlen(s);
                snprintf(line, sizeof line, "%.*s", n, s);
                draw_text_fit(dl, line, x + u / 3, y + u / 4 + i * (u + u / 8), right - x - u / 2, DRAW_CODE);
                s = nl ? nl + 1 : s + n;
            }
        }
        return y + h + gap;
    }
    case LESSON_BLOCK_TABLE_ROW:
        if (draw) draw_text_fit(dl, b->text, x, y, right - x, b->level ? DRAW_WHITE : DRAW_TEXT);
        return y + u + u / 4;
    case LESSON_BLOCK_CHOICE: {
        const app_player *p = &app->lesson;
        const app_quiz_answer *a = &p->answers[b->quiz];
        const lesson_quiz *q = &p->ls.steps[p->step].quizzes[b->quiz];
        int ind = x + (b->level - 1) * u;
        int box = u - 2;
        int ny = flow(dl, b->text, b->spans, b->n_spans, ind + box + u / 2, y, right, DRAW_TEXT, draw);
        if (draw) {
            bool on = a->picked[b->choice];
            uint32_t c = on ? DRAW_ACCENT : DRAW_TEXT_DIM;
            if (a->graded && on) c = q->correct[b->choice] ? DRAW_GOOD : DRAW_ERROR;
            draw_outline(dl, ind, y + 1, box, box, 2, c);
            if (on) draw_fill(dl, ind + 4, y + 5, box - 8, box - 8, c);
            app_layout_hit(dl->layout, (app_rect){ind, y - u / 8, right - ind, ny - y}, APP_ACT_LESSON_CHOICE, b->quiz << 8 | b->choice);
            answer_from(dl, b->quiz, x, y - u / 8, right);
        }
        return ny + gap / 2;
    }
    case LESSON_BLOCK_WHY: return y; /* drawn below Check (explanations) */
    case LESSON_BLOCK_QUIZ: return quiz_widget(dl, app, b, x, y, right, draw, shown);
    default: return flow(dl, b->text, b->spans, b->n_spans, x, y, right, DRAW_TEXT, draw) + gap;
    }
}

/* The last step's end, from y: whether the lesson is finished (its end reached
 * and every quiz answered right, progress.h; not said when no progress is
 * kept, for want of a HOME: the answers are not known) and, when the course
 * goes on, a button to the next lesson, the width of the panel at most (a
 * long title cut with "…"). Returns the y below. */
static int lesson_end(draw_list *dl, const app_player *p, int x, int y, int right, bool draw)
{
    int u = draw_line_h(dl), total = lesson_quiz_count(&p->ls);
    char buf[400], num[16];
    lesson_record r = app_player_record(p);
    y += u / 2;
    if (p->progress) {
        const char *all = total ? _("✓ Lesson finished: every quiz answered right.") : _("✓ Lesson finished.");
        if (r.finished)
            snprintf(buf, sizeof buf, "%s", all);
        else
            snprintf(buf, sizeof buf,
                     /* TRANSLATORS: the end of a lesson's last step, while some quizzes are unanswered or wrong */
                     _("Quizzes answered right: %d of %d. The lesson counts as finished once every one is."),
                     r.quizzes_right, total);
        y = flow(dl, buf, NULL, 0, x, y, right, r.finished ? DRAW_GOOD : DRAW_TEXT_DIM, draw);
    }
    if (!p->next.path) return y;
    app_player_lesson_number(p->next.name, num, sizeof num);
    /* TRANSLATORS: the button on a lesson's last step: the next lesson's number and title */
    snprintf(buf, sizeof buf, _("Next lesson: %s %s ▶"), num, p->next.title);
    int w = draw_imin(button_w(dl, buf), right - x), h = u + u / 2;
    if (draw) {
        draw_fill(dl, x, y, w, h, 0xFF2E5E78u);
        draw_outline(dl, x, y, w, h, 1, DRAW_ACCENT);
        draw_text_fit(dl, buf, x + u / 2, y + u / 4, w - u, DRAW_WHITE);
        app_layout_hit(dl->layout, (app_rect){x, y, w, h}, APP_ACT_LESSON_ONWARD, 0);
    }
    return y + h + u / 2;
}

/* The paragraph block that asks quiz q of st (its question, the paragraph
 * just before it), or -1. */
static int question_block(const lesson_step *st, int q)
{
    int first = 0;
    while (first < st->n_blocks && !(st->blocks[first].quiz == q && (st->blocks[first].kind == LESSON_BLOCK_CHOICE ||
                                                                      st->blocks[first].kind == LESSON_BLOCK_QUIZ)))
        first++;
    for (int k = first - 1; k >= 0; k--)
        if (st->blocks[k].kind == LESSON_BLOCK_PARA)
            return !strcmp(st->blocks[k].text, st->quizzes[q].question) ? k : -1;
    return -1;
}

/* Where quiz q begins: its question, or the quiz itself without one. */
static int quiz_from(const lesson_step *st, int q)
{
    int k = question_block(st, q);
    if (k >= 0) return k;
    for (k = 0; k < st->n_blocks && st->blocks[k].quiz != q; k++) {}
    return k;
}

/* The quiz to answer: the first one not answered right (the last when all are). */
static int quiz_now(const app_player *p, const lesson_step *st)
{
    int q = 0;
    while (q + 1 < st->n_quizzes && p->answers[q].graded && p->answers[q].grade.right) q++;
    return q;
}

/* The step's blocks [from, to) from y (from -1: the introduction first, on
 * the first step, then the blocks from 0); returns the y below them. shown (when not NULL):
 * where the Check row of the quiz just checked (shown_quiz) begins and its
 * verdict ends; untouched without one. Drawn, each quiz's question is recorded
 * in the layout. */
static int content(draw_list *dl, const app_state *app, int x, int y, int right, bool draw, int shown[2], int from,
                   int to)
{
    const app_player *p = &app->lesson;
    const lesson_step *st = &p->ls.steps[p->step];
    for (int i = 0; from < 0 && p->step == 0 && i < p->ls.intro.n_blocks; i++) {
        const lesson_block *b = &p->ls.intro.blocks[i];
        if (b->kind != LESSON_BLOCK_QUIZ && b->kind != LESSON_BLOCK_CHOICE && b->kind != LESSON_BLOCK_WHY)
            y = block(dl, app, b, x, y, right, draw, NULL);
    }
    if (from < 0) from = 0;
    for (int i = from; i < to; i++) {
        const lesson_block *b = &st->blocks[i];
        bool checked = shown && b->kind == LESSON_BLOCK_QUIZ && b->quiz == p->shown_quiz;
        int top = y;
        y = block(dl, app, b, x, y, right, draw, checked ? shown : NULL);
        for (int q = 0; draw && b->kind == LESSON_BLOCK_PARA && q < st->n_quizzes && q < APP_MAX_QUIZ_PLACES; q++)
            if (question_block(st, q) == i) dl->layout->quizzes[q].question = (app_rect){x, top, right - x, y - draw_line_h(dl) / 2 - top};
    }
    return p->step + 1 >= p->ls.n_steps && to >= st->n_blocks ? lesson_end(dl, p, x, y, right, draw) : y;
}

/* The lesson's title, the step's, and progress through the steps, from y; returns the y below.
 * large (presenter mode): the step's title on a line of its own, half as large again. */
static int lesson_header(draw_list *dl, const app_player *p, int x, int y, int right, bool large)
{
    int u = draw_line_h(dl);
    char label[64];
    draw_text_fit(dl, p->ls.title, x, y, right - x, DRAW_ACCENT);
    y += u + u / 3;
    app_player_step_label(p, label, sizeof label);
    int lw = draw_text(dl, label, x, y, DRAW_TEXT_DIM) + u / 2;
    if (large) {
        y += u + u / 4;
        int px = dl->px;
        dl->px = px * 3 / 2;
        draw_text_fit(dl, p->ls.steps[p->step].title, x, y, right - x, DRAW_WHITE);
        y += draw_line_h(dl) + u / 4;
        dl->px = px;
    } else {
        draw_text_fit(dl, p->ls.steps[p->step].title, x + lw, y, right - x - lw, DRAW_WHITE);
        y += u + u / 3;
    }
    int n = p->ls.n_steps, seg = draw_imax(2, (right - x) / draw_imax(1, n));
    for (int i = 0; i < n; i++)
        draw_fill(dl, x + i * seg, y, seg - 2, u / 4, i < p->step ? DRAW_ACCENT : i == p->step ? DRAW_WHITE : DRAW_PANEL_HI);
    y += u / 2 + u / 4;
    return y + progress_chip(dl, p, x, y, right - x, true);
}

/* The navigation buttons along y, their labels shortened (Restore's first, to a
 * word, then to ↺; then ◀, then ☰) while the whole row does not fit (large text
 * in a narrow panel). */
static void lesson_footer(draw_list *dl, const app_player *p, int x, int y, int right)
{
    int u = draw_line_h(dl);
    const char *back = _("◀ Back"), *restore = _("↺ Restore step"), *lessons = _("☰ Lessons"), *next = _("Next ▶");
    bool last = p->step + 1 >= p->ls.n_steps;
    const char *end = last ? _("Last step ✓") : next;
    for (int shorter = 0; shorter < 5; shorter++) {
        int need = (p->step > 0 ? button_w(dl, back) + u / 3 : 0) + button_w(dl, restore) + u / 3 +
                   button_w(dl, lessons) + u / 3 + (last ? draw_text_w(dl, end) : button_w(dl, end));
        if (x + need <= right) break;
        if (shorter == 0) restore = _("↺ Restore"); /* the least used first; Back keeps its word longest */
        else if (shorter == 1) restore = "↺";
        else if (shorter == 2) back = "◀";
        else lessons = "☰";
    }
    if (p->step > 0) x += button(dl, x, y, back, false, APP_ACT_LESSON_PREV, 0) + u / 3;
    x += button(dl, x, y, restore, false, APP_ACT_LESSON_RESTORE, 0) + u / 3;
    x += button(dl, x, y, lessons, false, APP_ACT_PICKER, 0) + u / 3;
    if (!last)
        button(dl, draw_imax(x, right - button_w(dl, next)), y, next, true, APP_ACT_LESSON_NEXT, 0);
    else
        draw_text_fit(dl, end, draw_imax(x, right - draw_text_w(dl, end)), y + u / 4, right - x, DRAW_GOOD);
}

/* Blocks [from, to), `total` pixels tall, inside box from x to right,
 * scrolled by *scroll (kept in range; shown, from content, scrolls the quiz
 * just checked into view), with a scroll bar at bar_x and, when more is below,
 * "▼ more below" on a line of its own under them. Returns how far it scrolls. */
static int scrolled(draw_list *dl, const app_state *app, app_rect box, int x, int right, int bar_x, int from, int to,
                    int total, int *scroll, const int shown[2])
{
    int u = draw_line_h(dl);
    app_layout *l = dl->layout;
    app_rect clip = box;
    if (total > box.h) clip.h -= u + u / 4; /* the cue's line */
    int max = draw_imax(0, total - clip.h), s = draw_imax(0, draw_imin(*scroll, max));
    /* a quiz just checked whose verdict is below the fold: scrolled up just
     * enough to show its Check and the verdict under it (the choices above move
     * as little as can be, to be picked again; the explanations further down
     * are the wheel's), never so far that Check leaves the top */
    if (shown && shown[1] > s + clip.h) s = draw_imax(0, draw_imin(max, draw_imin(shown[0], shown[1] - clip.h + u / 2)));
    *scroll = s;
    draw_clip_push(dl, clip);
    int first_hit = l->n_hits;
    content(dl, app, x, clip.y - s, right, true, NULL, from, to);
    /* hits scrolled out of view must not take clicks */
    for (int i = first_hit; i < l->n_hits; i++) l->hits[i].r = app_rect_intersect(l->hits[i].r, clip);
    draw_clip_pop(dl);
    if (max > 0) {
        int bh = draw_imax(u, clip.h * clip.h / (clip.h + max));
        draw_fill(dl, bar_x, clip.y + (clip.h - bh) * s / max, u / 5, bh, DRAW_TEXT_DIM);
    }
    if (s < max) { /* more below the fold: said, not only a thin bar */
        /* TRANSLATORS: the lesson panel's text goes on below what it shows; the wheel scrolls, a click pages down */
        const char *more = _("▼ more below");
        int mw = draw_text_w(dl, more) + u / 2, my = clip.y + clip.h;
        draw_fill(dl, right - mw, my, mw, u + u / 4, DRAW_PANEL_HI);
        draw_text(dl, more, right - mw + u / 4, my + u / 8, DRAW_TEXT);
        app_layout_hit(l, (app_rect){right - mw, my, mw, u + u / 4}, APP_ACT_LESSON_MORE, scroll == &l->dock_scroll);
    }
    return max;
}

/* The step inside body, from x to right, scroll bars at bar_x. When its text
 * and quizzes do not fit together, the quizzes (from the first one's
 * question on) are docked at the bottom, whole, and the text above them
 * scrolls on its own; the text keeps a few lines however tall the quizzes
 * are. Quizzes too tall together are docked from the one to answer (those
 * answered right go up with the text); what still does not fit (explanations,
 * once checked) scrolls in the dock. */
static void step_body(draw_list *dl, const app_state *app, app_rect body, int x, int right, int bar_x)
{
    const lesson_step *st = &app->lesson.ls.steps[app->lesson.step];
    app_layout *l = dl->layout;
    int u = draw_line_h(dl), n = st->n_blocks, from = st->n_quizzes ? quiz_from(st, 0) : n;
    int shown_text[2] = {-1, -1}, shown_dock[2] = {-1, -1};
    int text_h = content(dl, app, x, 0, right, false, NULL, -1, from);
    int quiz_h = content(dl, app, x, 0, right, false, NULL, from, n);
    l->lesson_view = body;
    if (body.h <= 0) return;
    /* all of it fits, or there is no quiz, or too little room for two scrolls (a phone): one text */
    if (from >= n || text_h + quiz_h <= body.h || body.h < 14 * u) {
        int shown[2] = {-1, -1}, total = content(dl, app, x, 0, right, false, shown, -1, n);
        l->dock_scroll = l->dock_scroll_max = 0;
        l->lesson_scroll_max = scrolled(dl, app, body, x, right, bar_x, -1, n, total, &l->lesson_scroll, shown);
        return;
    }
    int keep = draw_imin(body.h / 2, draw_imax(3 * u, body.h / 5)), gap = u / 2;
    int now = quiz_from(st, quiz_now(&app->lesson, st));
    if (quiz_h > body.h - keep - gap && now > from) from = now;
    text_h = content(dl, app, x, 0, right, false, shown_text, -1, from);
    quiz_h = content(dl, app, x, 0, right, false, shown_dock, from, n);
    if (!text_h) gap = 0;
    int th = text_h ? draw_imax(draw_imin(keep, text_h), body.h - quiz_h - gap) : 0;
    app_rect text = {body.x, body.y, body.w, th}, dock = {body.x, body.y + th + gap, body.w, body.h - th - gap};
    l->lesson_dock = dock;
    if (th > 0) draw_fill(dl, x, dock.y - gap / 2 - 1, right - x, 2, DRAW_PANEL_HI);
    l->dock_scroll_max = scrolled(dl, app, dock, x, right, bar_x, from, n, quiz_h, &l->dock_scroll, shown_dock);
    l->lesson_scroll_max =
        th > 0 ? scrolled(dl, app, text, x, right, bar_x, -1, from, text_h, &l->lesson_scroll, shown_text) : 0;
}

void draw_lesson(const app_state *app, draw_list *dl, app_rect box)
{
    const app_player *p = &app->lesson;
    int u = draw_line_h(dl);
    draw_fill(dl, box.x, box.y, box.w, box.h, DRAW_PANEL);
    draw_fill(dl, box.x, box.y, 2, box.h, DRAW_PANEL_HI);
    int x = box.x + u, right = box.x + box.w - u;
    int y = lesson_header(dl, p, x, box.y + u / 2, right, app->present);
    if (!p->answers) return; /* loaded, its first step still opening */
    int fy = box.y + box.h - (u + u / 2 + u / 2);
    lesson_footer(dl, p, x, fy, right);
    step_body(dl, app, (app_rect){box.x, y, box.w, fy - u / 2 - y}, x, right, box.x + box.w - u / 3);
}

/* ---- marks on the heatmap */

/* The stage's cell (i, j) framed where area a draws it. A zoomed area shows
 * the stage from its cell (row0, col0): a cell outside its window is not drawn.
 * A thin black line inside the frame keeps it visible on a bright cell, the
 * colour of a green or yellow frame (a right pick is the brightest cell of
 * its row). */
static void cell_frame(draw_list *dl, const app_heat_area *a, int i, int j, int t, uint32_t c)
{
    int x, y, w, h;
    i -= a->row0;
    j -= a->col0;
    if (i < 0 || j < 0 || i >= a->rows || j >= a->cols) return;
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i, j, &x, &y, &w, &h);
    if (w <= 0 || h <= 0) return;
    t = draw_imin(t, draw_imax(1, draw_imin(w, h) / 3));
    draw_outline(dl, a->r.x + x, a->r.y + y, w, h, t, c);
    if (t > 1 && w > 2 * t + 4 && h > 2 * t + 4) draw_outline(dl, a->r.x + x + t, a->r.y + y + t, w - 2 * t, h - 2 * t, 1, DRAW_BLACK);
}

/* The step's highlight (a row, a column or cells of the stage) on area a. */
static void highlight(draw_list *dl, const app_heat_area *a, const lesson_marks *m)
{
    if (m->hl == LESSON_HL_ROW)
        for (int j = a->col0; j < a->col0 + a->cols; j++) cell_frame(dl, a, m->hl_index, j, 2, DRAW_MARK);
    if (m->hl == LESSON_HL_COL)
        for (int i = a->row0; i < a->row0 + a->rows; i++) cell_frame(dl, a, i, m->hl_index, 2, DRAW_MARK);
    for (int c = 0; m->hl == LESSON_HL_CELLS && c < m->n_hl_cells; c++)
        cell_frame(dl, a, m->hl_cells[c][0], m->hl_cells[c][1], 3, DRAW_MARK);
}

/* The stage's rows r0..r1 and columns c0..c1 (both included) framed on area
 * a, cut to its window; nothing when the window shows no more than them. */
static void region_frame(draw_list *dl, const app_heat_area *a, int r0, int r1, int c0, int c1)
{
    int i0 = draw_imax(r0, a->row0) - a->row0, i1 = draw_imin(r1, a->row0 + a->rows - 1) - a->row0;
    int j0 = draw_imax(c0, a->col0) - a->col0, j1 = draw_imin(c1, a->col0 + a->cols - 1) - a->col0;
    if (i0 > i1 || j0 > j1 || (i0 == 0 && j0 == 0 && i1 == a->rows - 1 && j1 == a->cols - 1)) return;
    int x0, y0, x1, y1, w, h;
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i0, j0, &x0, &y0, &w, &h);
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i1, j1, &x1, &y1, &w, &h);
    draw_outline(dl, a->r.x + x0, a->r.y + y0, x1 + w - x0, y1 + h - y0, 2, DRAW_TEXT_DIM);
}

/* The cell quiz on area a (the graded tensor and head): its region, the
 * answer when asked for, and the picks, coloured once checked. right: the
 * right cells of the stage's rows × cols picture, NULL when unknown. */
static void quiz_marks(draw_list *dl, const app_heat_area *a, const lesson_quiz *q, const app_quiz_answer *ans,
                       const unsigned char *right, int rows, int cols)
{
    int r0, r1, c0, c1;
    lesson_quiz_region(q, rows, cols, &r0, &r1, &c0, &c1);
    if (rows > 0 && cols > 0 && lesson_quiz_has_region(q)) region_frame(dl, a, r0, r1, c0, c1);
    int i_end = draw_imin(a->row0 + a->rows, rows), j_end = draw_imin(a->col0 + a->cols, cols);
    if (ans->show && right)
        for (int i = a->row0; i < i_end; i++)
            for (int j = a->col0; j < j_end; j++)
                if (right[(size_t)i * cols + j]) cell_frame(dl, a, i, j, 1, DRAW_WHITE);
    if (!ans->cells || ans->rows != rows || ans->cols != cols) return;
    for (int i = a->row0; i < i_end; i++)
        for (int j = a->col0; j < j_end; j++) {
            if (!ans->cells[(size_t)i * cols + j]) continue;
            uint32_t c = DRAW_ACCENT;
            if (ans->graded && right) c = right[(size_t)i * cols + j] ? DRAW_GOOD : DRAW_ERROR;
            cell_frame(dl, a, i, j, 4, c);
        }
}

void draw_lesson_marks(const app_state *app, draw_list *dl)
{
    const app_player *p = &app->lesson;
    if (!p->open || (app->view.mode != LESSON_VIEW_SINGLE && app->view.mode != LESSON_VIEW_GRID)) return;
    /* areas name their tensor ("layers.2.weights"), the lesson a stage ("weights") of the layer shown */
    const attn_tensor *hl = p->marks.hl != LESSON_HL_NONE ? lesson_stage_tensor(&app->trace, p->view.stage, app->view.layer)
                                                          : NULL;
    const attn_tensor *graded = app_player_quiz_tensor(p, &app->trace, &app->view);
    const lesson_quiz *q = graded ? &p->ls.steps[p->step].quizzes[p->cell_quiz] : NULL;
    const app_quiz_answer *ans = graded ? &p->answers[p->cell_quiz] : NULL;
    unsigned char *right = NULL;
    int rows = 0, cols = 0;
    if (graded && app_player_answer_cells(p, &app->trace, &app->view, NULL, 0, &rows, &cols) < 0) graded = NULL;
    if (graded && (ans->show || ans->graded)) { /* the answer, only when it is drawn */
        size_t n = (size_t)rows * (size_t)cols;
        right = malloc(n);
        if (right && app_player_answer_cells(p, &app->trace, &app->view, right, n, NULL, NULL) < 0) {
            free(right);
            right = NULL;
        }
    }
    for (int k = 0; k < dl->layout->n_areas; k++) {
        const app_heat_area *a = &dl->layout->areas[k];
        if (a->pane != 0) continue;
        if (hl && !strcmp(a->stage, hl->name)) highlight(dl, a, &p->marks);
        if (graded && !strcmp(a->stage, graded->name) && a->head == app->view.head)
            quiz_marks(dl, a, q, ans, right, rows, cols);
    }
    free(right);
}

/* ---- the picker */

/* "▲ 3 more" / "▼ 3 more": lessons above or below the ones shown; a click
 * selects lesson `to`, which scrolls the list there. */
static void more_cue(draw_list *dl, const char *arrow, int n, int to, int x, int y, int w)
{
    char buf[80];
    if (n <= 0) return;
    /* TRANSLATORS: the picker's cue for lessons scrolled out of view: an arrow and how many */
    snprintf(buf, sizeof buf, _("%s %d more"), arrow, n);
    int tw = draw_text_w(dl, buf);
    draw_text(dl, buf, x + (w - tw) / 2, y, DRAW_ACCENT);
    app_layout_hit(dl->layout, (app_rect){x, y, w, draw_line_h(dl)}, APP_ACT_PICK_SHOW, to);
}

/* A lesson's progress as its picker row says it. */
static const char *entry_progress(const app_player *p, const lesson_entry *e, char *buf, size_t size)
{
    lesson_record r = app_player_entry_record(p, e);
    if (e->error) snprintf(buf, size, "%s", _("cannot open"));
    else if (r.finished)
        snprintf(buf, size, _("✓ finished · quizzes %d/%d"), r.quizzes_right, e->n_quizzes);
    else if (r.reached_end)
        /* TRANSLATORS: the picker: the last step was reached, but not every quiz answered right yet */
        snprintf(buf, size, _("last step reached · quizzes %d/%d"), r.quizzes_right, e->n_quizzes);
    else if (r.step)
        snprintf(buf, size, _("step %d / %d · quizzes %d/%d"), r.step, e->n_steps, r.quizzes_right, e->n_quizzes);
    else snprintf(buf, size, _("%d steps · not started"), e->n_steps);
    return buf;
}

/* 0 when every lesson's title fits on its row beside its progress; else
 * (a narrow window) the lines the longest title takes wrapped on a row of
 * its own, above the progress (at most 3). */
static int picker_title_lines(draw_list *dl, const app_player *p, int w, int numw)
{
    int u = draw_line_h(dl), lines = 1;
    bool fit = true;
    char buf[400];
    for (int i = 0; p->have_catalog && i < p->catalog.n; i++) {
        const lesson_entry *e = &p->catalog.items[i];
        int pw = draw_text_w(dl, entry_progress(p, e, buf, sizeof buf));
        fit = fit && draw_text_w(dl, e->title) <= w - pw - 2 * u - numw;
        lines = draw_imax(lines, draw_text_wrap_lines(dl, e->title, w - u - numw));
    }
    return fit ? 0 : draw_imin(lines, 3);
}

/* Lesson i's row at y, h tall: its number, title, progress and summary;
 * lines (picker_title_lines) not 0: the title wrapped, the progress under it. */
static void picker_row(draw_list *dl, const app_player *p, int i, int x, int y, int w, int h, int lines)
{
    const lesson_entry *e = &p->catalog.items[i];
    int u = draw_line_h(dl), numw = draw_text_w(dl, "00") + u; /* the number column: 00 … 15, 99 */
    bool sel = i == p->sel;
    char buf[400], num[16];
    draw_fill(dl, x, y, w, h, sel ? DRAW_PANEL_HI : DRAW_PANEL);
    if (sel) draw_outline(dl, x, y, w, h, 1, DRAW_ACCENT);
    lesson_record r = app_player_entry_record(p, e);
    uint32_t pc = e->error ? DRAW_ERROR : r.finished ? DRAW_GOOD : DRAW_TEXT_DIM;
    entry_progress(p, e, buf, sizeof buf);
    int pw = draw_text_w(dl, buf), tx = x + u / 2 + numw, ty = y + u / 4;
    draw_text(dl, app_player_lesson_number(e->name, num, sizeof num), x + u / 2, ty, DRAW_ACCENT);
    if (lines) {
        ty += draw_text_wrap(dl, e->title, tx, ty, w - u - numw, sel ? DRAW_WHITE : DRAW_TEXT) * u;
        draw_text_fit(dl, buf, tx, ty, w - u - numw, pc);
        ty += u;
    } else {
        draw_text(dl, buf, x + w - pw - u / 2, ty, pc);
        draw_text_fit(dl, e->title, tx, ty, w - pw - 2 * u - numw, sel ? DRAW_WHITE : DRAW_TEXT);
        ty += u;
    }
    draw_text_fit(dl, e->error ? e->error : e->summary, tx, ty, w - u - numw, DRAW_TEXT_DIM);
    app_layout_hit(dl->layout, (app_rect){x, y, w, h}, APP_ACT_PICK, i);
}

/* The picker's title line at y: "Lessons (English)" and, at its end, ✕ (closes it). */
static void picker_title(draw_list *dl, const app_player *p, int x, int y, int w)
{
    int u = draw_line_h(dl), bw = 2 * u, bh = u + u / 2;
    char buf[200];
    snprintf(buf, sizeof buf, _("Lessons (%s)"), !strcmp(p->lang, "zh") ? "中文" : "English");
    draw_text_fit(dl, buf, x, y, w - bw - u / 2, DRAW_WHITE);
    app_rect close = {x + w - bw, y - u / 4, bw, bh};
    draw_fill(dl, close.x, close.y, close.w, close.h, DRAW_PANEL_HI);
    draw_outline(dl, close.x, close.y, close.w, close.h, 1, DRAW_TEXT_DIM);
    draw_text(dl, "✕", close.x + (bw - draw_text_w(dl, "✕")) / 2, y, DRAW_WHITE);
    /* TRANSLATORS: the tooltip of the picker's ✕ button */
    app_layout_hit_tip(dl->layout, close, APP_ACT_PICKER, 0, _("close the list (Esc, or a click outside it)"));
}

void draw_picker(const app_state *app, draw_list *dl)
{
    const app_player *p = &app->lesson;
    int u = draw_line_h(dl);
    int W = dl->layout->full_width, H = dl->layout->full_height;
    draw_fill(dl, 0, 0, W, H, 0xF4101016u);
    int w = draw_imin(W - 2 * u, 60 * u), x = (W - w) / 2, y = u;
    dl->layout->picker_box = (app_rect){x, 0, w + u / 2, H}; /* the scroll bar's width too */
    picker_title(dl, p, x, y, w);
    y += u + u / 2;
    int numw = draw_text_w(dl, "00") + u, lines = picker_title_lines(dl, p, w, numw);
    int row = lines ? (lines + 2) * u + u / 2 : 2 * u + u / 2, cue = u + u / 4; /* a line above and below the list for the scroll cues */
    int chip = progress_chip(dl, p, x, 0, w, false);
    /* an error from opening a lesson (or any other) in front of the list, not dimmed behind it */
    bool said = app->status_error && app->status[0];
    int foot = 2 * u + u / 2 + chip + (said ? u : 0);
    int n = p->have_catalog ? p->catalog.n : 0;
    int visible = draw_imax(1, (H - y - 2 * cue - foot) / row);
    /* the scroll kept in range, with the selection in view */
    int first = p->picker_first;
    if (p->sel >= 0 && p->sel < first) first = p->sel;
    if (p->sel >= first + visible) first = p->sel - visible + 1;
    first = draw_imax(0, draw_imin(first, n - visible));
    dl->layout->picker_first = first;
    dl->layout->picker_rows = visible;
    more_cue(dl, "▲", first, draw_imax(0, first - visible), x, y, w); /* a page up */
    y += cue;
    dl->layout->picker_list = (app_rect){x, y, w, visible * row};
    for (int i = first; i < n && i < first + visible; i++) picker_row(dl, p, i, x, y + (i - first) * row, w, row - u / 4, lines);
    if (n > visible) { /* a scroll bar beside the list */
        int track = visible * row - u / 4, bh = draw_imax(u, track * visible / n);
        int by = y + (track - bh) * first / draw_imax(1, n - visible);
        draw_fill(dl, x + w + u / 4, y, u / 5, track, DRAW_PANEL);
        draw_fill(dl, x + w + u / 4, by, u / 5, bh, DRAW_ACCENT);
    }
    int shown = draw_imax(0, draw_imin(visible, n - first));
    more_cue(dl, "▼", n - first - shown, draw_imin(n - 1, first + shown + visible - 1), x, y + shown * row, w); /* a page down */
    if (!p->have_catalog && app_player_listing(p)) draw_text(dl, _("Reading the lessons …"), x, y, DRAW_TEXT_DIM);
    else if (!p->have_catalog || !p->catalog.n) draw_text(dl, _("No lessons found."), x, y, DRAW_ERROR);
    const char *help = p->confirm_reset ? _("Press Delete again to forget all progress; any other key keeps it.")
                                        : _("↑ ↓ wheel choose · Enter open · Esc close · Delete reset progress");
    progress_chip(dl, p, x, H - foot + u / 2, w, true);
    if (said) draw_text_fit(dl, app->status, x, H - foot + u / 2 + chip, w, DRAW_ERROR);
    draw_text_fit(dl, help, x, H - foot + u / 2 + chip + (said ? u : 0), w, p->confirm_reset ? DRAW_ERROR : DRAW_TEXT_DIM);
}
