/* parse.c — Markdown to lesson structs with md4c's callbacks.
 *
 * md4c walks the document and calls enter/leave for blocks and spans and
 * text() for runs of text. The callbacks here follow the document's
 * structure (headings start steps, lists, quotes, tables); block.c copies the
 * text into one open prose block at a time, fence.c reads attnlab and quiz
 * blocks. Lines come from text pointers: md4c hands out pointers into our
 * buffer for ordinary text, so a pointer's offset gives its line. */
#include "parser.h"

#include <stdio.h>

#include "engine/base/utf8.h"

/* ---- lines */

int parser_line_of(const parser *p, const char *ptr)
{
    if (ptr < p->doc || ptr > p->doc + p->size) return p->line;
    size_t off = (size_t)(ptr - p->doc);
    int lo = 0, hi = p->n_lines - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->line_start[mid] <= off) lo = mid;
        else hi = mid - 1;
    }
    return lo + 1;
}

void parser_line_bytes(const parser *p, int l, const char **s, const char **e)
{
    *s = p->doc + p->line_start[l];
    *e = l + 1 < p->n_lines ? p->doc + p->line_start[l + 1] : p->doc + p->size;
}

/* Line of the next '#' or '##' heading outside fenced code (0 if there is
 * none): an empty heading has no text to take a line from. Headings end in
 * the order they stand, so the scan goes on from where the last one was found
 * (from the top for each, it made 20,000 steps quadratic). */
static int heading_line(parser *p)
{
    for (; p->h12_scan.line < p->n_lines; p->h12_scan.line++) {
        const char *s, *e;
        parser_line_bytes(p, p->h12_scan.line, &s, &e);
        while (s < e && *s == ' ') s++;
        if (e - s >= 3 && (*s == '`' || *s == '~') && s[1] == *s && s[2] == *s) {
            char *fence = &p->h12_scan.fence;
            *fence = *fence ? (*fence == *s ? 0 : *fence) : *s;
            continue;
        }
        if (p->h12_scan.fence || s == e || *s != '#') continue;
        int n = 0;
        while (s < e && *s == '#') s++, n++;
        if (n <= 2 && (s == e || *s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) return ++p->h12_scan.line;
    }
    return 0;
}

/* ---- steps */

/* The task list of choice quiz q (in the current step) has ended: place the
 * quiz at its first choice, check it has a right answer, and add the quiz
 * block that the player draws the answer buttons from. */
static void finish_choice_quiz(parser *p, int q)
{
    lesson_quiz *qz = &p->step->quizzes[q];
    for (int i = 0; i < p->step->n_blocks; i++)
        if (p->step->blocks[i].kind == LESSON_BLOCK_CHOICE && p->step->blocks[i].quiz == q) {
            qz->line = p->step->blocks[i].line;
            break;
        }
    if (!qz->n_correct)
        lesson_diag_add(p->dg, qz->line, "quiz has no right answer: mark the right choices with [x]");
    parser_add_quiz_block(p, q, qz->line);
    p->choice_quiz_done = q;
}

static void start_step(parser *p)
{
    parser_close_block(p);
    /* A heading inside a list item ("- ## Step") starts a step mid-list: the
     * choice quizzes the open lists were building end with the old step. */
    for (int d = p->list_depth - 1; d >= 0; d--)
        if (p->list[d].choice_quiz >= 0) {
            finish_choice_quiz(p, p->list[d].choice_quiz);
            p->list[d].choice_quiz = -1;
        }
    lesson *ls = p->ls;
    lesson_step st = {0};
    int before = ls->n_steps;
    PUSH(p, ls->steps, ls->n_steps, st);
    if (ls->n_steps == before) return;
    p->step = &ls->steps[ls->n_steps - 1];
    free(p->last_para);
    p->last_para = NULL;
    p->choice_quiz_done = -1;
}

/* ---- entering blocks */

static void enter_heading(parser *p, const MD_BLOCK_H_DETAIL *h)
{
    parser_close_block(p);
    if (h->level <= 2) {
        parser_text_clear(&p->heading);
        p->heading_level = (int)h->level;
        if (h->level == 2 || p->ls->title) start_step(p);
    } else {
        parser_open_block(p, LESSON_BLOCK_HEADING, (int)h->level, "");
    }
}

static void enter_para(parser *p)
{
    if (p->list_depth && p->open_kind >= 0) {
        /* a second paragraph of the same item */
        if (p->text.n && parser_text_put(&p->text, " ", 1, 0)) p->oom = true;
        return;
    }
    parser_close_block(p);
    if (p->quote_depth) parser_open_block(p, LESSON_BLOCK_QUOTE, p->quote_depth, "");
    else if (p->list_depth) parser_open_block(p, LESSON_BLOCK_ITEM, p->list_depth, "");
    else parser_open_block(p, LESSON_BLOCK_PARA, 0, "");
}

/* Returns non-zero to stop md4c. */
static int enter_list(parser *p, MD_BLOCKTYPE type, void *detail)
{
    parser_close_block(p);
    if (p->list_depth == MAX_DEPTH) {
        lesson_diag_add(p->dg, p->line, "lists nested more than %d deep", MAX_DEPTH);
        return 1;
    }
    p->list[p->list_depth].ordered = type == MD_BLOCK_OL;
    p->list[p->list_depth].next = type == MD_BLOCK_OL ? (int)((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
    p->list[p->list_depth].choice_quiz = -1;
    p->list[p->list_depth].why_quiz = p->list[p->list_depth].why_choice = -1;
    /* a list nested in a choice explains that choice */
    if (p->list_depth && p->list[p->list_depth - 1].choice_quiz >= 0) {
        const lesson_quiz *q = &p->step->quizzes[p->list[p->list_depth - 1].choice_quiz];
        p->list[p->list_depth].why_quiz = p->list[p->list_depth - 1].choice_quiz;
        p->list[p->list_depth].why_choice = q->n_choices - 1;
    }
    p->list_depth++;
    return 0;
}

/* A task-list item ("- [x] ...") is one choice of the quiz its list makes.
 * Returns non-zero when out of memory. */
static int enter_choice(parser *p, int d, char task_mark)
{
    if (p->list[d].choice_quiz < 0) {
        lesson_quiz *q = parser_new_quiz(p, LESSON_QUIZ_CHOICE, p->line + 1);
        if (!q) return 1;
        p->list[d].choice_quiz = (int)(q - p->step->quizzes);
    }
    lesson_quiz *q = &p->step->quizzes[p->list[d].choice_quiz];
    bool *c = parser_grow(q->correct, q->n_choices, sizeof *c);
    if (!c) return p->oom = true, 1;
    q->correct = c;
    bool *e = parser_grow(q->explained, q->n_choices, sizeof *e);
    if (!e) return p->oom = true, 1;
    q->explained = e;
    e[q->n_choices] = false;
    bool right = task_mark == 'x' || task_mark == 'X';
    c[q->n_choices] = right;
    q->n_correct += right;
    parser_open_block(p, LESSON_BLOCK_CHOICE, p->list_depth, right ? "[x]" : "[ ]");
    p->open_quiz = p->list[d].choice_quiz;
    p->open_choice = q->n_choices++;
    return 0;
}

static int enter_item(parser *p, const MD_BLOCK_LI_DETAIL *li)
{
    parser_close_block(p);
    int d = p->list_depth - 1;
    if (d < 0) return 0;
    if (p->list[d].why_quiz >= 0) {
        if (li->is_task) lesson_diag_add(p->dg, p->line + 1, "a choice's explanation is a plain '-' item, not a task '- [ ]'");
        lesson_quiz *q = &p->step->quizzes[p->list[d].why_quiz];
        q->explained[p->list[d].why_choice] = true;
        parser_open_block(p, LESSON_BLOCK_WHY, p->list_depth, "");
        p->open_quiz = p->list[d].why_quiz;
        p->open_choice = p->list[d].why_choice;
        return 0;
    }
    if (li->is_task) return enter_choice(p, d, (char)li->task_mark);
    char marker[16];
    if (p->list[d].ordered) snprintf(marker, sizeof marker, "%d.", p->list[d].next++);
    else snprintf(marker, sizeof marker, "%s", d % 2 ? "◦" : "•");
    parser_open_block(p, LESSON_BLOCK_ITEM, p->list_depth, marker);
    return 0;
}

static void enter_row(parser *p)
{
    parser_close_block(p);
    parser_open_block(p, LESSON_BLOCK_TABLE_ROW, p->in_head ? 1 : 0, "");
    p->cell = 0;
}

static int enter_block(MD_BLOCKTYPE type, void *detail, void *userdata)
{
    parser *p = userdata;
    switch (type) {
    case MD_BLOCK_DOC: break;
    case MD_BLOCK_H: enter_heading(p, detail); break;
    case MD_BLOCK_P: enter_para(p); break;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        if (enter_list(p, type, detail)) return 1;
        break;
    case MD_BLOCK_LI:
        if (enter_item(p, detail)) return 1;
        break;
    case MD_BLOCK_QUOTE:
        parser_close_block(p);
        p->quote_depth++;
        break;
    case MD_BLOCK_CODE: parser_enter_fence(p, detail); break;
    case MD_BLOCK_TABLE: parser_close_block(p); break;
    case MD_BLOCK_THEAD: p->in_head = true; break;
    case MD_BLOCK_TBODY: p->in_head = false; break;
    case MD_BLOCK_TR: enter_row(p); break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        if (p->cell++ && parser_text_put(&p->text, " │ ", strlen(" │ "), 0)) p->oom = true;
        break;
    case MD_BLOCK_HTML:
    case MD_BLOCK_HR: parser_close_block(p); break;
    }
    return p->oom ? 1 : 0;
}

/* ---- leaving blocks */

/* A '#' or '##' heading ends: the lesson's title, or the step's. Returns
 * non-zero when out of memory. */
static int leave_heading(parser *p)
{
    char *title = parser_strdup(p->heading.s ? parser_trim(p->heading.s) : "");
    if (!title) return p->oom = true, 1;
    int line = p->line, hl = heading_line(p);
    if (!*title && hl) line = hl;
    if (p->heading_level == 1 && !p->ls->title) {
        p->ls->title = title;
        p->ls->title_line = line;
        if (!*title) lesson_diag_add(p->dg, line, "the lesson title is empty");
    } else {
        if (p->heading_level == 1) lesson_diag_add(p->dg, line, "a second '#' title: steps start with '##'");
        p->step->title = title;
        p->step->line = line;
        if (!*title) lesson_diag_add(p->dg, line, "step %d has an empty heading", p->ls->n_steps);
    }
    parser_text_clear(&p->heading);
    p->heading_level = 0;
    return 0;
}

static void leave_list(parser *p)
{
    parser_close_block(p);
    int q = p->list[--p->list_depth].choice_quiz;
    if (q >= 0) finish_choice_quiz(p, q);
}

static int leave_block(MD_BLOCKTYPE type, void *detail, void *userdata)
{
    parser *p = userdata;
    (void)detail;
    switch (type) {
    case MD_BLOCK_H:
        if (!p->heading_level) parser_close_block(p);
        else if (leave_heading(p)) return 1;
        break;
    case MD_BLOCK_P:
        if (!p->list_depth) parser_close_block(p);
        break;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL: leave_list(p); break;
    case MD_BLOCK_QUOTE:
        parser_close_block(p);
        p->quote_depth--;
        break;
    case MD_BLOCK_CODE: parser_leave_fence(p); break;
    case MD_BLOCK_LI:
    case MD_BLOCK_TR: parser_close_block(p); break;
    default: break;
    }
    return p->oom ? 1 : 0;
}

/* ---- spans and text */

static const int SPAN_BIT[] = {[MD_SPAN_EM] = LESSON_EM, [MD_SPAN_STRONG] = LESSON_STRONG,
                               [MD_SPAN_CODE] = LESSON_CODE, [MD_SPAN_A] = LESSON_LINK,
                               [MD_SPAN_DEL] = LESSON_DEL};

static int enter_span(MD_SPANTYPE type, void *detail, void *userdata)
{
    parser *p = userdata;
    (void)detail;
    if (type == MD_SPAN_IMG) p->img_depth++;
    else if (type < (int)COUNT(SPAN_BIT) && SPAN_BIT[type]) p->style |= (unsigned)SPAN_BIT[type];
    return 0;
}

static int leave_span(MD_SPANTYPE type, void *detail, void *userdata)
{
    parser *p = userdata;
    (void)detail;
    if (type == MD_SPAN_IMG) p->img_depth--;
    else if (type < (int)COUNT(SPAN_BIT) && SPAN_BIT[type]) p->style &= ~(unsigned)SPAN_BIT[type];
    return 0;
}

/* "&amp;", "&#x4E2D;" -> UTF-8; unknown entities are kept as written. */
static size_t entity(const char *s, size_t n, char out[8])
{
    static const struct { const char *name, *text; } NAMED[] = {
        {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&nbsp;", "\xC2\xA0"},
        {"&minus;", "−"}, {"&infin;", "∞"}, {"&radic;", "√"}, {"&times;", "×"}};
    for (int i = 0; i < COUNT(NAMED); i++)
        if (n == strlen(NAMED[i].name) && !memcmp(s, NAMED[i].name, n)) return (size_t)sprintf(out, "%s", NAMED[i].text);
    if (n > 3 && s[1] == '#') {
        char num[16];
        if (n - 3 >= sizeof num) return 0;
        memcpy(num, s + 2, n - 3);
        num[n - 3] = '\0';
        char *end;
        unsigned long cp = (num[0] == 'x' || num[0] == 'X') ? strtoul(num + 1, &end, 16) : strtoul(num, &end, 10);
        if (*end || cp == 0 || cp > 0x10FFFF) return 0;
        return attn_utf8_encode((uint32_t)cp, out); /* 0 for a surrogate */
    }
    return 0;
}

static int text_cb(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *userdata)
{
    parser *p = userdata;
    if (text >= p->doc && text < p->doc + p->size) p->line = parser_line_of(p, text);
    if (parser_fence_text(p, text, size)) return p->oom ? 1 : 0;
    switch (type) {
    case MD_TEXT_SOFTBR: /* a space or nothing: parser_add_text decides when the next text comes */
        p->softbr = true;
        p->softbr_style = p->style;
        break;
    case MD_TEXT_BR: parser_add_text(p, "\n", 1, NULL); break;
    case MD_TEXT_HTML: break;
    case MD_TEXT_NULLCHAR: parser_add_text(p, "\xEF\xBF\xBD", 3, NULL); break;
    case MD_TEXT_ENTITY: {
        char out[8];
        size_t n = entity(text, size, out);
        if (n) parser_add_text(p, out, n, text);
        else parser_add_text(p, text, size, text);
        break;
    }
    default: parser_add_text(p, text, size, text); break;
    }
    return p->oom ? 1 : 0;
}

/* ---- the whole document */

/* First invalid UTF-8 byte: its line, or 0 if the text is valid. */
static int bad_utf8_line(const char *text, size_t size)
{
    if (attn_utf8_valid(text, size)) return 0;
    int line = 1;
    size_t start = 0;
    for (size_t i = 0; i < size; i++) {
        if (text[i] == '\n') {
            if (!attn_utf8_valid(text + start, i - start)) return line;
            line++;
            start = i + 1;
        }
    }
    return line;
}

/* What stops a text before md4c reads it: too large, a NUL byte, invalid
 * UTF-8. False after reporting it. */
static bool check_text(const char *text, size_t size, lesson_diags *dg)
{
    if (size > LESSON_MAX_BYTES) {
        lesson_diag_add(dg, 0, "the file is too large (%zu bytes; a lesson may have at most %d)", size,
                        LESSON_MAX_BYTES);
        return false;
    }
    const char *z = memchr(text, '\0', size);
    if (z) {
        int line = 1;
        for (const char *c = text; c < z; c++) line += *c == '\n';
        lesson_diag_add(dg, line, "a NUL byte: this is not a text file");
        return false;
    }
    int bad = bad_utf8_line(text, size);
    if (bad) {
        lesson_diag_add(dg, bad, "invalid UTF-8: save the lesson as UTF-8");
        return false;
    }
    return true;
}

/* Fills p->line_start; -1 when out of memory. */
static int index_lines(parser *p)
{
    int n_lines = 1;
    for (size_t i = 0; i < p->size; i++) n_lines += p->doc[i] == '\n';
    p->line_start = malloc((size_t)n_lines * sizeof *p->line_start);
    if (!p->line_start) return -1;
    p->line_start[p->n_lines++] = 0;
    for (size_t i = 0; i < p->size; i++)
        if (p->doc[i] == '\n') p->line_start[p->n_lines++] = i + 1;
    return 0;
}

/* After the walk: the picker's summary (the introduction's first paragraph),
 * and a lesson has a title and steps. */
static void finish_lesson(lesson *ls, lesson_diags *dg)
{
    for (int i = 0; i < ls->intro.n_blocks && !ls->summary; i++)
        if (ls->intro.blocks[i].kind == LESSON_BLOCK_PARA) ls->summary = parser_strdup(ls->intro.blocks[i].text);
    if (!ls->summary) ls->summary = parser_strdup("");
    if (!ls->title) lesson_diag_add(dg, 1, "no title: a lesson starts with a '# Title' line");
    else if (!ls->n_steps) lesson_diag_add(dg, ls->title_line, "no steps: every '## heading' starts a step");
}

static void parser_free(parser *p)
{
    parser_text_clear(&p->text);
    parser_text_clear(&p->heading);
    parser_text_clear(&p->code);
    free(p->last_para);
    free(p->line_start);
}

static const MD_PARSER MD = {
    .flags = MD_FLAG_TASKLISTS | MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_NOHTML |
             MD_FLAG_PERMISSIVEATXHEADERS,
    .enter_block = enter_block,
    .leave_block = leave_block,
    .enter_span = enter_span,
    .leave_span = leave_span,
    .text = text_cb,
};

int lesson_parse(const char *text, size_t size, const char *path, lesson *out, lesson_diags *dg)
{
    *out = (lesson){0};
    int n0 = dg ? dg->n : 0;
    out->path = parser_strdup(path ? path : "");
    if (!out->path) return lesson_diag_add(dg, 0, "out of memory"), -1;
    if (!check_text(text, size, dg)) return -1;
    /* a byte-order mark (Notepad saves UTF-8 with one) is not the lesson's text: line 1 starts after it */
    if (size >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) text += 3, size -= 3;

    parser p = {.doc = text, .size = size, .ls = out, .dg = dg, .open_kind = -1, .choice_quiz_done = -1};
    p.step = &out->intro;
    if (index_lines(&p)) return lesson_diag_add(dg, 0, "out of memory"), -1;
    int rc = md_parse(text, (MD_SIZE)size, &MD, &p);
    parser_close_block(&p);
    if (p.oom) lesson_diag_add(dg, 0, "out of memory");
    else if (rc && (!dg || dg->n == n0)) lesson_diag_add(dg, p.line, "the Markdown parser gave up here");
    finish_lesson(out, dg);
    parser_free(&p);
    return dg && dg->n > n0 ? -1 : (p.oom || !out->title || !out->n_steps) ? -1 : 0;
}
