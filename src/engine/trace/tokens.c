/* tokens.c — parsing, validating and padding rows of tokens. */
#include "tokens.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/rng.h"
#include "engine/base/utf8.h"

/* Length in bytes of the separator starting at s, or 0 if s is not whitespace. */
static size_t space_len(const char *s)
{
    if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f')
        return 1;
    uint32_t cp;
    if (attn_utf8_decode(s, SIZE_MAX, &cp) == 3 && cp == 0x3000)
        return 3; /* U+3000 IDEOGRAPHIC SPACE, typed by Chinese input methods */
    return 0;
}

typedef struct {
    char **tok;
    int n, cap;
} tok_list;

static int list_push(tok_list *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        char **p = realloc(l->tok, (size_t)cap * sizeof *p);
        if (!p) return -1;
        l->tok = p;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->tok[l->n++] = copy;
    return 0;
}

static void list_free(tok_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->tok[i]);
    free(l->tok);
}

attn_status attn_tokens_from_table(int rows, int len, const char *const *tok,
                                   const int *lengths, attn_pad_side side,
                                   attn_tokens *out, attn_error *err)
{
    memset(out, 0, sizeof *out);
    out->tok = calloc((size_t)rows * (size_t)len, sizeof *out->tok);
    out->lengths = calloc((size_t)rows, sizeof *out->lengths);
    if (!out->tok || !out->lengths) goto nomem;
    out->rows = rows;
    out->len = len;
    out->side = side;
    for (int r = 0; r < rows; r++) {
        out->lengths[r] = lengths[r];
        for (int p = 0; p < len; p++) {
            const char *s = tok[(size_t)r * len + p];
            if (!(out->tok[(size_t)r * len + p] = strdup(s ? s : ATTN_PAD_TOKEN))) goto nomem;
        }
    }
    return ATTN_OK;
nomem:
    attn_tokens_free(out);
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory while storing tokens");
}

/* Rows as they are read: every token in order, and how many each row has. */
typedef struct {
    tok_list all;
    int *len, rows, cap;
} row_list;

static void rows_free(row_list *r)
{
    free(r->len);
    list_free(&r->all);
}

static attn_status parse_nomem(const char *what, attn_error *err)
{
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory while parsing %s", what);
}

/* Ends the row being read, of cur tokens, at a '|' (bar) or at the end of the
 * text. An empty row is an error, and so is an empty text. */
static attn_status end_row(row_list *r, int cur, bool bar, const char *what, attn_error *err)
{
    if (cur == 0 && (bar || r->rows > 0))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: row %d has no tokens", what, r->rows + 1);
    if (cur == 0) return attn_fail(err, ATTN_ERR_CONFIG, "%s: no tokens given", what);
    if (r->rows == ATTN_MAX_ROWS)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: more than %d rows", what, ATTN_MAX_ROWS);
    if (r->rows == r->cap) {
        int cap = r->cap ? r->cap * 2 : 8;
        int *p = realloc(r->len, (size_t)cap * sizeof *p);
        if (!p) return parse_nomem(what, err);
        r->len = p;
        r->cap = cap;
    }
    r->len[r->rows++] = cur;
    return ATTN_OK;
}

/* Adds the len bytes at start as the next token of the row being read, which
 * has cur already: not too long, not <pad>, not one too many. */
static attn_status add_token(row_list *r, const char *start, size_t len, int cur, const char *what,
                             attn_error *err)
{
    if (len > ATTN_MAX_TOKEN_BYTES)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: token '%.16s…' in row %d is longer than %d bytes", what, start,
                         r->rows + 1, ATTN_MAX_TOKEN_BYTES);
    if (len == strlen(ATTN_PAD_TOKEN) && memcmp(start, ATTN_PAD_TOKEN, len) == 0)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is reserved; shorter rows are padded automatically", what,
                         ATTN_PAD_TOKEN);
    if (cur == ATTN_MAX_SEQ)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: row %d has more than %d tokens", what, r->rows + 1,
                         ATTN_MAX_SEQ);
    return list_push(&r->all, start, len) ? parse_nomem(what, err) : ATTN_OK;
}

/* Splits text into rows at '|' and each row into tokens at whitespace. */
static attn_status split_rows(const char *text, const char *what, row_list *r, attn_error *err)
{
    attn_status st;
    const char *s = text;
    int cur = 0; /* tokens in the current row */
    for (;;) {
        size_t sp;
        while ((sp = space_len(s))) s += sp;
        if (*s == '|' || *s == '\0') {
            if ((st = end_row(r, cur, *s == '|', what, err))) return st;
            if (*s == '\0') return ATTN_OK;
            cur = 0;
            s++;
            continue;
        }
        const char *start = s;
        while (*s && *s != '|' && !space_len(s)) s++;
        if ((st = add_token(r, start, (size_t)(s - start), cur, what, err))) return st;
        cur++;
    }
}

/* The rows read, padded on side to the longest one, into out. */
static attn_status pad_rows(const row_list *r, attn_pad_side side, const char *what, attn_tokens *out,
                            attn_error *err)
{
    int L = 0;
    for (int i = 0; i < r->rows; i++) if (r->len[i] > L) L = r->len[i];
    const char **table = calloc((size_t)r->rows * (size_t)L, sizeof *table);
    if (!table) return parse_nomem(what, err);
    for (int i = 0, k = 0; i < r->rows; i++) {
        int off = side == ATTN_PAD_LEFT ? L - r->len[i] : 0;
        for (int p = 0; p < r->len[i]; p++) table[(size_t)i * L + off + p] = r->all.tok[k++];
    }
    attn_status st = attn_tokens_from_table(r->rows, L, table, r->len, side, out, err);
    free(table);
    return st;
}

attn_status attn_tokens_parse(const char *text, attn_pad_side side, const char *what,
                              attn_tokens *out, attn_error *err)
{
    memset(out, 0, sizeof *out);
    if (!attn_utf8_valid(text, strlen(text)))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: not valid UTF-8", what);
    row_list r = {0};
    attn_status st = split_rows(text, what, &r, err);
    if (!st) st = pad_rows(&r, side, what, out, err);
    rows_free(&r);
    return st;
}

attn_status attn_tokens_synthetic(int rows, int len, unsigned long long seed,
                                  attn_tokens *out, attn_error *err)
{
    static const char *const words[] = {
        "the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "to",
        "big", "red", "sun", "we", "see", "it", "is", "my", "old", "tree",
        "fish", "can", "swim", "I", "love", "AI", "you", "code", "runs", "fast",
        "bird", "sings",
    };
    const int nw = (int)(sizeof words / sizeof words[0]);
    const char **table = calloc((size_t)rows * (size_t)len, sizeof *table);
    int *lengths = calloc((size_t)rows, sizeof *lengths);
    attn_status st;
    if (!table || !lengths) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory while making tokens");
    } else {
        for (int r = 0; r < rows; r++) {
            lengths[r] = len;
            for (int p = 0; p < len; p++) {
                uint64_t h = attn_hash64(seed ^ attn_hash64(((uint64_t)r << 32) | (uint64_t)p));
                table[(size_t)r * len + p] = words[h % (uint64_t)nw];
            }
        }
        st = attn_tokens_from_table(rows, len, table, lengths, ATTN_PAD_RIGHT, out, err);
    }
    free(table);
    free(lengths);
    return st;
}

bool attn_tokens_is_pad(const attn_tokens *t, int row, int pos)
{
    int n = t->lengths[row];
    return t->side == ATTN_PAD_LEFT ? pos < t->len - n : pos >= n;
}

bool attn_tokens_padded(const attn_tokens *t)
{
    for (int r = 0; r < t->rows; r++)
        if (t->lengths[r] < t->len) return true;
    return false;
}

const char *attn_tokens_at(const attn_tokens *t, int row, int pos)
{
    return t->tok[(size_t)row * t->len + pos];
}

void attn_tokens_free(attn_tokens *t)
{
    if (t->tok)
        for (size_t i = 0; i < (size_t)t->rows * (size_t)t->len; i++) free(t->tok[i]);
    free(t->tok);
    free(t->lengths);
    memset(t, 0, sizeof *t);
}

char *attn_tokens_text(const attn_tokens *tk, int n)
{
    size_t cap = 16;
    for (int r = 0; r < tk->rows; r++)
        for (int i = 0; i < tk->len; i++) cap += strlen(attn_tokens_at(tk, r, i)) + 3;
    char *s = malloc(cap), *p = s;
    if (!s) return NULL;
    for (int r = 0; r < tk->rows; r++) {
        if (r) p += sprintf(p, " | ");
        int taken = 0;
        for (int i = 0; i < tk->len && (n <= 0 || taken < n); i++) {
            if (attn_tokens_is_pad(tk, r, i)) continue;
            p += sprintf(p, "%s%s", taken ? " " : "", attn_tokens_at(tk, r, i));
            taken++;
        }
    }
    *p = '\0';
    return s;
}
