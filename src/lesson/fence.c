/* fence.c — fenced code blocks: ```attnlab settings and ```quiz blocks.
 *
 * Their text is collected whole (parser_fence_text) and read line by line
 * when the fence closes: `key = value` pairs, '#' comments and blank lines.
 * Any other fence is a code block shown as it is. */
#include "parser.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>

#include "engine/trace/config.h"
#include "engine/trace/stages.h"

/* ---- keys */

static const char *const VIEW_KEYS[] = {"stage", "layer", "head", "batch_row", "view", "compare", "row",
                                        "decode_step", "highlight", "panels", "tile"};
static const char *const QUIZ_KEYS[] = {"answer", "tolerance", "click", "stage", "rows", "cols", "hint", "explain"};
static const char *const CELL_RULES[] = {"masked", "unmasked", "argmax", "argmin", "nan"};

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

static const char *suggest(const char *key, const char *const *a, int na)
{
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; i < na; i++) {
        int d = attn_edit_distance(key, a[i]);
        if (d < bd) bd = d, best = a[i];
    }
    return best;
}

/* s: the key meant, or NULL */
static void unknown_key(parser *p, int line, const char *key, const char *what, const char *s)
{
    if (s) lesson_diag_add(p->dg, line, "unknown %s key '%s' (did you mean '%s'?)", what, key, s);
    else lesson_diag_add(p->dg, line, "unknown %s key '%s'", what, key);
}

/* ---- lines */

static bool parse_number(const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *parser_trim(end) || errno == ERANGE || !isfinite(d)) return false;
    *out = d;
    return true;
}

#define KEY_MAX 32

/* One line of an attnlab or quiz block. Returns 1 for a `key = value` pair
 * (key normalised, *value trimmed and pointing into raw), 0 for a blank or
 * comment line, -1 after reporting a malformed line. */
static int key_value(parser *p, int line, char *raw, char key[KEY_MAX], char **value)
{
    char *s = parser_trim(raw);
    if (!*s || *s == '#') return 0;
    char *eq = strchr(s, '=');
    if (!eq) {
        lesson_diag_add(p->dg, line, "expected 'key = value', got '%.60s'", s);
        return -1;
    }
    *eq = '\0';
    char *k = parser_trim(s);
    *value = parser_trim(eq + 1);
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

/* The next line of a fence's body, cut at its newline; *rest moves past it
 * (NULL after the last line). */
static char *cut_line(char **rest)
{
    char *s = *rest, *nl = strchr(s, '\n');
    if (nl) *nl = '\0';
    *rest = nl ? nl + 1 : NULL;
    return s;
}

/* ---- ```attnlab */

static void setting_line(parser *p, int line, char *raw)
{
    char key[KEY_MAX], *v;
    if (key_value(p, line, raw, key, &v) <= 0) return;
    const attn_setting *row = attn_setting_find(key);
    if (row && !(row->flags & ATTN_SETTING_LESSON)) {
        lesson_diag_add(p->dg, line, "%s: %s", key,
                        row->flags & ATTN_SETTING_FILE ? "files are not allowed in lessons (a lesson must work "
                                                         "wherever it is copied)"
                                                       : "not allowed in lessons (it belongs to the machine the "
                                                         "course runs on)");
        return;
    }
    if (!row && !lesson_is_view_key(key) && strcmp(key, "checkpoint")) { /* checkpoint: state.c */
        unknown_key(p, line, key, "attnlab",
                    attn_setting_suggest(key, ATTN_SETTING_LESSON, VIEW_KEYS, COUNT(VIEW_KEYS)));
        return;
    }
    lesson_setting set = {.line = line};
    memcpy(set.key, key, sizeof set.key);
    set.value = parser_strdup(v);
    if (!set.value) { p->oom = true; return; }
    int before = p->step->n_settings;
    PUSH(p, p->step->settings, p->step->n_settings, set);
    if (p->step->n_settings == before) free(set.value);
}

static void settings_block(parser *p, char *body)
{
    int line = body_line(p);
    for (char *rest = body; rest; line++) setting_line(p, line, cut_line(&rest));
}

/* ---- ```quiz */

/* The keys of a quiz block (NULL when absent) and their lines. */
typedef struct {
    const char *answer, *tolerance, *click, *stage, *rows, *cols, *hint, *explain;
    int l_answer, l_tol, l_click, l_stage, l_rows, l_cols, l_hint, l_explain;
} quiz_keys;

static void read_quiz_keys(parser *p, char *body, quiz_keys *k)
{
    int line = body_line(p);
    for (char *rest = body; rest; line++) {
        char key[KEY_MAX], *v;
        if (key_value(p, line, cut_line(&rest), key, &v) <= 0) continue;
        if (!strcmp(key, "answer")) k->answer = v, k->l_answer = line;
        else if (!strcmp(key, "tolerance")) k->tolerance = v, k->l_tol = line;
        else if (!strcmp(key, "click")) k->click = v, k->l_click = line;
        else if (!strcmp(key, "stage")) k->stage = v, k->l_stage = line;
        else if (!strcmp(key, "rows")) k->rows = v, k->l_rows = line;
        else if (!strcmp(key, "cols")) k->cols = v, k->l_cols = line;
        else if (!strcmp(key, "hint")) k->hint = v, k->l_hint = line;
        else if (!strcmp(key, "explain")) k->explain = v, k->l_explain = line;
        else unknown_key(p, line, key, "quiz", suggest(key, QUIZ_KEYS, COUNT(QUIZ_KEYS)));
    }
}

/* answer = NUMBER, tolerance = NUMBER */
/* answer = {{NUMBER | WHAT ...}}: the answer is NUMBER, and --check measures
 * WHAT as it does in the prose. False after a message. */
static bool measured_answer(parser *p, const quiz_keys *k, double *a)
{
    lesson_step *st = p->step;
    int before = st->n_measures;
    parser_text t = {0};
    if (parser_text_put(&t, k->answer, strlen(k->answer), 0)) return p->oom = true, false;
    parser_strip_measures(p, &t, k->l_answer, true); /* reports a measure it cannot read */
    size_t n = strlen(k->answer);
    bool whole = !strncmp(k->answer, "{{", 2) && n > 4 && !strcmp(k->answer + n - 2, "}}");
    bool ok = whole && st->n_measures == before + 1;
    if (ok) *a = st->measures[before].shown;
    else if (st->n_measures > before) /* the measure was read, but it is not the whole answer */
        lesson_diag_add(p->dg, k->l_answer, "answer: a measured answer is one {{NUMBER | WHAT ...}} and nothing else");
    parser_text_clear(&t);
    return ok;
}

static lesson_quiz *number_quiz(parser *p, const quiz_keys *k)
{
    double a, tol = 1e-3;
    if (strstr(k->answer, "{{")) {
        if (!measured_answer(p, k, &a)) return NULL;
    } else if (!parse_number(k->answer, &a)) {
        lesson_diag_add(p->dg, k->l_answer, "answer: '%.40s' is not a number", k->answer);
        return NULL;
    }
    if (k->tolerance && (!parse_number(k->tolerance, &tol) || tol < 0)) {
        lesson_diag_add(p->dg, k->l_tol, "tolerance: '%.40s' is not a number >= 0", k->tolerance);
        return NULL;
    }
    lesson_quiz *q = parser_new_quiz(p, LESSON_QUIZ_NUMBER, p->fence_line);
    if (!q) return NULL;
    q->answer = a;
    q->tolerance = tol;
    return q;
}

static int rule_of(const char *v)
{
    for (int i = 0; i < COUNT(CELL_RULES); i++)
        if (!strcasecmp(v, CELL_RULES[i])) return i;
    return -1;
}

/* A whole number from 0 at s, spaces around it skipped; the end in *end. */
static bool parse_index(const char *s, const char **end, int *out)
{
    while (*s == ' ' || *s == '\t') s++;
    if (!isdigit((unsigned char)*s)) return false;
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (errno == ERANGE || v > 1000000) return false;
    while (*e == ' ' || *e == '\t') e++;
    *end = e;
    *out = (int)v;
    return true;
}

/* rows = FIRST..LAST (both counted) or rows = N: r = {FIRST, LAST + 1}; false after a message. */
static bool parse_range(parser *p, const char *key, const char *v, int line, int r[2])
{
    const char *e;
    if (!v) return true;
    if (parse_index(v, &e, &r[0])) {
        r[1] = r[0] + 1;
        if (!*e) return true;
        if (e[0] == '.' && e[1] == '.' && parse_index(e + 2, &e, &r[1]) && !*e && r[1]++ >= r[0]) return true;
    }
    lesson_diag_add(p->dg, line, "%s: '%.40s' is not a range FIRST..LAST of %s counted from 0 (FIRST <= LAST, "
                                 "both included), e.g. 7..12",
                    key, v, key);
    r[0] = r[1] = 0;
    return false;
}

/* click = RULE, stage = NAME, rows = A..B, cols = A..B; one per step */
static lesson_quiz *cells_quiz(parser *p, const quiz_keys *k)
{
    lesson_step *st = p->step;
    int rule = rule_of(k->click);
    if (rule < 0) {
        lesson_diag_add(p->dg, k->l_click, "click: '%.40s' is not masked, unmasked, argmax, argmin or nan", k->click);
        return NULL;
    }
    if (k->stage && attn_stage_index(k->stage) < 0) {
        lesson_diag_add(p->dg, k->l_stage, "stage: unknown stage '%.40s'", k->stage);
        return NULL;
    }
    for (int i = 0; i < st->n_quizzes; i++)
        if (st->quizzes[i].kind == LESSON_QUIZ_CELLS) {
            lesson_diag_add(p->dg, p->fence_line, "a step has at most one cell quiz (another one is at line %d)",
                            st->quizzes[i].line);
            return NULL;
        }
    lesson_quiz *q = parser_new_quiz(p, LESSON_QUIZ_CELLS, p->fence_line);
    if (!q) return NULL;
    q->rule = (lesson_cell_rule)rule;
    snprintf(q->stage, sizeof q->stage, "%s", k->stage ? k->stage : "");
    if (k->rows && parse_range(p, "rows", k->rows, k->l_rows, q->rows)) q->rows_line = k->l_rows;
    if (k->cols && parse_range(p, "cols", k->cols, k->l_cols, q->cols)) q->cols_line = k->l_cols;
    return q;
}

/* A quiz block with neither answer nor click gives the hint and explanation
 * of the choice quiz (task list) just above it. */
static lesson_quiz *choice_quiz_notes(parser *p, const quiz_keys *k)
{
    lesson_step *st = p->step;
    if (p->choice_quiz_done >= 0 && p->choice_quiz_done < st->n_quizzes && (k->hint || k->explain))
        return &st->quizzes[p->choice_quiz_done];
    lesson_diag_add(p->dg, p->fence_line,
                    "quiz has no right answer: give 'answer = NUMBER' or 'click = masked|unmasked|argmax|argmin|nan'");
    return NULL;
}

static void set_note(parser *p, char **note, const char *v, int line)
{
    if (!v) return;
    free(*note);
    parser_text t = {0};
    if (parser_text_put(&t, v, strlen(v), 0)) {
        p->oom = true;
        *note = NULL;
        return;
    }
    parser_strip_measures(p, &t, line, true);
    *note = t.s;
    t.s = NULL;
    parser_text_clear(&t);
}

static void quiz_block(parser *p, char *body)
{
    /* collect the keys first, then decide what kind of quiz it is */
    quiz_keys k = {.l_answer = p->fence_line};
    read_quiz_keys(p, body, &k);
    if (k.answer && k.click) {
        lesson_diag_add(p->dg, k.l_click, "a quiz has either 'answer' (a number) or 'click' (cells), not both");
        return;
    }
    lesson_quiz *q = k.answer ? number_quiz(p, &k) : k.click ? cells_quiz(p, &k) : choice_quiz_notes(p, &k);
    if (!q) return;
    if (k.tolerance && !k.answer) lesson_diag_add(p->dg, k.l_tol, "tolerance: only a numeric quiz (answer = …) has one");
    if (k.rows && !k.click) lesson_diag_add(p->dg, k.l_rows, "rows: only a cell quiz (click = …) has a region");
    if (k.cols && !k.click) lesson_diag_add(p->dg, k.l_cols, "cols: only a cell quiz (click = …) has a region");
    set_note(p, &q->hint, k.hint, k.l_hint);
    set_note(p, &q->explain, k.explain, k.l_explain);
    if (q->kind != LESSON_QUIZ_CHOICE) parser_add_quiz_block(p, (int)(q - p->step->quizzes), p->fence_line);
}

/* ---- the fence */

void parser_enter_fence(parser *p, const MD_BLOCK_CODE_DETAIL *c)
{
    parser_close_block(p);
    p->fence_char = c->fence_char;
    p->fence_first = 0;
    p->fence_line = c->info.text ? parser_line_of(p, c->info.text) : p->line + 1;
    char lang[16] = "";
    if (c->lang.size < sizeof lang) normalise(c->lang.text, c->lang.size, lang, sizeof lang);
    p->fence = !strcmp(lang, "attnlab") ? FENCE_ATTNLAB : !strcmp(lang, "quiz") ? FENCE_QUIZ : FENCE_OTHER;
    if (p->fence == FENCE_OTHER && lang[0] &&
        (attn_edit_distance(lang, "attnlab") <= 2 || attn_edit_distance(lang, "quiz") == 1))
        lesson_diag_add(p->dg, p->fence_line, "code block tagged '%s': did you mean '%s'?", lang,
                        attn_edit_distance(lang, "attnlab") <= 2 ? "attnlab" : "quiz");
    parser_text_clear(&p->code);
    if (p->fence == FENCE_OTHER) {
        parser_open_block(p, LESSON_BLOCK_CODE, 0, "");
        p->open_line = p->fence_line;
    }
}

bool parser_fence_text(parser *p, const char *text, size_t size)
{
    if (p->fence != FENCE_ATTNLAB && p->fence != FENCE_QUIZ) return false;
    if (!p->fence_first && text >= p->doc && text < p->doc + p->size) p->fence_first = parser_line_of(p, text);
    if (parser_text_put(&p->code, text, size, 0)) p->oom = true;
    return true;
}

/* Was the fence closed? md4c runs an unclosed fence to the end of the file. */
static bool fence_closed(const parser *p)
{
    for (int l = p->fence_line; l < p->n_lines; l++) { /* from the line after the opening fence */
        const char *s, *e;
        parser_line_bytes(p, l, &s, &e);
        int ind = 0;
        while (s < e && *s == ' ' && ind < 4) s++, ind++;
        int run = 0;
        while (s < e && *s == p->fence_char) s++, run++;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) s++;
        if (ind < 4 && run >= 3 && s == e) return true;
    }
    return false;
}

void parser_leave_fence(parser *p)
{
    if (p->fence_char && !fence_closed(p))
        lesson_diag_add(p->dg, p->fence_line, "the code block opened here is never closed (missing %c%c%c)",
                        p->fence_char, p->fence_char, p->fence_char);
    parser_close_block(p); /* a code block shown as it is */
    if (p->fence == FENCE_ATTNLAB && p->code.s) settings_block(p, p->code.s);
    else if (p->fence == FENCE_QUIZ && p->code.s) quiz_block(p, p->code.s);
    else if (p->fence == FENCE_QUIZ) lesson_diag_add(p->dg, p->fence_line, "empty quiz block");
    parser_text_clear(&p->code);
    p->fence = FENCE_NONE;
}
