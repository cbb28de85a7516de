/* parser.h — the lesson parser's state, private to src/lesson.
 *
 * parse.c walks the Markdown with md4c's callbacks, block.c fills the step's
 * prose blocks from the text runs, fence.c reads ```attnlab and ```quiz
 * blocks. All three share one parser value, passed to md4c as its userdata. */
#ifndef LESSON_PARSER_H
#define LESSON_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <md4c.h>

#include "lesson.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* ---- growable text with style spans (block.c) */

typedef struct {
    char *s;             /* zero-terminated, NULL while empty */
    size_t n, cap;
    lesson_span *spans;
    int n_spans, cap_spans;
} parser_text;

/* Appends s[0..n) in style (0: plain); -1 when out of memory. */
int parser_text_put(parser_text *b, const char *s, size_t n, unsigned style);
void parser_text_clear(parser_text *b);

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
    parser_text text;

    unsigned style;      /* current span styles */
    bool softbr;         /* a soft line break waits for the next text */
    unsigned softbr_style;
    int img_depth;

    /* headings */
    int heading_level;   /* 1, 2: title / step title being read; 0 otherwise */
    parser_text heading;

    /* lists: one entry per open UL/OL */
    /* choice_quiz: the quiz this task list builds; why_quiz/why_choice: the
     * choice this list, nested under it, explains (-1: neither) */
    struct { bool ordered; int next; int choice_quiz, why_quiz, why_choice; } list[MAX_DEPTH];
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
    parser_text code;

    struct {              /* heading_line's scan of the lines, where the last heading found left it */
        int line;         /* the next line to look at (0-based) */
        char fence;       /* inside a fence of this character, else 0 */
    } h12_scan;
    int choice_quiz_done; /* index of the choice quiz whose list just closed, -1 otherwise */
    char *last_para;      /* plain text of the step's latest paragraph (owned) */
} parser;

/* ---- lines of the document (parse.c) */

/* 1-based line of a pointer into the document; p->line for any other pointer. */
int parser_line_of(const parser *p, const char *ptr);

/* Bytes [*s, *e) of 0-based line l, its newline included. */
void parser_line_bytes(const parser *p, int l, const char **s, const char **e);

/* ---- blocks (block.c) */

/* Starts a prose block; text goes to it until parser_close_block. */
void parser_open_block(parser *p, lesson_block_kind kind, int level, const char *marker);

/* Ends the open block, if any, and adds it to the step unless it is empty. */
void parser_close_block(parser *p);

/* Adds text s[0..n) to the open block or heading; ptr (into the document, or
 * NULL) gives the block its line. */
void parser_add_text(parser *p, const char *s, size_t n, const char *ptr);

/* Replaces each {{NUMBER | WHAT ...}} in t with NUMBER and adds its measure
 * to the step (measure.h); t's text starts at document line `line`. */
void parser_strip_measures(parser *p, parser_text *t, int line, bool in_quiz);

/* A new quiz of the current step, asking the step's latest paragraph; NULL
 * when out of memory. */
lesson_quiz *parser_new_quiz(parser *p, lesson_quiz_kind kind, int line);

/* Adds the block where quiz q of the step is answered, at line. */
void parser_add_quiz_block(parser *p, int q, int line);

/* ---- fenced code blocks (fence.c) */

void parser_enter_fence(parser *p, const MD_BLOCK_CODE_DETAIL *c);

/* Keeps a run of text inside an attnlab or quiz block; false for text
 * anywhere else. */
bool parser_fence_text(parser *p, const char *text, size_t size);

/* Reads the attnlab or quiz block that closes, or ends a code block. */
void parser_leave_fence(parser *p);

/* ---- small helpers */

static inline char *parser_strdup(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* Room for one more element in arr, which holds n: capacity doubles at powers
 * of two, arrays start empty. NULL when out of memory (arr is kept). */
static inline void *parser_grow(void *arr, int n, size_t elem)
{
    if (n && (n & (n - 1))) return arr;
    size_t cap = n ? (size_t)n * 2 : 4;
    return realloc(arr, cap * elem);
}

#define PUSH(p, arr, count, value)                                                 \
    do {                                                                           \
        void *g_ = parser_grow((arr), (count), sizeof *(arr));                     \
        if (!g_) { (p)->oom = true; break; }                                       \
        (arr) = g_;                                                                \
        (arr)[(count)++] = (value);                                                \
    } while (0)

/* s without leading blanks, and with trailing blanks and '\r' cut off. */
static inline char *parser_trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
    return s;
}

#endif
