/* tokenizer_encode.c — the pipeline text → ids, as the Hugging Face
 * tokenizers library runs it:
 *
 *   text → split at added tokens (kept whole) → each stretch between them:
 *     normalizer (Lowercase, NFC, NFKC, Prepend, Replace) → pre-tokenizer
 *     (Split, ByteLevel, Metaspace) into pieces → the model on each piece
 *   → the post-processor's template around the ids
 *
 * Every step is bounded, because the file that defines it may come from
 * anywhere: three Replace steps of an empty pattern by 1,000 characters
 * would otherwise turn a word into gigabytes. A step may make at most
 * TOK_GROWTH × the bytes it is given + TOK_GROWTH_PLUS, and never more than
 * TOK_MAX_STEP_BYTES; the usual steps stay far below (Replace " " by "▁"
 * triples a text of spaces, ByteLevel doubles bytes, NFKC makes at most 11
 * of one: U+FDFA). A step that would make more is refused, naming the file
 * and the step, before the memory is taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include <wctype.h>

#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_impl.h"

/* One encode: the tokenizer, its matcher, where errors go. */
typedef struct {
    const attn_tokenizer *t;
    attn_tok_matcher m;
    attn_error *err;
    char *scratch; /* a step's working copy of one piece */
    size_t scratch_cap;
} run;

static attn_status nomem(attn_error *err) { return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); }

static char *scratch(run *r, size_t n)
{
    if (n > r->scratch_cap) {
        char *s = realloc(r->scratch, n);
        if (!s) return NULL;
        r->scratch = s;
        r->scratch_cap = n;
    }
    return r->scratch;
}

static attn_status too_big(const run *r, const char *kind, int step, const char *type, size_t in)
{
    return attn_tok_too_big(r->t, kind, step, type, in, r->err);
}

/* A step's error (its pattern's): the file and the step in front. */
static attn_status step_failed(const run *r, attn_status st, const char *kind, int step, const char *type)
{
    char where[96];
    if (st == ATTN_ERR_NOMEM || !r->err) return st;
    snprintf(where, sizeof where, "%s step %d (%s)", kind, step + 1, type);
    attn_error_prefix(r->err, where);
    attn_error_prefix(r->err, r->t->name);
    return st;
}

/* ---- pieces ---- */

/* The pieces a pre-tokenizer step makes, their bytes in one buffer: piece i
 * is buf[v[i].at .. v[i].at + v[i].n) and a '\0'; first: it starts where the
 * whole input starts (Metaspace's prepend_scheme "first"). */
typedef struct {
    uint32_t at, n;
    bool first;
} piece;

typedef struct {
    char *buf;
    size_t len, cap; /* bytes of buf used (the '\0's too), allocated */
    size_t bytes;    /* the pieces' bytes, what the step's limit counts */
    size_t most;     /* the step's limit */
    bool over;       /* a push went past it */
    piece *v;
    size_t n, vcap;
} pieces;

static const char *text_of(const pieces *p, size_t i) { return p->buf + p->v[i].at; }

static void clear(pieces *p, size_t most)
{
    p->len = p->bytes = p->n = 0;
    p->most = most;
    p->over = false;
}

static void pieces_free(pieces *p)
{
    free(p->buf);
    free(p->v);
}

/* Appends s[0..n). An empty piece is dropped, as Hugging Face's are. Past the
 * limit: p->over and an error the step's caller words. */
static attn_status push(pieces *p, const char *s, size_t n, bool first, attn_error *err)
{
    if (!n) return ATTN_OK;
    if (n > p->most - p->bytes) {
        p->over = true;
        return ATTN_ERR_FORMAT;
    }
    if (p->len + n + 1 > p->cap) {
        size_t cap = p->cap ? p->cap : 256;
        while (cap < p->len + n + 1) cap *= 2;
        char *b = realloc(p->buf, cap);
        if (!b) return nomem(err);
        p->buf = b;
        p->cap = cap;
    }
    if (p->n == p->vcap) {
        size_t cap = p->vcap ? 2 * p->vcap : 16;
        piece *v = realloc(p->v, cap * sizeof *v);
        if (!v) return nomem(err);
        p->v = v;
        p->vcap = cap;
    }
    memcpy(p->buf + p->len, s, n);
    p->buf[p->len + n] = '\0';
    p->v[p->n++] = (piece){(uint32_t)p->len, (uint32_t)n, first};
    p->len += n + 1;
    p->bytes += n;
    return ATTN_OK;
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

/* The normalizer's steps on *s (owned; replaced). */
static attn_status normalize(run *r, char **s)
{
    const attn_tokenizer *t = r->t;
    for (int i = 0; i < t->n_norm; i++) {
        const attn_tok_norm *nm = &t->norm[i];
        size_t in = strlen(*s), most = attn_tok_step_most(in), len;
        char *next = NULL;
        bool over = false;
        attn_status st = ATTN_OK;
        switch (nm->kind) {
        case TOK_NORM_LOWERCASE: next = lowercase(t, *s); break;
        case TOK_NORM_NFC: next = (char *)utf8proc_NFC((const utf8proc_uint8_t *)*s); break;
        case TOK_NORM_NFKC: next = (char *)utf8proc_NFKC((const utf8proc_uint8_t *)*s); break;
        case TOK_NORM_PREPEND: /* not on empty text */
            if (!(over = **s && strlen(nm->text) + in > most)) next = **s ? concat(nm->text, *s) : strdup(*s);
            break;
        case TOK_NORM_REPLACE: st = attn_tok_replace(&r->m, nm->re, *s, nm->text, most, &next, &len, &over, r->err); break;
        }
        if (st) return step_failed(r, st, "normalizer", i, nm->type);
        if (!over && !next) return nomem(r->err);
        if (over || strlen(next) > most) {
            free(next);
            return too_big(r, "normalizer", i, nm->type, in);
        }
        free(*s);
        *s = next;
    }
    return ATTN_OK;
}

/* ---- pre-tokenizer ---- */

/* What a split hands each of its pieces to: push, or ByteLevel's spelling. */
typedef attn_status (*emit_fn)(run *r, const attn_tok_pre *st, const char *s, size_t n, bool first, pieces *out);

static attn_status emit_copy(run *r, const attn_tok_pre *st, const char *s, size_t n, bool first, pieces *out)
{
    (void)st;
    return push(out, s, n, first, r->err);
}

/* Splits s[0..n) at the matches of re as behavior says (HF's Split and its
 * SplitDelimiterBehavior; invert swaps what is a match). The text is a row of
 * spans, matched or not; each joins the piece before it or starts a new one:
 *   Isolated            never joins: every span is a piece
 *   Removed             never joins, and matched spans are dropped
 *   Contiguous          a span joins the one before if both are matches, or both not
 *   MergedWithPrevious  a match joins the unmatched span before it
 *   MergedWithNext      an unmatched span joins the match before it
 * so a piece waits in [a, b) until the next span says whether it goes on. */
static attn_status split(run *r, const pcre2_code *re, attn_tok_behavior behavior, bool invert, const char *s, size_t n,
                         bool first, const attn_tok_pre *st, emit_fn emit, pieces *out)
{
    size_t a = 0, b = 0, prev = 0, at = 0; /* the piece waiting; where the last match ended; where to search */
    bool waiting = false, last = false;    /* a piece waits; the last span was matched */
    attn_status rc = ATTN_OK;
    while (!rc && prev < n) {
        size_t ma = n, mb = n;
        bool found = false;
        if (at < n && (rc = attn_tok_match(&r->m, re, s, n, at, &ma, &mb, &found, r->err))) break;
        if (found && mb == ma) { /* an empty match: look again one character on */
            at = attn_utf8_next(s, n, ma);
            continue;
        }
        if (!found) ma = mb = n;
        /* the span before the match, then the match */
        for (int k = 0; k < 2 && !rc; k++) {
            size_t x = k ? ma : prev, y = k ? mb : ma;
            bool matched = (k == 1) != invert;
            if (y <= x) continue;
            bool join = false;
            switch (behavior) {
            case TOK_ISOLATED: break;
            case TOK_REMOVED: if (matched) { last = matched; continue; } break;
            case TOK_CONTIGUOUS: join = matched == last; break;
            case TOK_MERGED_PREVIOUS: join = matched && !last; break;
            case TOK_MERGED_NEXT: join = !matched && last; break;
            }
            last = matched;
            if (join && waiting) {
                b = y;
                continue;
            }
            if (waiting) rc = emit(r, st, s + a, b - a, first && a == 0, out);
            a = x, b = y, waiting = true;
        }
        prev = at = mb;
    }
    if (!rc && waiting) rc = emit(r, st, s + a, b - a, first && a == 0, out);
    return rc;
}

/* GPT-2's byte-level spelling of s[0..n): every byte as the code point that stands for it. */
static attn_status emit_bytes(run *r, const attn_tok_pre *st, const char *s, size_t n, bool first, pieces *out)
{
    (void)st;
    char *buf = scratch(r, 2 * n + 1), *o = buf;
    if (!buf) return nomem(r->err);
    for (size_t k = 0; k < n; k++) o += attn_utf8_encode(attn_tok_byte_char((unsigned char)s[k]), o);
    return push(out, buf, (size_t)(o - buf), first, r->err);
}

static attn_status byte_level(run *r, const attn_tok_pre *st, const char *s, size_t n, bool first, pieces *out)
{
    char *spaced = NULL;
    if (st->prefix_space && s[0] != ' ') { /* n > 0: empty pieces are dropped */
        if (!(spaced = malloc(n + 2))) return nomem(r->err);
        spaced[0] = ' ';
        memcpy(spaced + 1, s, n + 1);
        s = spaced;
        n++;
    }
    attn_status rc = st->re ? split(r, st->re, TOK_ISOLATED, false, s, n, first, st, emit_bytes, out)
                            : emit_bytes(r, st, s, n, first, out);
    free(spaced);
    return rc;
}

/* Metaspace: spaces become the replacement, which is prepended as the scheme says. */
static attn_status metaspace(run *r, const attn_tok_pre *m, const char *s, size_t n, bool first, pieces *out)
{
    size_t rl = strlen(m->replacement), spaces = 0, k = 0;
    for (size_t i = 0; i < n; i++) spaces += s[i] == ' ';
    bool lead = (n < rl || memcmp(s, m->replacement, rl) != 0) && s[0] != ' ' &&
                (m->prepend == TOK_PREPEND_ALWAYS || (m->prepend == TOK_PREPEND_FIRST && first));
    size_t size = n + spaces * (rl - 1) + (lead ? rl : 0);
    if (size > out->most - out->bytes) { /* before the memory is taken */
        out->over = true;
        return ATTN_ERR_FORMAT;
    }
    char *buf = scratch(r, size + 1);
    if (!buf) return nomem(r->err);
    if (lead) {
        memcpy(buf, m->replacement, rl);
        k = rl;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') { memcpy(buf + k, m->replacement, rl); k += rl; }
        else buf[k++] = s[i];
    }
    buf[k] = '\0';
    /* split reads the scratch buffer while emit_copy pushes: nothing else writes to it meanwhile */
    return m->re ? split(r, m->re, TOK_MERGED_NEXT, false, buf, k, first, m, emit_copy, out)
                 : push(out, buf, k, first, r->err);
}

static attn_status pre_step(run *r, const attn_tok_pre *st, const pieces *in, pieces *out)
{
    attn_status rc = ATTN_OK;
    for (size_t i = 0; !rc && i < in->n; i++) {
        const char *s = text_of(in, i);
        size_t n = in->v[i].n;
        bool first = in->v[i].first;
        switch (st->kind) {
        case TOK_PRE_SPLIT: rc = split(r, st->re, st->behavior, st->invert, s, n, first, st, emit_copy, out); break;
        case TOK_PRE_BYTELEVEL: rc = byte_level(r, st, s, n, first, out); break;
        default: rc = metaspace(r, st, s, n, first, out); break;
        }
    }
    return rc;
}

/* ---- the stretches between added tokens ---- */

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

/* One stretch of text between added tokens: normalize, pre-tokenize, model.
 * at_start: the stretch begins the input. */
static attn_status segment(run *r, const char *s, size_t n, bool at_start, attn_tok_ids *out)
{
    const attn_tokenizer *t = r->t;
    char *text = clean(s, n);
    pieces a = {0}, b = {0};
    attn_status st = text ? normalize(r, &text) : nomem(r->err);
    clear(&a, TOK_MAX_STEP_BYTES);
    if (!st) st = push(&a, text, strlen(text), at_start, r->err);
    for (int k = 0; !st && k < t->n_pre; k++) {
        clear(&b, attn_tok_step_most(a.bytes));
        if ((st = pre_step(r, &t->pre[k], &a, &b))) {
            st = b.over ? too_big(r, "pre_tokenizer", k, t->pre[k].type, a.bytes)
                        : step_failed(r, st, "pre_tokenizer", k, t->pre[k].type);
            break;
        }
        pieces tmp = a;
        a = b;
        b = tmp;
    }
    for (size_t i = 0; i < a.n && !st; i++) st = attn_tok_model_word(t, text_of(&a, i), a.v[i].n, out, r->err);
    free(text);
    pieces_free(&a);
    pieces_free(&b);
    return st;
}

/* The longest added token that starts s[0..n), or NULL. The tokens are
 * sorted, so those that start with s[0..k) are a range [lo, hi): it narrows
 * a byte at a time, and over the bytes all of it shares at once. Looking
 * costs at most the longest token's length, however many there are. */
static const attn_tok_added *added_at(const attn_tokenizer *t, const char *s, size_t n)
{
    const attn_tok_added *v = t->added, *best = NULL;
    int lo = 0, hi = t->n_added;
    size_t k = 0;
    while (lo < hi) {
        if (v[lo].len == k) { /* a token that is s[0..k) exactly (the shortest sorts first; of two the same, the lower id) */
            if (!best || best->len < k) best = &v[lo];
            lo++;
            continue;
        }
        /* every token in range is longer than k, and they share their first and last's common prefix */
        size_t common = k;
        while (common < v[lo].len && common < v[hi - 1].len && v[lo].content[common] == v[hi - 1].content[common])
            common++;
        if (common > n || memcmp(s + k, v[lo].content + k, common - k)) return best;
        k = common;
        if (v[lo].len == k) continue;
        if (k == n) return best;
        /* they differ at byte k: keep those whose byte k is s[k] */
        unsigned char c = (unsigned char)s[k];
        int l = lo, h = hi;
        while (l < h) { /* the first one whose byte k is c or more */
            int mid = l + (h - l) / 2;
            if ((unsigned char)v[mid].content[k] < c) l = mid + 1;
            else h = mid;
        }
        lo = l;
        for (h = hi; l < h;) { /* the first one past c */
            int mid = l + (h - l) / 2;
            if ((unsigned char)v[mid].content[k] <= c) l = mid + 1;
            else h = mid;
        }
        hi = l;
        k++;
    }
    return best;
}

attn_status attn_tokenizer_encode(const attn_tokenizer *t, const char *text, bool add_special, int **ids, int *n,
                                  attn_error *err)
{
    attn_tok_ids out = {0};
    size_t len = strlen(text), from = 0;
    run r = {.t = t, .err = err};
    if (len > ATTN_TOKENIZER_MAX_TEXT)
        return attn_fail(err, ATTN_ERR_CONFIG, "a text of %zu bytes is more than the %d a tokenizer takes", len,
                         ATTN_TOKENIZER_MAX_TEXT);
    attn_status st = attn_tok_matcher_init(&r.m, err);
    for (int i = 0; add_special && !st && i < t->n_prefix; i++)
        if (attn_tok_ids_push(&out, t->prefix[i])) st = nomem(err);
    for (size_t i = 0; !st && i <= len;) {
        const attn_tok_added *a = i < len ? added_at(t, text + i, len - i) : NULL;
        if (i < len && !a) {
            i = attn_utf8_next(text, len, i);
            continue;
        }
        if (i > from) st = segment(&r, text + from, i - from, from == 0, &out);
        if (!a) break;
        if (!st && attn_tok_ids_push(&out, a->id)) st = nomem(err);
        i += a->len;
        from = i;
    }
    for (int i = 0; add_special && !st && i < t->n_suffix; i++)
        if (attn_tok_ids_push(&out, t->suffix[i])) st = nomem(err);
    attn_tok_matcher_free(&r.m);
    free(r.scratch);
    if (st == ATTN_ERR_NOMEM) /* under a tight ulimit -v: still say whose text it was */
        attn_fail(err, st, "%s: out of memory encoding a text of %zu bytes", t->name, len);
    if (st) {
        free(out.v);
        return st;
    }
    *ids = out.v ? out.v : malloc(sizeof(int));
    *n = out.n;
    return *ids ? ATTN_OK : nomem(err);
}
