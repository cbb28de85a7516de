/* tokenizer_encode.c — the pipeline text → ids, as the Hugging Face
 * tokenizers library runs it:
 *
 *   text → split at added tokens (kept whole) → each stretch between them:
 *     normalizer (Lowercase, NFC, NFKC, Prepend, Replace) → pre-tokenizer
 *     (Split, ByteLevel, Metaspace) into pieces → the model on each piece
 *   → the post-processor's template around the ids */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include <wctype.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "utf8.h"

/* A piece of text being pre-tokenized: owned bytes s[0..n), and whether it
 * starts where the whole input starts (Metaspace's prepend_scheme "first"). */
typedef struct {
    char *s;
    size_t n;
    bool first;
} piece;

typedef struct {
    piece *v;
    int n, cap;
} pieces;

static int push(pieces *p, const char *s, size_t n, bool first)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        piece *v = realloc(p->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        p->v = v;
        p->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c) return -1;
    memcpy(c, s, n);
    c[n] = '\0';
    p->v[p->n++] = (piece){c, n, first};
    return 0;
}

static void clear(pieces *p)
{
    for (int i = 0; i < p->n; i++) free(p->v[i].s);
    p->n = 0;
}

/* s[0..n) with every ill-formed part as U+FFFD. */
static char *clean(const char *s, size_t n)
{
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += attn_utf8_decode(s + i, n - i, &cp);
        size_t k = attn_utf8_encode(cp, o);
        o += k ? k : attn_utf8_encode(ATTN_UTF8_REPLACEMENT, o);
    }
    *o = '\0';
    return out;
}

/* ---- normalizer ---- */

static char *lowercase(const attn_tokenizer *t, const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n * 2 + 5), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += attn_utf8_decode(s + i, n - i, &cp);
        o += attn_utf8_encode((uint32_t)towlower_l((wint_t)cp, t->lower), o);
    }
    *o = '\0';
    return out;
}

static char *concat(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *out = malloc(na + nb + 1);
    if (out) {
        memcpy(out, a, na);
        memcpy(out + na, b, nb + 1);
    }
    return out;
}

/* Every match of re in s replaced by with (taken literally). */
static char *replace_all(const pcre2_code *re, const char *s, const char *with)
{
    PCRE2_SIZE cap = strlen(s) * 2 + strlen(with) * 4 + 64;
    for (int tries = 0; tries < 8; tries++) {
        char *out = malloc(cap);
        PCRE2_SIZE len = cap;
        if (!out) return NULL;
        int rc = pcre2_substitute(re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0,
                                  PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_LITERAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH,
                                  NULL, NULL, (PCRE2_SPTR)with, PCRE2_ZERO_TERMINATED, (PCRE2_UCHAR *)out, &len);
        if (rc >= 0) return out;
        free(out);
        if (rc != PCRE2_ERROR_NOMEMORY) return NULL;
        cap = len + 1;
    }
    return NULL;
}

/* The normalizer's steps on s (owned; replaced). NULL out of memory. */
static char *normalize(const attn_tokenizer *t, char *s)
{
    for (int i = 0; s && i < t->n_norm; i++) {
        const tok_norm *nm = &t->norm[i];
        char *next = NULL;
        switch (nm->kind) {
        case TOK_NORM_LOWERCASE: next = lowercase(t, s); break;
        case TOK_NORM_NFC: next = (char *)utf8proc_NFC((const utf8proc_uint8_t *)s); break;
        case TOK_NORM_NFKC: next = (char *)utf8proc_NFKC((const utf8proc_uint8_t *)s); break;
        case TOK_NORM_PREPEND: next = *s ? concat(nm->text, s) : strdup(s); break; /* not on empty text */
        case TOK_NORM_REPLACE: next = replace_all(nm->re, s, nm->text); break;
        }
        free(s);
        s = next;
    }
    return s;
}

/* ---- pre-tokenizer ---- */

/* A span [a, b) of a piece and whether the pattern matched it. */
typedef struct {
    size_t a, b;
    bool match;
} span;

/* The piece as alternating spans: between matches and matches (empty matches skipped). */
static span *find_spans(const pcre2_code *re, const piece *p, int *n)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    span *v = malloc((2 * p->n + 2) * sizeof *v);
    size_t prev = 0, at = 0;
    *n = 0;
    if (!md || !v) {
        pcre2_match_data_free(md);
        free(v);
        return NULL;
    }
    while (at < p->n && pcre2_match(re, (PCRE2_SPTR)p->s, p->n, at, 0, md, NULL) > 0) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) { /* an empty match: look again one character on */
            at = attn_utf8_next(p->s, p->n, ov[0]);
            continue;
        }
        if (ov[0] > prev) v[(*n)++] = (span){prev, ov[0], false};
        v[(*n)++] = (span){ov[0], ov[1], true};
        prev = at = ov[1];
    }
    if (prev < p->n) v[(*n)++] = (span){prev, p->n, false};
    pcre2_match_data_free(md);
    return v;
}

/* Splits piece p at the matches of re as behavior says (HF's Split and its
 * SplitDelimiterBehavior; invert swaps what is a match). */
static int split(const pcre2_code *re, tok_behavior behavior, bool invert, const piece *p, pieces *out)
{
    int n, k = 0, rc = 0;
    span *v = find_spans(re, p, &n);
    if (!v) return -1;
    span *w = malloc(((size_t)n + 1) * sizeof *w);
    if (!w) {
        free(v);
        return -1;
    }
    for (int i = 0; i < n; i++) v[i].match ^= invert;
    for (int i = 0; i < n; i++) {
        /* for MergedWithNext, walk from the end and join forwards instead of backwards */
        int at = behavior == TOK_MERGED_NEXT ? n - 1 - i : i;
        bool prev = i > 0 && v[behavior == TOK_MERGED_NEXT ? at + 1 : at - 1].match;
        span x = v[at];
        bool join = false;
        switch (behavior) {
        case TOK_ISOLATED: break;
        case TOK_REMOVED: if (x.match) continue; break;
        case TOK_CONTIGUOUS: join = k && x.match == prev; break;        /* a run of matches is one piece */
        case TOK_MERGED_PREVIOUS: join = k && x.match && !prev; break;  /* a match joins the piece before it */
        case TOK_MERGED_NEXT: join = k && x.match && !prev; break;      /* ... or the piece after it */
        }
        if (!join) w[k++] = x;
        else if (behavior == TOK_MERGED_NEXT) w[k - 1].a = x.a;
        else w[k - 1].b = x.b;
    }
    if (behavior == TOK_MERGED_NEXT) /* back into text order */
        for (int i = 0; i < k / 2; i++) {
            span t = w[i];
            w[i] = w[k - 1 - i];
            w[k - 1 - i] = t;
        }
    free(v);
    v = w;
    for (int i = 0; !rc && i < k; i++)
        if (v[i].b > v[i].a) rc = push(out, p->s + v[i].a, v[i].b - v[i].a, p->first && v[i].a == 0);
    free(v);
    return rc;
}

/* GPT-2's byte-level spelling of p: every byte as the code point that stands for it. */
static int byte_level(const piece *p, bool prefix_space, const pcre2_code *re, pieces *out)
{
    piece q = *p;
    char *spaced = NULL;
    if (prefix_space && (p->n == 0 || p->s[0] != ' ')) {
        if (!(spaced = concat(" ", p->s))) return -1;
        q = (piece){spaced, p->n + 1, p->first};
    }
    pieces parts = {0};
    int rc = re ? split(re, TOK_ISOLATED, false, &q, &parts) : push(&parts, q.s, q.n, q.first);
    for (int i = 0; !rc && i < parts.n; i++) {
        char *buf = malloc(parts.v[i].n * 2 + 1), *o = buf;
        if (!buf) { rc = -1; break; }
        for (size_t k = 0; k < parts.v[i].n; k++) o += attn_utf8_encode(tok_byte_char((unsigned char)parts.v[i].s[k]), o);
        rc = push(out, buf, (size_t)(o - buf), parts.v[i].first);
        free(buf);
    }
    clear(&parts);
    free(parts.v);
    free(spaced);
    return rc;
}

/* Metaspace: spaces become the replacement, which is prepended as the scheme says. */
static int metaspace(const tok_pre *m, const piece *p, pieces *out)
{
    size_t rl = strlen(m->replacement), n = 0;
    char *buf = malloc(p->n * rl + rl + 1);
    if (!buf) return -1;
    bool lead = p->n < rl || memcmp(p->s, m->replacement, rl) != 0; /* does not start with it yet */
    if (lead && p->s[0] != ' ' &&
        (m->prepend == TOK_PREPEND_ALWAYS || (m->prepend == TOK_PREPEND_FIRST && p->first))) {
        memcpy(buf, m->replacement, rl);
        n = rl;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (p->s[i] == ' ') { memcpy(buf + n, m->replacement, rl); n += rl; }
        else buf[n++] = p->s[i];
    }
    buf[n] = '\0';
    piece q = {buf, n, p->first};
    int rc = 0;
    if (m->split) {
        int code;
        PCRE2_SIZE at;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)m->replacement, rl, PCRE2_UTF | PCRE2_LITERAL, &code, &at, NULL);
        rc = re ? split(re, TOK_MERGED_NEXT, false, &q, out) : -1;
        pcre2_code_free(re);
    } else {
        rc = push(out, q.s, q.n, q.first);
    }
    free(buf);
    return rc;
}

static int pre_step(const tok_pre *st, const pieces *in, pieces *out)
{
    for (int i = 0; i < in->n; i++) {
        int rc;
        switch (st->kind) {
        case TOK_PRE_SPLIT: rc = split(st->re, st->behavior, st->invert, &in->v[i], out); break;
        case TOK_PRE_BYTELEVEL: rc = byte_level(&in->v[i], st->prefix_space, st->re, out); break;
        default: rc = metaspace(st, &in->v[i], out); break;
        }
        if (rc) return rc;
    }
    return 0;
}

/* One stretch of text between added tokens: normalize, pre-tokenize, model.
 * at_start: the stretch begins the input. */
static attn_status segment(const attn_tokenizer *t, const char *s, size_t n, bool at_start, tok_ids *out,
                           attn_error *err)
{
    char *text = normalize(t, clean(s, n));
    pieces a = {0}, b = {0};
    attn_status st = ATTN_OK;
    if (!text || push(&a, text, strlen(text), at_start)) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < t->n_pre; k++) {
        clear(&b);
        if (pre_step(&t->pre[k], &a, &b)) {
            st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
            goto out;
        }
        pieces tmp = a;
        a = b;
        b = tmp;
    }
    for (int i = 0; i < a.n && !st; i++)
        if (a.v[i].n) st = tok_model_word(t, a.v[i].s, a.v[i].n, out, err);
out:
    free(text);
    clear(&a);
    clear(&b);
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
        if (i > from) st = segment(t, text + from, i - from, from == 0, &out, err);
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
