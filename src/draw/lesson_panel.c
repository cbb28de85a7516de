/* lesson_panel.c — draws the lesson panel, the quiz marks on the heatmap and the picker. */
#include "lesson_panel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "i18n.h"
#include "linebreak.h"

#define UI_CODE   0xFFFFD580u
#define UI_EMPH   0xFFB3E5FCu


/* ---- wrapped, styled text */

static unsigned style_at(const lesson_span *sp, int n, int pos)
{
    for (int i = 0; i < n; i++)
        if (pos >= sp[i].start && pos < sp[i].end) return sp[i].style;
    return 0;
}

typedef struct {
    ui_draw *dl;
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
    return style & LESSON_STRONG ? ui_text_w_bold(p->dl, buf) : ui_text_w(p->dl, buf);
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
            ui_fill(p->dl, p->x - 2, p->y, w + 4, p->u + 2, UI_PANEL_HI);
            c = UI_CODE;
        } else if (style & LESSON_STRONG) {
            c = UI_WHITE;
        } else if (style & (LESSON_EM | LESSON_LINK)) {
            c = UI_EMPH;
        }
        if (bold) ui_text_bold(p->dl, buf, p->x, p->y, c);
        else ui_text(p->dl, buf, p->x, p->y, c);
        if (style & LESSON_LINK) ui_line_to(p->dl, p->x, p->y + p->u, p->x + w, p->y + p->u, 1, c);
        if (style & LESSON_DEL) ui_line_to(p->dl, p->x, p->y + p->u / 2, p->x + w, p->y + p->u / 2, 1, c);
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
    bool (*brk)(const char *, size_t) = loose ? ui_break_before_loose : ui_break_before;
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
static int flow(ui_draw *dl, const char *text, const lesson_span *sp, int nsp, int x0, int y, int right,
                uint32_t color, bool draw)
{
    pen p = {dl, x0, right, x0, y, ui_line(dl), draw, color};
    prose t = {text, sp, nsp, ui_text_w(dl, " ")};
    runs(&p, &t, 0, strlen(text), false);
    return p.y + p.u + p.u / 4;
}

/* A progress problem (player.h), framed and wrapped, which the status line's
 * messages never replace. Returns the height it takes (and draws it if draw). */
static int progress_chip(ui_draw *dl, const ui_player *p, int x, int y, int w, bool draw)
{
    if (!p->progress_note[0]) return 0;
    int u = ui_line(dl), pad = u / 3;
    int h = flow(dl, p->progress_note, NULL, 0, x + pad, y + u / 6, x + w - pad, UI_ERROR, false) - y;
    if (draw) {
        ui_fill(dl, x, y, w, h, UI_PANEL_HI);
        ui_frame(dl, x, y, w, h, 1, UI_ERROR);
        flow(dl, p->progress_note, NULL, 0, x + pad, y + u / 6, x + w - pad, UI_ERROR, true);
    }
    return h + pad;
}

/* ---- buttons */

/* A button's width: its label and half a line either side. */
static int button_w(ui_draw *dl, const char *label) { return ui_text_w(dl, label) + ui_line(dl); }

static int button(ui_draw *dl, int x, int y, const char *label, bool primary, ui_action act, int arg)
{
    int u = ui_line(dl);
    int w = button_w(dl, label);
    ui_rect r = {x, y, w, u + u / 2};
    ui_fill(dl, r.x, r.y, r.w, r.h, primary ? 0xFF2E5E78u : UI_PANEL_HI);
    ui_frame(dl, r.x, r.y, r.w, r.h, 1, primary ? UI_ACCENT : UI_TEXT_DIM);
    ui_text(dl, label, x + u / 2, y + u / 4, UI_WHITE);
    ui_layout_hit(dl->layout, r, act, arg);
    return w;
}

/* ---- quizzes */

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
static int explanations(ui_draw *dl, const ui_app *app, int quiz, int x, int y, int right, bool draw)
{
    const ui_player *p = &app->lesson;
    const ui_quiz_answer *a = &p->answers[quiz];
    const lesson_quiz *q = &p->ls.steps[p->step].quizzes[quiz];
    const lesson_step *st = &p->ls.steps[p->step];
    if (!a->graded) return y;
    int u = ui_line(dl);
    for (int i = 0; i < st->n_blocks; i++) {
        const lesson_block *b = &st->blocks[i];
        if (b->kind != LESSON_BLOCK_WHY || b->quiz != quiz || !(a->grade.right || a->picked[b->choice])) continue;
        bool ok = q->correct[b->choice];
        const char *mark = ok ? "✓" : "✗";
        if (draw) ui_text(dl, mark, x, y, ok ? UI_GOOD : UI_ERROR);
        int mw = ui_text_w(dl, mark) + u / 3;
        for (int k = 0; k < st->n_blocks; k++) /* which choice: its words, on one line */
            if (st->blocks[k].kind == LESSON_BLOCK_CHOICE && st->blocks[k].quiz == quiz &&
                st->blocks[k].choice == b->choice) {
                if (draw) ui_text_fit(dl, st->blocks[k].text, x + mw, y, right - x - mw, UI_TEXT_DIM);
                y += u + u / 4;
            }
        y = flow(dl, b->text, b->spans, b->n_spans, x + mw, y, right, UI_TEXT, draw) + u / 2;
    }
    return y;
}

/* The quiz's widget from y; returns the y below it. shown (when not NULL, for
 * the quiz just checked): where its Check row begins and its verdict ends. */
static int quiz_widget(ui_draw *dl, const ui_app *app, const lesson_block *b, int x, int y, int right, bool draw,
                       int shown[2])
{
    const ui_player *p = &app->lesson;
    const lesson_quiz *q = &p->ls.steps[p->step].quizzes[b->quiz];
    const ui_quiz_answer *a = &p->answers[b->quiz];
    int u = ui_line(dl), row = u + u / 2;
    char buf[160];
    if (q->kind == LESSON_QUIZ_CHOICE && q->n_correct > 1)
        y = flow(dl, _("Choose all that apply."), NULL, 0, x, y, right, UI_TEXT_DIM, draw);
    if (q->kind == LESSON_QUIZ_CELLS) {
        y = flow(dl, cell_instruction(q->rule, attn_stage_index(app->view.stage) < ATTN_STAGE_MASK), NULL, 0, x, y,
                 right, UI_TEXT_DIM, draw);
        int rows, cols, r0, r1, c0, c1;
        if (lesson_quiz_has_region(q) && ui_player_answer_cells(p, &app->trace, &app->view, NULL, 0, &rows, &cols) >= 0) {
            lesson_quiz_region(q, rows, cols, &r0, &r1, &c0, &c1);
            snprintf(buf, sizeof buf, _("This quiz is about rows %d–%d and columns %d–%d only."), r0, r1, c0, c1);
            y = flow(dl, buf, NULL, 0, x, y, right, UI_TEXT_DIM, draw);
        }
        int picks = 0;
        for (int i = 0; a->cells && i < a->rows * a->cols; i++) picks += a->cells[i];
        snprintf(buf, sizeof buf, _("%d cells picked"), picks);
        y = flow(dl, buf, NULL, 0, x, y, right, UI_TEXT_DIM, draw);
    }
    int bx = x;
    if (shown) shown[0] = shown[1] = y;
    if (draw) {
        if (q->kind == LESSON_QUIZ_NUMBER) {
            bool focus = p->focus == b->quiz;
            int fw = 8 * u;
            ui_fill(dl, bx, y, fw, row, focus ? UI_BG : UI_PANEL_HI);
            ui_frame(dl, bx, y, fw, row, 1, focus ? UI_ACCENT : UI_TEXT_DIM);
            int tw = ui_text(dl, a->text, bx + u / 3, y + u / 4, UI_WHITE);
            if (focus) ui_line_to(dl, bx + u / 3 + tw, y + u / 4, bx + u / 3 + tw, y + u / 4 + u, 2, UI_WHITE);
            else if (!a->text[0]) ui_text(dl, _("type a number"), bx + u / 3, y + u / 4, UI_TEXT_DIM);
            ui_layout_hit(dl->layout, (ui_rect){bx, y, fw, row}, UI_ACT_LESSON_FIELD, b->quiz);
            bx += fw + u / 2;
        }
        bx += button(dl, bx, y, _("Check"), true, UI_ACT_LESSON_CHECK, b->quiz) + u / 2;
        if (q->kind == LESSON_QUIZ_CELLS && a->tries && !a->grade.right)
            button(dl, bx, y, a->show ? _("Hide answer") : _("Show answer"), false, UI_ACT_LESSON_REVEAL, b->quiz);
    }
    y += row + u / 2;
    if (a->feedback[0]) {
        uint32_t c = !a->graded ? UI_TEXT : a->grade.right ? UI_GOOD : UI_ERROR;
        y = flow(dl, a->feedback, NULL, 0, x, y, right, c, draw);
        if (shown) shown[1] = y;
        if (a->graded && a->grade.right && q->explain) y = flow(dl, q->explain, NULL, 0, x, y, right, UI_TEXT, draw);
        if (a->graded && !a->grade.right && q->hint) {
            const char *lead = _("Hint: ");
            char line[600];
            snprintf(line, sizeof line, "%s%s", lead, q->hint);
            lesson_span sp = {0, (int)strlen(lead), LESSON_STRONG};
            y = flow(dl, line, &sp, 1, x, y, right, UI_TEXT, draw);
        }
    } else if (p->progress && lesson_progress_quiz_result(p->progress, p->name, p->step, b->quiz) == 1) {
        y = flow(dl, _("✓ answered right before"), NULL, 0, x, y, right, UI_TEXT_DIM, draw);
    }
    if (q->kind == LESSON_QUIZ_CHOICE) y = explanations(dl, app, b->quiz, x, y, right, draw);
    return y + u / 2;
}

/* ---- blocks */

static int block(ui_draw *dl, const ui_app *app, const lesson_block *b, int x, int y, int right, bool draw,
                 int shown[2])
{
    int u = ui_line(dl);
    int gap = u / 2;
    switch (b->kind) {
    case LESSON_BLOCK_HEADING:
        return flow(dl, b->text, NULL, 0, x, y + u / 4, right, UI_WHITE, draw) + gap / 2;
    case LESSON_BLOCK_ITEM: {
        int ind = x + (b->level - 1) * u;
        int mw = ui_imax(ui_text_w(dl, b->marker), u / 2) + u / 3;
        if (draw) ui_text(dl, b->marker, ind, y, UI_ACCENT);
        return flow(dl, b->text, b->spans, b->n_spans, ind + mw, y, right, UI_TEXT, draw) + gap / 2;
    }
    case LESSON_BLOCK_QUOTE: {
        int ny = flow(dl, b->text, b->spans, b->n_spans, x + u, y, right, UI_TEXT_DIM, draw);
        if (draw) ui_line_to(dl, x + u / 4, y, x + u / 4, ny - u / 4, 3, UI_TEXT_DIM);
        return ny + gap;
    }
    case LESSON_BLOCK_CODE: {
        int lines = 1;
        for (const char *c = b->text; *c; c++) lines += *c == '\n';
        int h = lines * (u + u / 8) + u / 2;
        if (draw) {
            ui_fill(dl, x, y, right - x, h, UI_BG);
            char line[512];
            const char *s = b->text;
            for (int i = 0; i < lines; i++) {
                const char *nl = strchr(s, '\n');
                int n = nl ? (int)(nl - s) : (int)strlen(s);
                snprintf(line, sizeof line, "%.*s", n, s);
                ui_text_fit(dl, line, x + u / 3, y + u / 4 + i * (u + u / 8), right - x - u / 2, UI_CODE);
                s = nl ? nl + 1 : s + n;
            }
        }
        return y + h + gap;
    }
    case LESSON_BLOCK_TABLE_ROW:
        if (draw) ui_text_fit(dl, b->text, x, y, right - x, b->level ? UI_WHITE : UI_TEXT);
        return y + u + u / 4;
    case LESSON_BLOCK_CHOICE: {
        const ui_player *p = &app->lesson;
        const ui_quiz_answer *a = &p->answers[b->quiz];
        const lesson_quiz *q = &p->ls.steps[p->step].quizzes[b->quiz];
        int ind = x + (b->level - 1) * u;
        int box = u - 2;
        int ny = flow(dl, b->text, b->spans, b->n_spans, ind + box + u / 2, y, right, UI_TEXT, draw);
        if (draw) {
            bool on = a->picked[b->choice];
            uint32_t c = on ? UI_ACCENT : UI_TEXT_DIM;
            if (a->graded && on) c = q->correct[b->choice] ? UI_GOOD : UI_ERROR;
            ui_frame(dl, ind, y + 1, box, box, 2, c);
            if (on) ui_fill(dl, ind + 4, y + 5, box - 8, box - 8, c);
            ui_layout_hit(dl->layout, (ui_rect){ind, y - u / 8, right - ind, ny - y}, UI_ACT_LESSON_CHOICE, b->quiz << 8 | b->choice);
        }
        return ny + gap / 2;
    }
    case LESSON_BLOCK_WHY: return y; /* drawn below Check (explanations) */
    case LESSON_BLOCK_QUIZ: return quiz_widget(dl, app, b, x, y, right, draw, shown);
    default: return flow(dl, b->text, b->spans, b->n_spans, x, y, right, UI_TEXT, draw) + gap;
    }
}

/* The step's blocks from y; returns the y below them. shown (when not NULL):
 * where the Check row of the quiz just checked (shown_quiz) begins and its
 * verdict ends; untouched without one. */
static int content(ui_draw *dl, const ui_app *app, int x, int y, int right, bool draw, int shown[2])
{
    const ui_player *p = &app->lesson;
    const lesson_step *st = &p->ls.steps[p->step];
    if (p->step == 0)
        for (int i = 0; i < p->ls.intro.n_blocks; i++) {
            const lesson_block *b = &p->ls.intro.blocks[i];
            if (b->kind != LESSON_BLOCK_QUIZ && b->kind != LESSON_BLOCK_CHOICE && b->kind != LESSON_BLOCK_WHY)
                y = block(dl, app, b, x, y, right, draw, NULL);
        }
    for (int i = 0; i < st->n_blocks; i++) {
        const lesson_block *b = &st->blocks[i];
        bool checked = shown && b->kind == LESSON_BLOCK_QUIZ && b->quiz == p->shown_quiz;
        y = block(dl, app, b, x, y, right, draw, checked ? shown : NULL);
    }
    return y;
}

/* The lesson's title, the step's, and progress through the steps, from y; returns the y below.
 * large (presenter mode): the step's title on a line of its own, half as large again. */
static int lesson_header(ui_draw *dl, const ui_player *p, int x, int y, int right, bool large)
{
    int u = ui_line(dl);
    char label[64];
    ui_text_fit(dl, p->ls.title, x, y, right - x, UI_ACCENT);
    y += u + u / 3;
    ui_player_step_label(p, label, sizeof label);
    int lw = ui_text(dl, label, x, y, UI_TEXT_DIM) + u / 2;
    if (large) {
        y += u + u / 4;
        int px = dl->px;
        dl->px = px * 3 / 2;
        ui_text_fit(dl, p->ls.steps[p->step].title, x, y, right - x, UI_WHITE);
        y += ui_line(dl) + u / 4;
        dl->px = px;
    } else {
        ui_text_fit(dl, p->ls.steps[p->step].title, x + lw, y, right - x - lw, UI_WHITE);
        y += u + u / 3;
    }
    int n = p->ls.n_steps, seg = ui_imax(2, (right - x) / ui_imax(1, n));
    for (int i = 0; i < n; i++)
        ui_fill(dl, x + i * seg, y, seg - 2, u / 4, i < p->step ? UI_ACCENT : i == p->step ? UI_WHITE : UI_PANEL_HI);
    y += u / 2 + u / 4;
    return y + progress_chip(dl, p, x, y, right - x, true);
}

/* The navigation buttons along y, their labels shortened (Restore's first, to a
 * word, then to ↺; then ◀, then ☰) while the whole row does not fit (large text
 * in a narrow panel). */
static void lesson_footer(ui_draw *dl, const ui_player *p, int x, int y, int right)
{
    int u = ui_line(dl);
    const char *back = _("◀ Back"), *restore = _("↺ Restore step"), *lessons = _("☰ Lessons"), *next = _("Next ▶");
    bool last = p->step + 1 >= p->ls.n_steps;
    const char *end = last ? _("Last step ✓") : next;
    for (int shorter = 0; shorter < 5; shorter++) {
        int need = (p->step > 0 ? button_w(dl, back) + u / 3 : 0) + button_w(dl, restore) + u / 3 +
                   button_w(dl, lessons) + u / 3 + (last ? ui_text_w(dl, end) : button_w(dl, end));
        if (x + need <= right) break;
        if (shorter == 0) restore = _("↺ Restore"); /* the least used first; Back keeps its word longest */
        else if (shorter == 1) restore = "↺";
        else if (shorter == 2) back = "◀";
        else lessons = "☰";
    }
    if (p->step > 0) x += button(dl, x, y, back, false, UI_ACT_LESSON_PREV, 0) + u / 3;
    x += button(dl, x, y, restore, false, UI_ACT_LESSON_RESTORE, 0) + u / 3;
    x += button(dl, x, y, lessons, false, UI_ACT_PICKER, 0) + u / 3;
    if (!last)
        button(dl, ui_imax(x, right - button_w(dl, next)), y, next, true, UI_ACT_LESSON_NEXT, 0);
    else
        ui_text_fit(dl, end, ui_imax(x, right - ui_text_w(dl, end)), y + u / 4, right - x, UI_GOOD);
}

/* The step's blocks inside clip, from x to right, scrolled (kept in range:
 * the layout says how far it went), with a scroll bar at bar_x. */
static void step_body(ui_draw *dl, const ui_app *app, ui_rect clip, int x, int right, int bar_x)
{
    int u = ui_line(dl);
    int shown[2] = {-1, -1}; /* the checked quiz's Check row and the end of its verdict */
    int total = content(dl, app, x, 0, right, false, shown);
    ui_layout *l = dl->layout;
    l->lesson_scroll_max = ui_imax(0, total - clip.h + u);
    int scroll = ui_imin(app->lesson.scroll, l->lesson_scroll_max);
    /* a quiz just checked whose verdict is below the fold: scrolled up just
     * enough to show its Check and the verdict under it (the choices above move
     * as little as can be, to be picked again; the explanations further down
     * are the wheel's), never so far that Check leaves the top */
    if (shown[1] > scroll + clip.h)
        scroll = ui_imin(l->lesson_scroll_max, ui_imin(shown[0], shown[1] - clip.h + u / 2));
    l->lesson_scroll = scroll;
    ui_clip_push(dl, clip);
    int first_hit = l->n_hits;
    content(dl, app, x, clip.y - scroll, right, true, NULL);
    /* hits scrolled out of view must not take clicks */
    for (int i = first_hit; i < l->n_hits; i++) l->hits[i].r = ui_rect_intersect(l->hits[i].r, clip);
    ui_clip_pop(dl);
    if (l->lesson_scroll_max > 0) {
        int bh = ui_imax(u, clip.h * clip.h / (clip.h + l->lesson_scroll_max));
        int by = clip.y + (clip.h - bh) * scroll / l->lesson_scroll_max;
        ui_fill(dl, bar_x, by, u / 5, bh, UI_TEXT_DIM);
    }
    if (scroll < l->lesson_scroll_max) { /* more below the fold: said, not only a thin bar */
        /* TRANSLATORS: the lesson panel's text goes on below what it shows; the wheel scrolls */
        const char *more = _("▼ more below");
        int mw = ui_text_w(dl, more) + u / 2, my = clip.y + clip.h - u - u / 4;
        ui_fill(dl, right - mw, my, mw, u + u / 4, UI_PANEL_HI);
        ui_text(dl, more, right - mw + u / 4, my + u / 8, UI_TEXT);
    }
}

void ui_render_lesson(const ui_app *app, ui_draw *dl, ui_rect box)
{
    const ui_player *p = &app->lesson;
    int u = ui_line(dl);
    ui_fill(dl, box.x, box.y, box.w, box.h, UI_PANEL);
    ui_fill(dl, box.x, box.y, 2, box.h, UI_PANEL_HI);
    int x = box.x + u, right = box.x + box.w - u;
    int y = lesson_header(dl, p, x, box.y + u / 2, right, app->present);
    if (!p->answers) return; /* loaded, its first step still opening */
    int fy = box.y + box.h - (u + u / 2 + u / 2);
    lesson_footer(dl, p, x, fy, right);
    step_body(dl, app, (ui_rect){box.x, y, box.w, fy - u / 2 - y}, x, right, box.x + box.w - u / 3);
}

/* ---- marks on the heatmap */

/* The stage's cell (i, j) framed where area a draws it. A zoomed area shows
 * the stage from its cell (row0, col0): a cell outside its window is not drawn.
 * A thin black line inside the frame keeps it visible on a bright cell, the
 * colour of a green or yellow frame (a right pick is the brightest cell of
 * its row). */
static void cell_frame(ui_draw *dl, const ui_heat_area *a, int i, int j, int t, uint32_t c)
{
    int x, y, w, h;
    i -= a->row0;
    j -= a->col0;
    if (i < 0 || j < 0 || i >= a->rows || j >= a->cols) return;
    ui_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i, j, &x, &y, &w, &h);
    if (w <= 0 || h <= 0) return;
    t = ui_imin(t, ui_imax(1, ui_imin(w, h) / 3));
    ui_frame(dl, a->r.x + x, a->r.y + y, w, h, t, c);
    if (t > 1 && w > 2 * t + 4 && h > 2 * t + 4) ui_frame(dl, a->r.x + x + t, a->r.y + y + t, w - 2 * t, h - 2 * t, 1, UI_BLACK);
}

/* The step's highlight (a row, a column or cells of the stage) on area a. */
static void highlight(ui_draw *dl, const ui_heat_area *a, const lesson_marks *m)
{
    if (m->hl == LESSON_HL_ROW)
        for (int j = a->col0; j < a->col0 + a->cols; j++) cell_frame(dl, a, m->hl_index, j, 2, UI_MARK);
    if (m->hl == LESSON_HL_COL)
        for (int i = a->row0; i < a->row0 + a->rows; i++) cell_frame(dl, a, i, m->hl_index, 2, UI_MARK);
    for (int c = 0; m->hl == LESSON_HL_CELLS && c < m->n_hl_cells; c++)
        cell_frame(dl, a, m->hl_cells[c][0], m->hl_cells[c][1], 3, UI_MARK);
}

/* The stage's rows r0..r1 and columns c0..c1 (both included) framed on area
 * a, cut to its window; nothing when the window shows no more than them. */
static void region_frame(ui_draw *dl, const ui_heat_area *a, int r0, int r1, int c0, int c1)
{
    int i0 = ui_imax(r0, a->row0) - a->row0, i1 = ui_imin(r1, a->row0 + a->rows - 1) - a->row0;
    int j0 = ui_imax(c0, a->col0) - a->col0, j1 = ui_imin(c1, a->col0 + a->cols - 1) - a->col0;
    if (i0 > i1 || j0 > j1 || (i0 == 0 && j0 == 0 && i1 == a->rows - 1 && j1 == a->cols - 1)) return;
    int x0, y0, x1, y1, w, h;
    ui_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i0, j0, &x0, &y0, &w, &h);
    ui_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i1, j1, &x1, &y1, &w, &h);
    ui_frame(dl, a->r.x + x0, a->r.y + y0, x1 + w - x0, y1 + h - y0, 2, UI_TEXT_DIM);
}

/* The cell quiz on area a (the graded tensor and head): its region, the
 * answer when asked for, and the picks, coloured once checked. right: the
 * right cells of the stage's rows × cols picture, NULL when unknown. */
static void quiz_marks(ui_draw *dl, const ui_heat_area *a, const lesson_quiz *q, const ui_quiz_answer *ans,
                       const unsigned char *right, int rows, int cols)
{
    int r0, r1, c0, c1;
    lesson_quiz_region(q, rows, cols, &r0, &r1, &c0, &c1);
    if (rows > 0 && cols > 0 && lesson_quiz_has_region(q)) region_frame(dl, a, r0, r1, c0, c1);
    int i_end = ui_imin(a->row0 + a->rows, rows), j_end = ui_imin(a->col0 + a->cols, cols);
    if (ans->show && right)
        for (int i = a->row0; i < i_end; i++)
            for (int j = a->col0; j < j_end; j++)
                if (right[(size_t)i * cols + j]) cell_frame(dl, a, i, j, 1, UI_WHITE);
    if (!ans->cells || ans->rows != rows || ans->cols != cols) return;
    for (int i = a->row0; i < i_end; i++)
        for (int j = a->col0; j < j_end; j++) {
            if (!ans->cells[(size_t)i * cols + j]) continue;
            uint32_t c = UI_ACCENT;
            if (ans->graded && right) c = right[(size_t)i * cols + j] ? UI_GOOD : UI_ERROR;
            cell_frame(dl, a, i, j, 4, c);
        }
}

void ui_render_lesson_marks(const ui_app *app, ui_draw *dl)
{
    const ui_player *p = &app->lesson;
    if (!p->open || (app->view.mode != LESSON_VIEW_SINGLE && app->view.mode != LESSON_VIEW_GRID)) return;
    /* areas name their tensor ("layers.2.weights"), the lesson a stage ("weights") of the layer shown */
    const attn_tensor *hl = p->marks.hl != LESSON_HL_NONE ? lesson_stage_tensor(&app->trace, p->view.stage, app->view.layer)
                                                          : NULL;
    const attn_tensor *graded = ui_player_quiz_tensor(p, &app->trace, &app->view);
    const lesson_quiz *q = graded ? &p->ls.steps[p->step].quizzes[p->cell_quiz] : NULL;
    const ui_quiz_answer *ans = graded ? &p->answers[p->cell_quiz] : NULL;
    unsigned char *right = NULL;
    int rows = 0, cols = 0;
    if (graded && ui_player_answer_cells(p, &app->trace, &app->view, NULL, 0, &rows, &cols) < 0) graded = NULL;
    if (graded && (ans->show || ans->graded)) { /* the answer, only when it is drawn */
        size_t n = (size_t)rows * (size_t)cols;
        right = malloc(n);
        if (right && ui_player_answer_cells(p, &app->trace, &app->view, right, n, NULL, NULL) < 0) {
            free(right);
            right = NULL;
        }
    }
    for (int k = 0; k < dl->layout->n_areas; k++) {
        const ui_heat_area *a = &dl->layout->areas[k];
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
static void more_cue(ui_draw *dl, const char *arrow, int n, int to, int x, int y, int w)
{
    char buf[80];
    if (n <= 0) return;
    /* TRANSLATORS: the picker's cue for lessons scrolled out of view: an arrow and how many */
    snprintf(buf, sizeof buf, _("%s %d more"), arrow, n);
    int tw = ui_text_w(dl, buf);
    ui_text(dl, buf, x + (w - tw) / 2, y, UI_ACCENT);
    ui_layout_hit(dl->layout, (ui_rect){x, y, w, ui_line(dl)}, UI_ACT_PICK_SHOW, to);
}

void ui_render_picker(const ui_app *app, ui_draw *dl)
{
    const ui_player *p = &app->lesson;
    int u = ui_line(dl);
    int W = dl->layout->full_width, H = dl->layout->height;
    ui_fill(dl, 0, 0, W, H, 0xF4101016u);
    int w = ui_imin(W - 2 * u, 60 * u), x = (W - w) / 2, y = u;
    char buf[400], num[16];
    snprintf(buf, sizeof buf, _("Lessons (%s)"), !strcmp(p->lang, "zh") ? "中文" : "English");
    ui_text(dl, buf, x, y, UI_WHITE);
    y += u + u / 2;
    int row = 2 * u + u / 2, cue = u + u / 4; /* a line above and below the list for the scroll cues */
    int chip = progress_chip(dl, p, x, 0, w, false);
    int foot = 2 * u + u / 2 + chip;
    int n = p->have_catalog ? p->catalog.n : 0;
    int visible = ui_imax(1, (H - y - 2 * cue - foot) / row);
    /* the scroll kept in range, with the selection in view */
    int first = p->picker_first;
    if (p->sel >= 0 && p->sel < first) first = p->sel;
    if (p->sel >= first + visible) first = p->sel - visible + 1;
    first = ui_imax(0, ui_imin(first, n - visible));
    dl->layout->picker_first = first;
    dl->layout->picker_rows = visible;
    more_cue(dl, "▲", first, ui_imax(0, first - visible), x, y, w); /* a page up */
    y += cue;
    int numw = ui_text_w(dl, "00") + u; /* the number column: 00 … 15, 99 */
    for (int i = first; i < n && i < first + visible; i++) {
        const lesson_entry *e = &p->catalog.items[i];
        int ry = y + (i - first) * row;
        bool sel = i == p->sel;
        ui_fill(dl, x, ry, w, row - u / 4, sel ? UI_PANEL_HI : UI_PANEL);
        if (sel) ui_frame(dl, x, ry, w, row - u / 4, 1, UI_ACCENT);
        lesson_record r = p->progress ? lesson_progress_get(p->progress, e->name) : (lesson_record){0};
        if (e->error) snprintf(buf, sizeof buf, "%s", _("cannot open"));
        else if (r.finished)
            snprintf(buf, sizeof buf, _("✓ finished · quizzes %d/%d"), r.quizzes_right, e->n_quizzes);
        else if (r.step)
            snprintf(buf, sizeof buf, _("step %d / %d · quizzes %d/%d"), r.step, e->n_steps, r.quizzes_right,
                     e->n_quizzes);
        else snprintf(buf, sizeof buf, _("%d steps · not started"), e->n_steps);
        int pw = ui_text_w(dl, buf);
        ui_text(dl, buf, x + w - pw - u / 2, ry + u / 4, e->error ? UI_ERROR : r.finished ? UI_GOOD : UI_TEXT_DIM);
        ui_text(dl, ui_player_lesson_number(e->name, num, sizeof num), x + u / 2, ry + u / 4, UI_ACCENT);
        ui_text_fit(dl, e->title, x + u / 2 + numw, ry + u / 4, w - pw - 2 * u - numw, sel ? UI_WHITE : UI_TEXT);
        ui_text_fit(dl, e->error ? e->error : e->summary, x + u / 2 + numw, ry + u + u / 4, w - u - numw, UI_TEXT_DIM);
        ui_layout_hit(dl->layout, (ui_rect){x, ry, w, row - u / 4}, UI_ACT_PICK, i);
    }
    if (n > visible) { /* a scroll bar beside the list */
        int track = visible * row - u / 4, bh = ui_imax(u, track * visible / n);
        int by = y + (track - bh) * first / ui_imax(1, n - visible);
        ui_fill(dl, x + w + u / 4, y, u / 5, track, UI_PANEL);
        ui_fill(dl, x + w + u / 4, by, u / 5, bh, UI_ACCENT);
    }
    int shown = ui_imax(0, ui_imin(visible, n - first));
    more_cue(dl, "▼", n - first - shown, ui_imin(n - 1, first + shown + visible - 1), x, y + shown * row, w); /* a page down */
    if (!p->have_catalog && ui_player_listing(p)) ui_text(dl, _("Reading the lessons …"), x, y, UI_TEXT_DIM);
    else if (!p->have_catalog || !p->catalog.n) ui_text(dl, _("No lessons found."), x, y, UI_ERROR);
    const char *help = p->confirm_reset ? _("Press Delete again to forget all progress; any other key keeps it.")
                                        : _("↑ ↓ wheel choose · Enter open · Esc close · Delete reset progress");
    progress_chip(dl, p, x, H - foot + u / 2, w, true);
    ui_text_fit(dl, help, x, H - foot + u / 2 + chip, w, p->confirm_reset ? UI_ERROR : UI_TEXT_DIM);
}
