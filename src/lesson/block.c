/* block.c — a step's prose blocks, filled from md4c's runs of text.
 *
 * One block is open at a time. Text runs are copied into it with their span
 * styles (md4c's strings are neither owned nor terminated); closing it trims
 * the soft breaks at its end and adds it to the current step. */
#include "parser.h"

#include <stdio.h>

#include "engine/base/utf8.h"
#include "source.h"

/* ---- growable text with style spans */

/* Extends the last span when it has the same style and ends where s starts. */
static int add_span(parser_text *b, size_t n, unsigned style)
{
    lesson_span *last = b->n_spans ? &b->spans[b->n_spans - 1] : NULL;
    if (last && last->style == style && (size_t)last->end == b->n) {
        last->end += (int)n;
        return 0;
    }
    if (b->n_spans == b->cap_spans) {
        int cap = b->cap_spans ? 2 * b->cap_spans : 4;
        lesson_span *sp = realloc(b->spans, (size_t)cap * sizeof *sp);
        if (!sp) return -1;
        b->spans = sp;
        b->cap_spans = cap;
    }
    b->spans[b->n_spans++] = (lesson_span){(int)b->n, (int)(b->n + n), style};
    return 0;
}

int parser_text_put(parser_text *b, const char *s, size_t n, unsigned style)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) return -1;
        b->s = p;
        b->cap = cap;
    }
    if (style && n && add_span(b, n, style)) return -1;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

void parser_text_clear(parser_text *b)
{
    free(b->s);
    free(b->spans);
    *b = (parser_text){0};
}

/* ---- blocks */

void parser_open_block(parser *p, lesson_block_kind kind, int level, const char *marker)
{
    p->open_kind = (int)kind;
    p->softbr = false;
    p->open_level = level;
    p->open_line = 0;
    p->open_quiz = p->open_choice = -1;
    snprintf(p->open_marker, sizeof p->open_marker, "%s", marker ? marker : "");
    parser_text_clear(&p->text);
}

/* Moves the open block's text and spans into b; trimming may have cut the last
 * spans, or all of them ("a ` `"). False when out of memory. */
static bool take_text(parser *p, lesson_block *b)
{
    b->text = p->text.s ? p->text.s : parser_strdup("");
    b->spans = p->text.spans;
    b->n_spans = p->text.n_spans;
    p->text = (parser_text){0};
    if (!b->text) {
        p->oom = true;
        free(b->spans);
        return false;
    }
    int len = (int)strlen(b->text), kept = 0;
    for (int i = 0; i < b->n_spans; i++) {
        if (b->spans[i].start >= len) continue;
        if (b->spans[i].end > len) b->spans[i].end = len;
        b->spans[kept++] = b->spans[i];
    }
    b->n_spans = kept;
    return true;
}

/* ---- measured numbers: {{NUMBER | WHAT ...}} becomes NUMBER */

/* Deletes t->s[a..b), moving the spans after it and shrinking those across it. */
static void cut(parser_text *t, size_t a, size_t b)
{
    memmove(t->s + a, t->s + b, t->n - b + 1);
    t->n -= b - a;
    for (int i = 0; i < t->n_spans; i++) {
        int *e[2] = {&t->spans[i].start, &t->spans[i].end};
        for (int k = 0; k < 2; k++)
            *e[k] = (size_t)*e[k] <= a ? *e[k] : (size_t)*e[k] < b ? (int)a : *e[k] - (int)(b - a);
    }
}

/* The line of the k-th "{{" from line `from` on: the document's own line,
 * where the block's text has soft breaks turned into spaces. */
static int measure_line(const parser *p, int from, int k)
{
    if (from < 1 || from > p->n_lines) return from;
    const char *d = p->doc + p->line_start[from - 1], *end = p->doc + p->size;
    for (; d + 1 < end; d++)
        if (d[0] == '{' && d[1] == '{' && k-- == 0) return parser_line_of(p, d);
    return from;
}

/* Each figure of t from measure `first` on names its source (source.h) in its
 * sentence, or, in_quiz, in the paragraph before (a quiz's question, a list's
 * lead-in) too. */
static void check_sources(parser *p, const parser_text *t, int first, bool in_quiz)
{
    const char *lang = lesson_source_lang(p->ls->path);
    for (int i = first; t->s && i < p->step->n_measures; i++) {
        const lesson_measure *m = &p->step->measures[i];
        char why[300];
        if (lesson_source_check(lesson_measure_source(m), m->spec, t->s, m->text_at, in_quiz ? p->last_para : NULL, lang,
                                why, sizeof why))
            lesson_diag_add(p->dg, m->line, "%s", why);
    }
}

void parser_strip_measures(parser *p, parser_text *t, int line, bool in_quiz)
{
    size_t at = 0;
    int first = p->step->n_measures;
    for (int k = 0; t->s && at < t->n; k++) {
        char *open = strstr(t->s + at, "{{");
        if (!open) break;
        char *close = strstr(open + 2, "}}");
        int l = measure_line(p, line, k);
        if (!close) {
            lesson_diag_add(p->dg, l, "a measure opened with {{ is not closed with }}");
            break;
        }
        lesson_measure m;
        char why[200];
        size_t a = (size_t)(open - t->s), b = (size_t)(close + 2 - t->s);
        if (lesson_measure_parse(open + 2, (size_t)(close - open - 2), l, &m, why, sizeof why)) {
            lesson_diag_add(p->dg, l, "%s", why);
            at = b;
            continue;
        }
        m.text_at = a; /* once the braces before the number are cut */
        int before = p->step->n_measures;
        PUSH(p, p->step->measures, p->step->n_measures, m);
        if (p->step->n_measures == before) lesson_measure_free(&m);
        /* keep the number: cut what follows it, then the braces before it */
        char *num = open + 2, *bar = strchr(num, '|');
        while (*num == ' ') num++;
        char *num_end = bar;
        while (num_end > num && num_end[-1] == ' ') num_end--;
        size_t n0 = (size_t)(num - t->s), n1 = (size_t)(num_end - t->s);
        cut(t, n1, b);
        cut(t, a, n0);
        at = a + (n1 - n0);
    }
    check_sources(p, t, first, in_quiz);
}

void parser_close_block(parser *p)
{
    p->softbr = false;
    if (p->open_kind < 0) return;
    lesson_block b = {.kind = (lesson_block_kind)p->open_kind,
                      .line = p->open_line ? p->open_line : p->line,
                      .level = p->open_level,
                      .quiz = p->open_quiz,
                      .choice = p->open_choice};
    memcpy(b.marker, p->open_marker, sizeof b.marker);
    p->open_kind = -1;
    /* trim trailing whitespace (soft breaks at the end of items) */
    parser_text *t = &p->text;
    while (t->n && (t->s[t->n - 1] == ' ' || t->s[t->n - 1] == '\n')) t->s[--t->n] = '\0';
    if (!t->n && b.kind != LESSON_BLOCK_CHOICE && b.kind != LESSON_BLOCK_QUIZ && b.kind != LESSON_BLOCK_CODE) {
        parser_text_clear(t);
        return;
    }
    /* a choice, its explanation and a list's item go on from the paragraph before them */
    parser_strip_measures(p, t, b.line,
                          b.kind == LESSON_BLOCK_CHOICE || b.kind == LESSON_BLOCK_WHY || b.kind == LESSON_BLOCK_ITEM);
    if (!take_text(p, &b)) return;
    if (b.kind == LESSON_BLOCK_PARA) {
        char *copy = parser_strdup(b.text);
        if (copy) { free(p->last_para); p->last_para = copy; }
    }
    lesson_step *st = p->step;
    int before = st->n_blocks;
    PUSH(p, st->blocks, st->n_blocks, b);
    if (st->n_blocks == before) { free(b.text); free(b.spans); }
    if (b.kind != LESSON_BLOCK_QUIZ) p->choice_quiz_done = -1;
}

/* ---- text */

/* Is the first character of s[0..n) wide? */
static bool wide_first(const char *s, size_t n)
{
    uint32_t cp;
    return attn_utf8_decode(s, n, &cp) && attn_utf8_is_wide(cp);
}

/* Is the character that ends the first n bytes of s wide? */
static bool wide_last(const char *s, size_t n)
{
    size_t i = attn_utf8_prev(s, n);
    return wide_first(s + i, n - i);
}

void parser_add_text(parser *p, const char *s, size_t n, const char *ptr)
{
    if (p->img_depth) return;
    bool heading = p->heading_level == 1 || p->heading_level == 2;
    if (!heading && p->open_kind < 0) {
        /* text after a nested list inside an item: continue the item */
        if (p->list_depth) parser_open_block(p, LESSON_BLOCK_ITEM, p->list_depth, "");
        else if (p->quote_depth) parser_open_block(p, LESSON_BLOCK_QUOTE, p->quote_depth, "");
        else parser_open_block(p, LESSON_BLOCK_PARA, 0, "");
    }
    parser_text *b = heading ? &p->heading : &p->text;
    if (p->softbr) {
        /* a soft break is a space, except between two wide characters: 注意力
         * split over two lines of Chinese reads as one word (as pandoc's
         * east_asian_line_breaks); the space takes the style before the break */
        p->softbr = false;
        if (!(b->n && wide_last(b->s, b->n) && wide_first(s, n)) &&
            parser_text_put(b, " ", 1, heading ? 0 : p->softbr_style))
            p->oom = true;
    }
    if (!heading && !p->open_line) p->open_line = ptr ? parser_line_of(p, ptr) : p->line;
    if (parser_text_put(b, s, n, heading ? 0 : p->style)) p->oom = true;
}

/* ---- quizzes */

lesson_quiz *parser_new_quiz(parser *p, lesson_quiz_kind kind, int line)
{
    lesson_step *st = p->step;
    lesson_quiz q = {.kind = kind, .line = line, .tolerance = 1e-3};
    q.question = parser_strdup(p->last_para ? p->last_para : "");
    if (!q.question) { p->oom = true; return NULL; }
    int before = st->n_quizzes;
    PUSH(p, st->quizzes, st->n_quizzes, q);
    if (st->n_quizzes == before) { free(q.question); return NULL; }
    if (st == &p->ls->intro)
        lesson_diag_add(p->dg, line, "a quiz before the first step: quizzes belong under a '##' step heading");
    return &st->quizzes[st->n_quizzes - 1];
}

void parser_add_quiz_block(parser *p, int q, int line)
{
    parser_open_block(p, LESSON_BLOCK_QUIZ, 0, "");
    p->open_quiz = q;
    p->open_line = line;
    parser_close_block(p);
}
