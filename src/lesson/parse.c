/* parse.c — Markdown to lesson structs with md4c's callbacks.
 *
 * md4c walks the document and calls enter/leave for blocks and spans and
 * text() for runs of text. The parser keeps one open prose block at a time
 * and copies text into it (md4c's strings are neither owned nor terminated).
 * Lines come from text pointers: md4c hands out pointers into our buffer for
 * ordinary text, so a pointer's offset gives its line. */
#include "lesson.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <md4c.h>

#include "config.h"
#include "stages.h"
#include "utf8.h"

/* ---- diagnostics */

void lesson_diag_add(lesson_diags *dg, int line, const char *fmt, ...)
{
    if (!dg) return;
    char msg[sizeof dg->items[0].msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (int i = 0; i < dg->n; i++) /* a problem carried by inherited settings is reported once */
        if (dg->items[i].line == line && !strcmp(dg->items[i].msg, msg)) return;
    if (dg->n == dg->cap) {
        int cap = dg->cap ? 2 * dg->cap : 8;
        lesson_diag *items = realloc(dg->items, (size_t)cap * sizeof *items);
        if (!items) return;
        dg->items = items;
        dg->cap = cap;
    }
    lesson_diag *d = &dg->items[dg->n++];
    d->line = line;
    memcpy(d->msg, msg, sizeof msg);
}

void lesson_diags_free(lesson_diags *dg)
{
    free(dg->items);
    *dg = (lesson_diags){0};
}

/* ---- growable text with style spans */

typedef struct {
    char *s;
    size_t n, cap;
    lesson_span *spans;
    int n_spans, cap_spans;
} tbuf;

static int tbuf_put(tbuf *b, const char *s, size_t n, unsigned style)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) return -1;
        b->s = p;
        b->cap = cap;
    }
    if (style && n) {
        lesson_span *last = b->n_spans ? &b->spans[b->n_spans - 1] : NULL;
        if (last && last->style == style && (size_t)last->end == b->n) {
            last->end += (int)n;
        } else {
            if (b->n_spans == b->cap_spans) {
                int cap = b->cap_spans ? 2 * b->cap_spans : 4;
                lesson_span *sp = realloc(b->spans, (size_t)cap * sizeof *sp);
                if (!sp) return -1;
                b->spans = sp;
                b->cap_spans = cap;
            }
            b->spans[b->n_spans++] = (lesson_span){(int)b->n, (int)(b->n + n), style};
        }
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 0;
}

static void tbuf_clear(tbuf *b)
{
    free(b->s);
    free(b->spans);
    *b = (tbuf){0};
}

/* ---- parser state */

enum { FENCE_NONE, FENCE_ATTNLAB, FENCE_QUIZ, FENCE_OTHER };

#define MAX_DEPTH 32

typedef struct {
    const char *doc;
    size_t size;
    size_t *line_start;  /* offset of each line's first byte */
    int n_lines;
    lesson *ls;
    lesson_diags *dg;
    lesson_step *step;   /* &ls->intro, then the latest step */
    int line;            /* line of the latest text seen */
    bool oom;

    /* the prose block being filled (open: kind >= 0) */
    int open_kind;
    int open_line, open_level, open_quiz, open_choice;
    char open_marker[16];
    tbuf text;

    unsigned style;      /* current span styles */
    bool softbr;         /* a soft line break waits for the next text */
    unsigned softbr_style;
    int style_depth[5];
    int img_depth;

    /* headings */
    int heading_level;   /* 1, 2: title / step title being read; 0 otherwise */
    tbuf heading;

    /* lists: one entry per open UL/OL */
    struct { bool ordered; int next; int choice_quiz; } list[MAX_DEPTH];
    int list_depth;
    int quote_depth;

    /* table */
    bool in_head;
    int cell;

    /* fenced code */
    int fence;
    int fence_line;      /* line of the opening fence */
    int fence_first;     /* line of the first content line (0: none yet) */
    char fence_char;
    tbuf code;

    int n_h12;            /* # and ## headings seen */
    int choice_quiz_done; /* index of the choice quiz whose list just closed, -1 otherwise */
    char *last_para;      /* plain text of the step's latest paragraph (owned) */
} parser;

static int line_of(const parser *p, const char *ptr)
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

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static char *dup_s(const char *s) { return dup_n(s, strlen(s)); }

static void *grow(void *arr, int n, size_t elem)
{
    /* capacity doubles at powers of two; arrays start empty */
    if (n && (n & (n - 1))) return arr;
    size_t cap = n ? (size_t)n * 2 : 4;
    return realloc(arr, cap * elem);
}

#define PUSH(p, arr, count, value)                                                 \
    do {                                                                           \
        void *g_ = grow((arr), (count), sizeof *(arr));                            \
        if (!g_) { (p)->oom = true; break; }                                       \
        (arr) = g_;                                                                \
        (arr)[(count)++] = (value);                                                \
    } while (0)

/* Line of the n-th '#' or '##' heading outside fenced code (0 if not found):
 * an empty heading has no text to take a line from. */
static int heading_line(const parser *p, int nth)
{
    char fence = 0;
    for (int l = 0; l < p->n_lines; l++) {
        const char *s = p->doc + p->line_start[l], *e = l + 1 < p->n_lines ? p->doc + p->line_start[l + 1] : p->doc + p->size;
        while (s < e && *s == ' ') s++;
        if (e - s >= 3 && (*s == '`' || *s == '~') && s[1] == *s && s[2] == *s) {
            fence = fence ? (fence == *s ? 0 : fence) : *s;
            continue;
        }
        if (fence || s == e || *s != '#') continue;
        int n = 0;
        while (s < e && *s == '#') s++, n++;
        if (n <= 2 && (s == e || *s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') && nth-- == 0) return l + 1;
    }
    return 0;
}

/* ---- keys */

static const char *const VIEW_KEYS[] = {"stage", "head", "batch_row", "view", "compare", "row", "decode_step",
                                        "highlight"};
static const char *const QUIZ_KEYS[] = {"answer", "tolerance", "click", "stage", "hint", "explain"};
static const char *const CELL_RULES[] = {"masked", "unmasked", "argmax", "argmin", "nan"};
static const char *const CONFIG_KEYS[] = {"tokens", "source_tokens", "seq", "batch", "d_model", "heads",
                                          "kv_heads", "mode", "causal", "scale", "softmax_guard", "pad_side", "pad_mask",
                                          "rope", "rope_theta", "mask_value", "past", "dropout", "train", "seed"};
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

bool lesson_is_view_key(const char *key)
{
    for (int i = 0; i < COUNT(VIEW_KEYS); i++)
        if (!strcmp(key, VIEW_KEYS[i])) return true;
    return false;
}

static void normalise(const char *in, size_t n, char *out, size_t size)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 1 < size; i++) {
        char c = in[i];
        out[j++] = (c == '-' || c == ' ' || c == '\t') ? '_' : (char)tolower((unsigned char)c);
    }
    out[j] = '\0';
}

/* Levenshtein distance, capped: enough to suggest a key for a typo. */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 40 || lb > 40) return 99;
    int row[41];
    for (int j = 0; j <= lb; j++) row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j];
            int cost = a[i - 1] != b[j - 1];
            int v = diag + cost;
            if (row[j] + 1 < v) v = row[j] + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[lb];
}

static const char *suggest(const char *key, const char *const *a, int na, const char *const *b, int nb)
{
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; i < na + nb; i++) {
        const char *k = i < na ? a[i] : b[i - na];
        int d = distance(key, k);
        if (d < bd) bd = d, best = k;
    }
    return best;
}

static void unknown_key(parser *p, int line, const char *key, const char *what, const char *const *a, int na,
                        const char *const *b, int nb)
{
    const char *s = suggest(key, a, na, b, nb);
    if (s) lesson_diag_add(p->dg, line, "unknown %s key '%s' (did you mean '%s'?)", what, key, s);
    else lesson_diag_add(p->dg, line, "unknown %s key '%s'", what, key);
}

/* ---- blocks */

static void open_block(parser *p, lesson_block_kind kind, int level, const char *marker)
{
    p->open_kind = (int)kind;
    p->softbr = false;
    p->open_level = level;
    p->open_line = 0;
    p->open_quiz = p->open_choice = -1;
    snprintf(p->open_marker, sizeof p->open_marker, "%s", marker ? marker : "");
    tbuf_clear(&p->text);
}

static void close_block(parser *p)
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
    while (p->text.n && (p->text.s[p->text.n - 1] == ' ' || p->text.s[p->text.n - 1] == '\n'))
        p->text.s[--p->text.n] = '\0';
    bool empty = p->text.n == 0;
    if (empty && b.kind != LESSON_BLOCK_CHOICE && b.kind != LESSON_BLOCK_QUIZ && b.kind != LESSON_BLOCK_CODE) {
        tbuf_clear(&p->text);
        return;
    }
    b.text = p->text.s ? p->text.s : dup_s("");
    b.spans = p->text.spans;
    b.n_spans = p->text.n_spans;
    p->text = (tbuf){0};
    if (!b.text) { p->oom = true; free(b.spans); return; }
    int len = (int)strlen(b.text); /* trimming may have cut the last spans, or all of them ("a ` `") */
    int kept = 0;
    for (int i = 0; i < b.n_spans; i++) {
        if (b.spans[i].start >= len) continue;
        if (b.spans[i].end > len) b.spans[i].end = len;
        b.spans[kept++] = b.spans[i];
    }
    b.n_spans = kept;
    if (b.kind == LESSON_BLOCK_PARA) {
        char *copy = dup_s(b.text);
        if (copy) { free(p->last_para); p->last_para = copy; }
    }
    lesson_step *st = p->step;
    int before = st->n_blocks;
    PUSH(p, st->blocks, st->n_blocks, b);
    if (st->n_blocks == before) { free(b.text); free(b.spans); }
    if (b.kind != LESSON_BLOCK_QUIZ) p->choice_quiz_done = -1;
}

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

static void add_text(parser *p, const char *s, size_t n, const char *ptr)
{
    if (p->img_depth) return;
    bool heading = p->heading_level == 1 || p->heading_level == 2;
    if (!heading && p->open_kind < 0) {
        /* text after a nested list inside an item: continue the item */
        if (p->list_depth) open_block(p, LESSON_BLOCK_ITEM, p->list_depth, "");
        else if (p->quote_depth) open_block(p, LESSON_BLOCK_QUOTE, p->quote_depth, "");
        else open_block(p, LESSON_BLOCK_PARA, 0, "");
    }
    tbuf *b = heading ? &p->heading : &p->text;
    if (p->softbr) {
        /* a soft break is a space, except between two wide characters: 注意力
         * split over two lines of Chinese reads as one word (as pandoc's
         * east_asian_line_breaks); the space takes the style before the break */
        p->softbr = false;
        if (!(wide_last(b->s, b->n) && wide_first(s, n)) &&
            tbuf_put(b, " ", 1, heading ? 0 : p->softbr_style))
            p->oom = true;
    }
    if (!heading && !p->open_line) p->open_line = ptr ? line_of(p, ptr) : p->line;
    if (tbuf_put(b, s, n, heading ? 0 : p->style)) p->oom = true;
}

static lesson_quiz *new_quiz(parser *p, lesson_quiz_kind kind, int line)
{
    lesson_step *st = p->step;
    lesson_quiz q = {.kind = kind, .line = line, .tolerance = 1e-3};
    q.question = dup_s(p->last_para ? p->last_para : "");
    if (!q.question) { p->oom = true; return NULL; }
    int before = st->n_quizzes;
    PUSH(p, st->quizzes, st->n_quizzes, q);
    if (st->n_quizzes == before) { free(q.question); return NULL; }
    if (st == &p->ls->intro)
        lesson_diag_add(p->dg, line, "a quiz before the first step: quizzes belong under a '##' step heading");
    return &st->quizzes[st->n_quizzes - 1];
}

/* ---- fenced blocks: attnlab settings and quizzes */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
    return s;
}

static bool parse_number(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *trim(end) || errno == ERANGE || !isfinite(d)) return false;
    *out = d;
    return true;
}

#define KEY_MAX 32

/* One line of an attnlab or quiz block. Returns 1 for a `key = value` pair
 * (key normalised, *value trimmed and pointing into raw), 0 for a blank or
 * comment line, -1 after reporting a malformed line. */
static int key_value(parser *p, int line, char *raw, char key[KEY_MAX], char **value)
{
    char *s = trim(raw);
    if (!*s || *s == '#') return 0;
    char *eq = strchr(s, '=');
    if (!eq) {
        lesson_diag_add(p->dg, line, "expected 'key = value', got '%.60s'", s);
        return -1;
    }
    *eq = '\0';
    char *k = trim(s);
    *value = trim(eq + 1);
    if (!*k) {
        lesson_diag_add(p->dg, line, "missing key before '='");
        return -1;
    }
    if (strlen(k) >= KEY_MAX) {
        lesson_diag_add(p->dg, line, "unknown key '%.40s…'", k);
        return -1;
    }
    normalise(k, strlen(k), key, KEY_MAX);
    return 1;
}

/* Line of the first line inside the fence being closed. */
static int body_line(const parser *p)
{
    return p->fence_first ? p->fence_first : p->fence_line + 1;
}

static void setting_line(parser *p, int line, char *raw)
{
    char key[KEY_MAX], *v;
    if (key_value(p, line, raw, key, &v) <= 0) return;
    if (!strcmp(key, "weights") || !strcmp(key, "input")) {
        lesson_diag_add(p->dg, line, "%s: files are not allowed in lessons (a lesson must work wherever it is copied)",
                        key);
        return;
    }
    bool known = lesson_is_view_key(key);
    for (int i = 0; !known && i < COUNT(CONFIG_KEYS); i++) known = !strcmp(key, CONFIG_KEYS[i]);
    if (!known) {
        unknown_key(p, line, key, "attnlab", CONFIG_KEYS, COUNT(CONFIG_KEYS), VIEW_KEYS, COUNT(VIEW_KEYS));
        return;
    }
    lesson_setting set = {.line = line};
    memcpy(set.key, key, sizeof set.key);
    set.value = dup_s(v);
    if (!set.value) { p->oom = true; return; }
    int before = p->step->n_settings;
    PUSH(p, p->step->settings, p->step->n_settings, set);
    if (p->step->n_settings == before) free(set.value);
}

static int rule_of(const char *v)
{
    for (int i = 0; i < COUNT(CELL_RULES); i++)
        if (!strcasecmp(v, CELL_RULES[i])) return i;
    return -1;
}

static void quiz_block(parser *p, char *body)
{
    /* collect the keys first, then decide what kind of quiz it is */
    const char *answer = NULL, *tolerance = NULL, *click = NULL, *stage = NULL, *hint = NULL, *explain = NULL;
    int l_answer = p->fence_line, l_tol = 0, l_click = 0, l_stage = 0;
    int line = body_line(p);
    for (char *s = body, *nl; s; s = nl ? nl + 1 : NULL, line++) {
        nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        char key[KEY_MAX], *v;
        if (key_value(p, line, s, key, &v) <= 0) continue;
        if (!strcmp(key, "answer")) answer = v, l_answer = line;
        else if (!strcmp(key, "tolerance")) tolerance = v, l_tol = line;
        else if (!strcmp(key, "click")) click = v, l_click = line;
        else if (!strcmp(key, "stage")) stage = v, l_stage = line;
        else if (!strcmp(key, "hint")) hint = v;
        else if (!strcmp(key, "explain")) explain = v;
        else unknown_key(p, line, key, "quiz", QUIZ_KEYS, COUNT(QUIZ_KEYS), NULL, 0);
    }

    lesson_quiz *q = NULL;
    lesson_step *st = p->step;
    if (answer && click) {
        lesson_diag_add(p->dg, l_click, "a quiz has either 'answer' (a number) or 'click' (cells), not both");
        return;
    }
    if (!answer && !click) {
        if (p->choice_quiz_done >= 0 && p->choice_quiz_done < st->n_quizzes && (hint || explain)) {
            q = &st->quizzes[p->choice_quiz_done];
        } else {
            lesson_diag_add(p->dg, p->fence_line,
                            "quiz has no right answer: give 'answer = NUMBER' or 'click = masked|unmasked|argmax|argmin|nan'");
            return;
        }
    } else if (answer) {
        double a, tol = 1e-3;
        if (!parse_number(answer, &a)) {
            lesson_diag_add(p->dg, l_answer, "answer: '%.40s' is not a number", answer);
            return;
        }
        if (tolerance && (!parse_number(tolerance, &tol) || tol < 0)) {
            lesson_diag_add(p->dg, l_tol, "tolerance: '%.40s' is not a number >= 0", tolerance);
            return;
        }
        if (!(q = new_quiz(p, LESSON_QUIZ_NUMBER, p->fence_line))) return;
        q->answer = a;
        q->tolerance = tol;
    } else {
        int rule = rule_of(click);
        if (rule < 0) {
            lesson_diag_add(p->dg, l_click, "click: '%.40s' is not masked, unmasked, argmax, argmin or nan", click);
            return;
        }
        if (stage && attn_stage_index(stage) < 0) {
            lesson_diag_add(p->dg, l_stage, "stage: unknown stage '%.40s'", stage);
            return;
        }
        for (int i = 0; i < st->n_quizzes; i++)
            if (st->quizzes[i].kind == LESSON_QUIZ_CELLS) {
                lesson_diag_add(p->dg, p->fence_line, "a step has at most one cell quiz (another one is at line %d)",
                                st->quizzes[i].line);
                return;
            }
        if (!(q = new_quiz(p, LESSON_QUIZ_CELLS, p->fence_line))) return;
        q->rule = (lesson_cell_rule)rule;
        snprintf(q->stage, sizeof q->stage, "%s", stage ? stage : "");
    }
    if (tolerance && !answer) lesson_diag_add(p->dg, l_tol, "tolerance: only a numeric quiz (answer = …) has one");
    if (hint) {
        free(q->hint);
        if (!(q->hint = dup_s(hint))) p->oom = true;
    }
    if (explain) {
        free(q->explain);
        if (!(q->explain = dup_s(explain))) p->oom = true;
    }
    if (q->kind != LESSON_QUIZ_CHOICE) {
        open_block(p, LESSON_BLOCK_QUIZ, 0, "");
        p->open_quiz = (int)(q - st->quizzes);
        p->open_line = p->fence_line;
        close_block(p);
    }
}

/* Was the fence closed? md4c runs an unclosed fence to the end of the file. */
static bool fence_closed(const parser *p)
{
    int first = p->fence_line; /* the opening fence's line */
    for (int l = first; l < p->n_lines; l++) {
        const char *s = p->doc + p->line_start[l];
        const char *e = l + 1 < p->n_lines ? p->doc + p->line_start[l + 1] : p->doc + p->size;
        int ind = 0;
        while (s < e && *s == ' ' && ind < 4) s++, ind++;
        int run = 0;
        while (s < e && *s == p->fence_char) s++, run++;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) s++;
        if (ind < 4 && run >= 3 && s == e) return true;
    }
    return false;
}

static void leave_fence(parser *p)
{
    if (p->fence_char && !fence_closed(p))
        lesson_diag_add(p->dg, p->fence_line, "the code block opened here is never closed (missing %c%c%c)",
                        p->fence_char, p->fence_char, p->fence_char);
    if (p->fence == FENCE_ATTNLAB || p->fence == FENCE_QUIZ) {
        close_block(p);
        char *body = p->code.s ? p->code.s : NULL;
        if (body) {
            if (p->fence == FENCE_QUIZ) {
                quiz_block(p, body);
            } else {
                int line = body_line(p);
                for (char *s = body, *nl; s; s = nl ? nl + 1 : NULL, line++) {
                    nl = strchr(s, '\n');
                    if (nl) *nl = '\0';
                    setting_line(p, line, s);
                }
            }
        } else if (p->fence == FENCE_QUIZ) {
            lesson_diag_add(p->dg, p->fence_line, "empty quiz block");
        }
        tbuf_clear(&p->code);
    } else {
        close_block(p); /* the code block itself */
    }
    p->fence = FENCE_NONE;
}

/* ---- md4c callbacks */

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
    open_block(p, LESSON_BLOCK_QUIZ, 0, "");
    p->open_quiz = q;
    p->open_line = qz->line;
    close_block(p);
    p->choice_quiz_done = q;
}

static void start_step(parser *p)
{
    close_block(p);
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

static int enter_block(MD_BLOCKTYPE type, void *detail, void *userdata)
{
    parser *p = userdata;
    switch (type) {
    case MD_BLOCK_DOC: break;
    case MD_BLOCK_H: {
        const MD_BLOCK_H_DETAIL *h = detail;
        close_block(p);
        if (h->level <= 2) {
            tbuf_clear(&p->heading);
            p->heading_level = (int)h->level;
            if (h->level == 2 || p->ls->title) start_step(p);
        } else {
            open_block(p, LESSON_BLOCK_HEADING, (int)h->level, "");
        }
        break;
    }
    case MD_BLOCK_P:
        if (p->list_depth && p->open_kind >= 0) {
            /* a second paragraph of the same item */
            if (p->text.n && tbuf_put(&p->text, " ", 1, 0)) p->oom = true;
        } else if (p->open_kind < 0 || !p->list_depth) {
            close_block(p);
            if (p->quote_depth) open_block(p, LESSON_BLOCK_QUOTE, p->quote_depth, "");
            else if (p->list_depth) open_block(p, LESSON_BLOCK_ITEM, p->list_depth, "");
            else open_block(p, LESSON_BLOCK_PARA, 0, "");
        }
        break;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        close_block(p);
        if (p->list_depth == MAX_DEPTH) {
            lesson_diag_add(p->dg, p->line, "lists nested more than %d deep", MAX_DEPTH);
            return 1;
        }
        p->list[p->list_depth].ordered = type == MD_BLOCK_OL;
        p->list[p->list_depth].next = type == MD_BLOCK_OL ? (int)((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
        p->list[p->list_depth].choice_quiz = -1;
        p->list_depth++;
        break;
    case MD_BLOCK_LI: {
        close_block(p);
        const MD_BLOCK_LI_DETAIL *li = detail;
        int d = p->list_depth - 1;
        if (d < 0) break;
        if (li->is_task) {
            if (p->list[d].choice_quiz < 0) {
                lesson_quiz *q = new_quiz(p, LESSON_QUIZ_CHOICE, p->line + 1);
                if (!q) return 1;
                p->list[d].choice_quiz = (int)(q - p->step->quizzes);
            }
            lesson_quiz *q = &p->step->quizzes[p->list[d].choice_quiz];
            bool *c = grow(q->correct, q->n_choices, sizeof *c);
            if (!c) return p->oom = true, 1;
            q->correct = c;
            bool right = li->task_mark == 'x' || li->task_mark == 'X';
            c[q->n_choices] = right;
            q->n_correct += right;
            open_block(p, LESSON_BLOCK_CHOICE, p->list_depth, right ? "[x]" : "[ ]");
            p->open_quiz = p->list[d].choice_quiz;
            p->open_choice = q->n_choices++;
        } else {
            char marker[16];
            if (p->list[d].ordered) snprintf(marker, sizeof marker, "%d.", p->list[d].next++);
            else snprintf(marker, sizeof marker, "%s", d % 2 ? "◦" : "•");
            open_block(p, LESSON_BLOCK_ITEM, p->list_depth, marker);
        }
        break;
    }
    case MD_BLOCK_QUOTE:
        close_block(p);
        p->quote_depth++;
        break;
    case MD_BLOCK_CODE: {
        const MD_BLOCK_CODE_DETAIL *c = detail;
        close_block(p);
        p->fence_char = c->fence_char;
        p->fence_first = 0;
        p->fence_line = c->info.text ? line_of(p, c->info.text) : p->line + 1;
        char lang[16] = "";
        if (c->lang.size < sizeof lang) normalise(c->lang.text, c->lang.size, lang, sizeof lang);
        p->fence = !strcmp(lang, "attnlab") ? FENCE_ATTNLAB : !strcmp(lang, "quiz") ? FENCE_QUIZ : FENCE_OTHER;
        if (p->fence == FENCE_OTHER && lang[0] && (distance(lang, "attnlab") <= 2 || distance(lang, "quiz") == 1))
            lesson_diag_add(p->dg, p->fence_line, "code block tagged '%s': did you mean '%s'?", lang,
                            distance(lang, "attnlab") <= 2 ? "attnlab" : "quiz");
        tbuf_clear(&p->code);
        if (p->fence == FENCE_OTHER) open_block(p, LESSON_BLOCK_CODE, 0, "");
        if (p->fence == FENCE_OTHER) p->open_line = p->fence_line;
        break;
    }
    case MD_BLOCK_TABLE: close_block(p); break;
    case MD_BLOCK_THEAD: p->in_head = true; break;
    case MD_BLOCK_TBODY: p->in_head = false; break;
    case MD_BLOCK_TR:
        close_block(p);
        open_block(p, LESSON_BLOCK_TABLE_ROW, p->in_head ? 1 : 0, "");
        p->cell = 0;
        break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        if (p->cell++ && tbuf_put(&p->text, " │ ", strlen(" │ "), 0)) p->oom = true;
        break;
    case MD_BLOCK_HTML:
    case MD_BLOCK_HR:
        close_block(p);
        break;
    }
    return p->oom ? 1 : 0;
}

static int leave_block(MD_BLOCKTYPE type, void *detail, void *userdata)
{
    parser *p = userdata;
    (void)detail;
    switch (type) {
    case MD_BLOCK_H:
        if (p->heading_level) {
            char *title = p->heading.s ? dup_s(trim(p->heading.s)) : dup_s("");
            if (!title) return p->oom = true, 1;
            int line = p->line, hl = heading_line(p, p->n_h12++);
            if (!*title && hl) line = hl;
            if (p->heading_level == 1 && !p->ls->title) {
                p->ls->title = title;
                p->ls->title_line = line;
                if (!*title) lesson_diag_add(p->dg, line, "the lesson title is empty");
            } else {
                if (p->heading_level == 1)
                    lesson_diag_add(p->dg, line, "a second '#' title: steps start with '##'");
                p->step->title = title;
                p->step->line = line;
                if (!*title) lesson_diag_add(p->dg, line, "step %d has an empty heading", p->ls->n_steps);
            }
            tbuf_clear(&p->heading);
            p->heading_level = 0;
        } else {
            close_block(p);
        }
        break;
    case MD_BLOCK_P:
        if (!p->list_depth) close_block(p);
        break;
    case MD_BLOCK_LI: close_block(p); break;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL: {
        close_block(p);
        int q = p->list[--p->list_depth].choice_quiz;
        if (q >= 0) finish_choice_quiz(p, q);
        break;
    }
    case MD_BLOCK_QUOTE:
        close_block(p);
        p->quote_depth--;
        break;
    case MD_BLOCK_CODE: leave_fence(p); break;
    case MD_BLOCK_TR: close_block(p); break;
    default: break;
    }
    return p->oom ? 1 : 0;
}

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
    if (text >= p->doc && text < p->doc + p->size) p->line = line_of(p, text);
    if (p->fence == FENCE_ATTNLAB || p->fence == FENCE_QUIZ) {
        if (!p->fence_first && text >= p->doc && text < p->doc + p->size) p->fence_first = line_of(p, text);
        if (tbuf_put(&p->code, text, size, 0)) p->oom = true;
        return p->oom ? 1 : 0;
    }
    switch (type) {
    case MD_TEXT_SOFTBR: /* a space or nothing: add_text decides when the next text comes */
        p->softbr = true;
        p->softbr_style = p->style;
        break;
    case MD_TEXT_BR: add_text(p, "\n", 1, NULL); break;
    case MD_TEXT_HTML: break;
    case MD_TEXT_NULLCHAR: add_text(p, "\xEF\xBF\xBD", 3, NULL); break;
    case MD_TEXT_ENTITY: {
        char out[8];
        size_t n = entity(text, size, out);
        if (n) add_text(p, out, n, text);
        else add_text(p, text, size, text);
        break;
    }
    default: add_text(p, text, size, text); break;
    }
    return p->oom ? 1 : 0;
}

/* ---- entry points */

static void free_step(lesson_step *st)
{
    free(st->title);
    for (int i = 0; i < st->n_settings; i++) free(st->settings[i].value);
    free(st->settings);
    for (int i = 0; i < st->n_blocks; i++) {
        free(st->blocks[i].text);
        free(st->blocks[i].spans);
    }
    free(st->blocks);
    for (int i = 0; i < st->n_quizzes; i++) {
        free(st->quizzes[i].question);
        free(st->quizzes[i].correct);
        free(st->quizzes[i].hint);
        free(st->quizzes[i].explain);
    }
    free(st->quizzes);
    *st = (lesson_step){0};
}

void lesson_free(lesson *ls)
{
    free(ls->path);
    free(ls->title);
    free(ls->summary);
    free_step(&ls->intro);
    for (int i = 0; i < ls->n_steps; i++) free_step(&ls->steps[i]);
    free(ls->steps);
    *ls = (lesson){0};
}

int lesson_quiz_count(const lesson *ls)
{
    int n = 0;
    for (int i = 0; i < ls->n_steps; i++) n += ls->steps[i].n_quizzes;
    return n;
}

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

int lesson_parse(const char *text, size_t size, const char *path, lesson *out, lesson_diags *dg)
{
    *out = (lesson){0};
    int n0 = dg ? dg->n : 0;
    out->path = dup_s(path ? path : "");
    if (!out->path) return lesson_diag_add(dg, 0, "out of memory"), -1;
    if (size > LESSON_MAX_BYTES) {
        lesson_diag_add(dg, 0, "the file is too large (%zu bytes; a lesson may have at most %d)", size,
                        LESSON_MAX_BYTES);
        return -1;
    }
    if (memchr(text, '\0', size)) {
        const char *z = memchr(text, '\0', size);
        int line = 1;
        for (const char *c = text; c < z; c++) line += *c == '\n';
        lesson_diag_add(dg, line, "a NUL byte: this is not a text file");
        return -1;
    }
    int bad = bad_utf8_line(text, size);
    if (bad) {
        lesson_diag_add(dg, bad, "invalid UTF-8: save the lesson as UTF-8");
        return -1;
    }

    parser p = {.doc = text, .size = size, .ls = out, .dg = dg, .open_kind = -1, .choice_quiz_done = -1};
    p.step = &out->intro;
    int n_lines = 1;
    for (size_t i = 0; i < size; i++) n_lines += text[i] == '\n';
    p.line_start = malloc((size_t)n_lines * sizeof *p.line_start);
    if (!p.line_start) return lesson_diag_add(dg, 0, "out of memory"), -1;
    p.line_start[p.n_lines++] = 0;
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\n') p.line_start[p.n_lines++] = i + 1;

    MD_PARSER md = {
        .flags = MD_FLAG_TASKLISTS | MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_NOHTML |
                 MD_FLAG_PERMISSIVEATXHEADERS,
        .enter_block = enter_block,
        .leave_block = leave_block,
        .enter_span = enter_span,
        .leave_span = leave_span,
        .text = text_cb,
    };
    int rc = md_parse(text, (MD_SIZE)size, &md, &p);
    close_block(&p);
    if (p.oom) lesson_diag_add(dg, 0, "out of memory");
    else if (rc && (!dg || dg->n == n0)) lesson_diag_add(dg, p.line, "the Markdown parser gave up here");

    /* the picker's summary: the introduction's first paragraph */
    for (int i = 0; i < out->intro.n_blocks && !out->summary; i++)
        if (out->intro.blocks[i].kind == LESSON_BLOCK_PARA) out->summary = dup_s(out->intro.blocks[i].text);
    if (!out->summary) out->summary = dup_s("");

    if (!out->title) lesson_diag_add(dg, 1, "no title: a lesson starts with a '# Title' line");
    else if (!out->n_steps) lesson_diag_add(dg, out->title_line, "no steps: every '## heading' starts a step");

    tbuf_clear(&p.text);
    tbuf_clear(&p.heading);
    tbuf_clear(&p.code);
    free(p.last_para);
    free(p.line_start);
    return dg && dg->n > n0 ? -1 : (p.oom || !out->title || !out->n_steps) ? -1 : 0;
}

char *lesson_read_file(const char *path, size_t limit, size_t *size)
{
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    int err = 0;
    while (*size <= limit) {
        if (*size + 1 >= cap) {
            cap = cap ? 2 * cap : 16384;
            char *b = realloc(buf, cap);
            if (!b) {
                err = ENOMEM;
                break;
            }
            buf = b;
        }
        size_t got = fread(buf + *size, 1, cap - *size - 1, f);
        *size += got;
        if (!got) {
            if (ferror(f)) err = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    if (!buf && !(buf = malloc(1))) return errno = ENOMEM, NULL;
    buf[*size] = '\0';
    return buf;
}

int lesson_load(const char *path, lesson *out, lesson_diags *dg)
{
    *out = (lesson){0};
    size_t n;
    char *buf = lesson_read_file(path, LESSON_MAX_BYTES, &n); /* lesson_parse reports a file too large */
    if (!buf) {
        if (errno == ENOMEM) lesson_diag_add(dg, 0, "out of memory");
        else lesson_diag_add(dg, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    int ret = lesson_parse(buf, n, path, out, dg);
    free(buf);
    return ret;
}
