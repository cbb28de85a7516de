/* tokenizer_decode.c — ids → text through the decoder's steps, and each
 * token's text as a heatmap label shows it.
 *
 * The decoder works on the list of token strings, each step turning it into
 * a new list (HF's decode_chain), and the result is their concatenation:
 *   ByteLevel     the GPT-2 alphabet back to bytes, read as UTF-8 (ill-formed → U+FFFD)
 *   ByteFallback  runs of "<0xXX>" tokens back to the bytes they stand for
 *   Replace       a string by another ("▁" → " ")
 *   Metaspace     the replacement → " ", the first token's leading one dropped
 *   Strip         n copies of a character off each token's start and end
 *   Fuse          everything into one string
 * With no decoder at all the tokens are joined with spaces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_impl.h"

/* ---- the decoder's list ---- */

typedef struct {
    char **v;
    int n;
} list;

static void list_free(list *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* s's bytes if every code point of s is in the byte alphabet; else -1. */
static long byte_spelling(const char *s, unsigned char *out)
{
    size_t n = strlen(s), k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += attn_utf8_decode(s + i, n - i, &cp);
        int b = attn_tok_char_byte(cp);
        if (b < 0) return -1;
        out[k++] = (unsigned char)b;
    }
    return (long)k;
}

/* bytes as UTF-8 text, each ill-formed part as U+FFFD (from_utf8_lossy). */
static char *lossy(const unsigned char *b, size_t n)
{
    char *out = malloc(n * 3 + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += attn_utf8_decode((const char *)b + i, n - i, &cp);
        o += attn_utf8_encode(cp, o);
    }
    *o = '\0';
    return out;
}

static char *join(const list *l, const char *sep)
{
    size_t len = 1, ns = strlen(sep);
    for (int i = 0; i < l->n; i++) len += strlen(l->v[i]) + ns;
    char *out = malloc(len), *o = out;
    if (!out) return NULL;
    for (int i = 0; i < l->n; i++) {
        size_t k = strlen(l->v[i]);
        if (i && ns) { memcpy(o, sep, ns); o += ns; }
        memcpy(o, l->v[i], k);
        o += k;
    }
    *o = '\0';
    return out;
}

/* s with every `from` replaced by `to`; NULL out of memory, or (*over) when
 * that is more than `most` bytes. */
static char *replace_str(const char *s, const char *from, const char *to, size_t most, bool *over)
{
    size_t nf = strlen(from), nt = strlen(to), count = 0;
    for (const char *p = s; (p = strstr(p, from)); p += nf) count++;
    size_t size = strlen(s) - count * nf + count * nt;
    if ((*over = size > most)) return NULL;
    char *out = malloc(size + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = s, *q; ; p = q + nf) {
        q = strstr(p, from);
        size_t k = q ? (size_t)(q - p) : strlen(p);
        memcpy(o, p, k);
        o += k;
        if (!q) break;
        memcpy(o, to, nt);
        o += nt;
    }
    *o = '\0';
    return out;
}

/* "<0xXX>" → XX, else -1. */
static int fallback_byte(const char *s)
{
    unsigned v;
    char end;
    return strlen(s) == 6 && sscanf(s, "<0x%2X%c", &v, &end) == 2 && end == '>' ? (int)v : -1;
}

/* ByteLevel: every token's bytes in GPT-2's alphabet (a token outside it as
 * it is), read as one UTF-8 text. */
static char *byte_level_text(const list *l)
{
    size_t cap = 1, k = 0;
    for (int i = 0; i < l->n; i++) cap += strlen(l->v[i]);
    unsigned char *bytes = malloc(cap);
    if (!bytes) return NULL;
    for (int i = 0; i < l->n; i++) {
        long m = byte_spelling(l->v[i], bytes + k);
        if (m < 0) { /* not byte-level: as it is */
            m = (long)strlen(l->v[i]);
            memcpy(bytes + k, l->v[i], (size_t)m);
        }
        k += (size_t)m;
    }
    char *s = lossy(bytes, k);
    free(bytes);
    return s;
}

/* ByteFallback: each run of "<0xXX>" tokens becomes its text, or one U+FFFD
 * per byte if it is not UTF-8; other tokens stay. */
static int byte_runs(const list *l, list *out)
{
    unsigned char *bytes = malloc((size_t)l->n + 1);
    if (!bytes) return -1;
    for (int i = 0, run = 0; i <= l->n; i++) {
        int b = i < l->n ? fallback_byte(l->v[i]) : -1;
        if (b >= 0) { bytes[run++] = (unsigned char)b; continue; }
        if (run) {
            bool ok = attn_utf8_valid((const char *)bytes, (size_t)run);
            char *s = ok ? lossy(bytes, (size_t)run) : malloc((size_t)run * 3 + 1);
            if (!s) goto fail;
            if (!ok) {
                for (int k = 0; k < run; k++) memcpy(s + 3 * k, "\xEF\xBF\xBD", 3);
                s[run * 3] = '\0';
            }
            out->v[out->n++] = s;
            run = 0;
        }
        if (i < l->n && !(out->v[out->n++] = strdup(l->v[i]))) goto fail;
    }
    free(bytes);
    return 0;
fail:
    free(bytes);
    return -1;
}

/* Replace, Metaspace or Strip on token i, in at most `most` bytes. */
static char *one_token(const attn_tok_dec *d, const char *p, int i, size_t most, bool *over)
{
    if (d->kind == TOK_DEC_REPLACE) return replace_str(p, d->from, d->to, most, over);
    if (d->kind == TOK_DEC_METASPACE) {
        char *s = replace_str(p, d->from, " ", most, over);
        if (s && i == 0 && d->prepend != TOK_PREPEND_NEVER && s[0] == ' ') memmove(s, s + 1, strlen(s));
        return s;
    }
    size_t len = strlen(p), a = 0, b = len; /* Strip */
    while (a < len && (int)a < d->start && p[a] == d->strip) a++;
    while (b > a && (int)(len - b) < d->stop && p[b - 1] == d->strip) b--;
    return strndup(p + a, b - a);
}

/* One step on the list: returns 0, or -1 out of memory or (*over) past
 * `most` bytes (the list is then freed). Only Replace can make more than it
 * is given; ByteLevel at most 3 bytes (U+FFFD) of each. */
static int step(const attn_tok_dec *d, list *l, size_t most, bool *over)
{
    list out = {calloc((size_t)l->n + 1, sizeof(char *)), 0};
    int rc = out.v ? 0 : -1;
    size_t made = 0;
    *over = false;
    if (!rc && (d->kind == TOK_DEC_BYTELEVEL || d->kind == TOK_DEC_FUSE)) { /* the whole list becomes one string */
        char *s = d->kind == TOK_DEC_FUSE ? join(l, "") : byte_level_text(l);
        if (!s) rc = -1;
        else out.v[out.n++] = s;
    } else if (!rc && d->kind == TOK_DEC_BYTEFALLBACK) {
        rc = byte_runs(l, &out);
    } else {
        for (int i = 0; !rc && i < l->n; i++)
            if (!(out.v[out.n] = one_token(d, l->v[i], i, most - made, over))) rc = -1;
            else made += strlen(out.v[out.n++]);
    }
    if (rc) list_free(&out);
    list_free(l);
    *l = out;
    return rc;
}

attn_status attn_tokenizer_decode(const attn_tokenizer *t, const int *ids, int n, bool skip_special, char **text,
                                  attn_error *err)
{
    list l = {calloc((size_t)n + 1, sizeof(char *)), 0};
    if (!l.v) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (!attn_tokenizer_token(t, ids[i])) continue; /* no token: tokenizers' id_to_token gives None, skipped */
        if (skip_special && t->special[ids[i]]) continue;
        if (!(l.v[l.n] = strdup(t->vocab[ids[i]]))) {
            list_free(&l);
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        }
        l.n++;
    }
    static const char *const TYPE[] = {[TOK_DEC_BYTELEVEL] = "ByteLevel", [TOK_DEC_REPLACE] = "Replace",
                                       [TOK_DEC_BYTEFALLBACK] = "ByteFallback", [TOK_DEC_FUSE] = "Fuse",
                                       [TOK_DEC_STRIP] = "Strip", [TOK_DEC_METASPACE] = "Metaspace"};
    for (int i = 0; i < t->n_dec; i++) {
        bool over;
        size_t in = 0;
        for (int k = 0; k < l.n; k++) in += strlen(l.v[k]);
        if (step(&t->dec[i], &l, attn_tok_step_most(in), &over))
            return over ? attn_tok_too_big(t, "decoder", i, TYPE[t->dec[i].kind], in, err)
                        : attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    *text = join(&l, t->n_dec ? "" : " ");
    list_free(&l);
    return *text ? ATTN_OK : attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
}

/* ---- labels ---- */

/* Appends the label of bytes b[0..n): valid UTF-8 as text with a space as
 * '␣', a newline '↵', a tab '⇥', other control bytes and every byte of an
 * ill-formed or partial sequence as <0xXX>. */
static size_t label_bytes(const unsigned char *b, size_t n, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = attn_utf8_decode((const char *)b + i, n - i, &cp);
        bool bad = cp == ATTN_UTF8_REPLACEMENT && !(k == 3 && !memcmp(b + i, "\xEF\xBF\xBD", 3));
        char piece[32];
        size_t m;
        if (bad) {
            for (size_t j = 0; j < k && j < 4; j++) snprintf(piece + 6 * j, sizeof piece - 6 * j, "<0x%02X>", b[i + j]);
            m = strlen(piece);
        } else if (cp == ' ') m = (size_t)snprintf(piece, sizeof piece, "␣");
        else if (cp == '\n') m = (size_t)snprintf(piece, sizeof piece, "↵");
        else if (cp == '\t') m = (size_t)snprintf(piece, sizeof piece, "⇥");
        else if (cp < 0x20 || cp == 0x7F) m = (size_t)snprintf(piece, sizeof piece, "<0x%02X>", (unsigned)cp);
        else m = attn_utf8_encode(cp, piece);
        if (o + m + 1 > size) break;
        memcpy(out + o, piece, m);
        o += m;
        i += k;
    }
    out[o] = '\0';
    return o;
}

const char *attn_tokenizer_label(const attn_tokenizer *t, int id, char *out, size_t size)
{
    const char *s = attn_tokenizer_token(t, id);
    if (!s || !size) return "";
    size_t n = strlen(s);
    unsigned char *bytes = malloc(n + 1);
    if (!bytes) return s;
    long k = t->byte_level && !t->special[id] ? byte_spelling(s, bytes) : -1;
    if (k < 0) { /* SentencePiece: "▁" is a space; a fallback byte shows as itself */
        bool over;
        char *spaced = t->special[id] || fallback_byte(s) >= 0 ? strdup(s) : replace_str(s, "\xE2\x96\x81", " ", n, &over);
        if (!spaced) {
            free(bytes);
            return s;
        }
        if (fallback_byte(s) >= 0 || t->special[id]) snprintf(out, size, "%s", spaced);
        else label_bytes((const unsigned char *)spaced, strlen(spaced), out, size);
        free(spaced);
    } else {
        label_bytes(bytes, (size_t)k, out, size);
    }
    free(bytes);
    return out;
}
