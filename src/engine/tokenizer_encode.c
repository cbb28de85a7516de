/* tokenizer_encode.c — the pipeline: text → ids, ids → text. */
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "utf8.h"

/* A piece of the text being tokenized: bytes [start, start + len) of a buffer. */
typedef struct {
    size_t start, len;
} piece;

typedef struct {
    piece *v;
    int n, cap;
} pieces;

static int push_piece(pieces *p, size_t start, size_t len)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        piece *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (piece){start, len};
    return 0;
}

/* s[0..n) with every ill-formed part as U+FFFD (and lower-cased if asked). */
static char *clean(const attn_tokenizer *t, const char *s, size_t n, bool lower, size_t *out_n)
{
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += attn_utf8_decode(s + i, n - i, &cp);
        if (lower && t->lower) cp = (uint32_t)towlower_l((wint_t)cp, t->lower);
        size_t k = attn_utf8_encode(cp, o);
        o += k ? k : attn_utf8_encode(ATTN_UTF8_REPLACEMENT, o);
    }
    *o = '\0';
    *out_n = (size_t)(o - out);
    return out;
}

/* Each piece split into the matches of re (pieces of s). */
static int split(const pcre2_code *re, const char *s, pieces *in, pieces *out)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return -1;
    for (int i = 0; i < in->n; i++) {
        PCRE2_SIZE at = in->v[i].start, end = in->v[i].start + in->v[i].len;
        while (at < end && pcre2_match(re, (PCRE2_SPTR)s, end, at, 0, md, NULL) > 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            if (ov[1] == ov[0]) break; /* the patterns never match empty; be safe */
            if (push_piece(out, ov[0], ov[1] - ov[0])) {
                pcre2_match_data_free(md);
                return -1;
            }
            at = ov[1];
        }
    }
    pcre2_match_data_free(md);
    return 0;
}

/* One stretch of text between added tokens: normalize, pre-tokenize, model. */
static attn_status segment(const attn_tokenizer *t, const char *s, size_t n, tok_ids *out, attn_error *err)
{
    size_t len;
    char *text = clean(t, s, n, t->n_norm > 0, &len);
    pieces a = {0}, b = {0};
    attn_status st = ATTN_OK;
    if (!text || push_piece(&a, 0, len)) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < t->n_pre; k++) {
        b.n = 0;
        if (split(t->pre[k] == TOK_PRE_WHITESPACE ? t->word_re : t->split_re, text, &a, &b)) {
            st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
            goto out;
        }
        pieces tmp = a;
        a = b;
        b = tmp;
    }
    for (int i = 0; i < a.n && !st; i++)
        if (a.v[i].len) st = tok_model_word(t, text + a.v[i].start, a.v[i].len, out, err);
out:
    free(text);
    free(a.v);
    free(b.v);
    return st;
}

/* The added token that starts at s, longest first; NULL if none. */
static const tok_added *added_at(const attn_tokenizer *t, const char *s)
{
    for (int i = 0; i < t->n_added; i++)
        if (!strncmp(s, t->added[i].content, strlen(t->added[i].content))) return &t->added[i];
    return NULL;
}

attn_status attn_tokenizer_encode(const attn_tokenizer *t, const char *text, bool add_special, int **ids, int *n,
                                  attn_error *err)
{
    tok_ids out = {0};
    attn_status st = ATTN_OK;
    size_t len = strlen(text), from = 0;
    for (int i = 0; add_special && !st && i < t->n_prefix; i++)
        if (tok_ids_push(&out, t->prefix[i])) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i <= len;) {
        const tok_added *a = i < len ? added_at(t, text + i) : NULL;
        if (i < len && !a) {
            i = attn_utf8_next(text, len, i);
            continue;
        }
        if (i > from) st = segment(t, text + from, i - from, &out, err);
        if (!a) break;
        if (!st && tok_ids_push(&out, a->id)) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        i += strlen(a->content);
        from = i;
    }
    for (int i = 0; add_special && !st && i < t->n_suffix; i++)
        if (tok_ids_push(&out, t->suffix[i])) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if (st) {
        free(out.v);
        return st;
    }
    *ids = out.v ? out.v : malloc(sizeof(int));
    *n = out.n;
    return *ids ? ATTN_OK : attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
}

attn_status attn_tokenizer_decode(const attn_tokenizer *t, const int *ids, int n, bool skip_special, char **text,
                                  attn_error *err)
{
    size_t cap = 1;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_vocab || !t->vocab[ids[i]])
            return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is not in the vocabulary", ids[i]);
        cap += strlen(t->vocab[ids[i]]) + 1;
    }
    char *s = malloc(cap), *p = s;
    if (!s) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (skip_special && t->special[ids[i]]) continue;
        if (p > s && !t->fuse) *p++ = ' ';
        size_t k = strlen(t->vocab[ids[i]]);
        memcpy(p, t->vocab[ids[i]], k);
        p += k;
    }
    *p = '\0';
    *text = s;
    return ATTN_OK;
}
