/* tokenizer_model.c — the vocabulary table, WordLevel and BPE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_impl.h"

/* ---- string → int ---- */

/* FNV-1a, then its high bits folded into the low ones that pick a slot (a
 * product's low bits depend only on its factors' low bits). */
static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ^ (h >> 29) ^ (h >> 47);
}

static int grow(attn_tok_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    char **key = calloc(cap, sizeof *key);
    uint64_t *hash = malloc(cap * sizeof *hash);
    int *val = malloc(cap * sizeof *val);
    if (!key || !hash || !val) {
        free(key);
        free(hash);
        free(val);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i]) continue;
        size_t j = m->hash[i] & (cap - 1);
        while (key[j]) j = (j + 1) & (cap - 1);
        key[j] = m->key[i];
        hash[j] = m->hash[i];
        val[j] = m->val[i];
    }
    free(m->key);
    free(m->hash);
    free(m->val);
    m->key = key;
    m->hash = hash;
    m->val = val;
    m->cap = cap;
    return 0;
}

int attn_tok_map_put(attn_tok_map *m, const char *key, int val)
{
    if ((m->n + 1) * 2 > m->cap && grow(m)) return -1;
    uint64_t h = fnv(key);
    size_t j = h & (m->cap - 1);
    while (m->key[j]) {
        if (m->hash[j] == h && !strcmp(m->key[j], key)) return 0;
        j = (j + 1) & (m->cap - 1);
    }
    if (!(m->key[j] = strdup(key))) return -1;
    m->hash[j] = h;
    m->val[j] = val;
    m->n++;
    return 0;
}

int attn_tok_map_get(const attn_tok_map *m, const char *key)
{
    if (!m->cap) return -1;
    uint64_t h = fnv(key);
    for (size_t j = h & (m->cap - 1); m->key[j]; j = (j + 1) & (m->cap - 1))
        if (m->hash[j] == h && !strcmp(m->key[j], key)) return m->val[j];
    return -1;
}

void attn_tok_map_free(attn_tok_map *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->key[i]);
    free(m->key);
    free(m->hash);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int attn_tok_ids_push(attn_tok_ids *a, int id)
{
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        int *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = id;
    return 0;
}

/* ---- the models ---- */

/* A BPE symbol: a run of the word's bytes, the token it is, and its
 * neighbours in the word (−1 at the ends); len 0 once merged away. */
typedef struct {
    size_t start, len;
    int id, prev, next;
} sym;

/* The rank of merging tokens a and b (−1: no such merge, or no token for
 * the pair; *merged receives the pair's token). Merges work on tokens, as
 * Hugging Face's do on ids. */
static int rank_of(const attn_tokenizer *t, int a, int b, int *merged)
{
    const char *la = t->vocab[a], *lb = t->vocab[b];
    size_t na = strlen(la), nb = strlen(lb);
    char stack[256], *buf = na + nb + 2 <= sizeof stack ? stack : malloc(na + nb + 2);
    if (!buf) return -1;
    memcpy(buf, la, na);
    buf[na] = '\x1f';
    memcpy(buf + na + 1, lb, nb + 1);
    int rank = attn_tok_map_get(&t->merges, buf);
    if (rank >= 0) { /* the merged token must exist: keys "a\x1fb" of tokens holding \x1f could collide */
        memcpy(buf + na, lb, nb + 1);
        *merged = attn_tok_map_get(&t->ids, buf);
        if (*merged < 0) rank = -1;
    }
    if (buf != stack) free(buf);
    return rank;
}

/* A candidate merge: symbols left and left's next, as they were when queued. */
typedef struct {
    int rank, left;
    size_t left_len, right_len;
} cand;

/* A binary min-heap of candidates by (rank, position): the lowest rank, the leftmost on ties. */
typedef struct {
    cand *v;
    int n, cap;
} heap;

static bool before(const cand *a, const cand *b) { return a->rank != b->rank ? a->rank < b->rank : a->left < b->left; }

static int heap_push(heap *h, cand c)
{
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 64;
        cand *v = realloc(h->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        h->v = v;
        h->cap = cap;
    }
    int i = h->n++;
    for (; i > 0 && before(&c, &h->v[(i - 1) / 2]); i = (i - 1) / 2) h->v[i] = h->v[(i - 1) / 2];
    h->v[i] = c;
    return 0;
}

static cand heap_pop(heap *h)
{
    cand top = h->v[0], last = h->v[--h->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c])) c++;
        if (!before(&h->v[c], &last)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = last;
    return top;
}

/* Queues the merge of symbol i with its next, if there is one. */
static int queue(const attn_tokenizer *t, const sym *w, int i, heap *h)
{
    int merged, j = i >= 0 ? w[i].next : -1;
    if (i < 0 || j < 0) return 0;
    int r = rank_of(t, w[i].id, w[j].id, &merged);
    return r < 0 ? 0 : heap_push(h, (cand){r, i, w[i].len, w[j].len});
}

/* The word's first symbols: its characters; an unknown one as its bytes'
 * "<0xXX>" tokens (byte_fallback) or unk (several in a row fused if
 * fuse_unk), dropped when there is neither. Returns how many. */
static int characters(const attn_tokenizer *t, const char *s, size_t n, sym *w)
{
    char key[8];
    int k = 0;
    for (size_t i = 0; i < n;) {
        size_t next = attn_utf8_next(s, n, i);
        int id = -1;
        if (next - i < sizeof key) {
            memcpy(key, s + i, next - i);
            key[next - i] = '\0';
            id = attn_tok_map_get(&t->ids, key);
        }
        if (id < 0 && t->byte_fallback) {
            bool all = true;
            for (size_t b = i; b < next; b++) all &= t->byte_id[(unsigned char)s[b]] >= 0;
            if (all) {
                for (size_t b = i; b < next; b++) w[k++] = (sym){b, 1, t->byte_id[(unsigned char)s[b]], 0, 0};
                i = next;
                continue;
            }
        }
        if (id < 0) id = t->unk;
        if (id >= 0 && !(id == t->unk && t->fuse_unk && k && w[k - 1].id == t->unk))
            w[k++] = (sym){i, next - i, id, 0, 0};
        else if (id >= 0)
            w[k - 1].len = next - w[k - 1].start;
        i = next;
    }
    for (int i = 0; i < k; i++) {
        w[i].prev = i - 1;
        w[i].next = i + 1 < k ? i + 1 : -1;
    }
    return k;
}

/* BPE as Hugging Face's does it: the word's characters, then the adjacent
 * pair of lowest merge rank, leftmost on ties, merged until no pair has a
 * merge. A heap of candidates makes a word of n characters cost n log n. */
static attn_status bpe(const attn_tokenizer *t, const char *s, size_t n, attn_tok_ids *out, attn_error *err)
{
    if (t->ignore_merges && n < 512) { /* a piece that is a whole token stays one */
        char key[512];
        memcpy(key, s, n);
        key[n] = '\0';
        int whole = attn_tok_map_get(&t->ids, key);
        if (whole >= 0) return attn_tok_ids_push(out, whole) ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory") : ATTN_OK;
    }
    sym *w = malloc((n + 1) * sizeof *w);
    heap h = {0};
    attn_status st = ATTN_OK;
    if (!w) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    int k = characters(t, s, n, w);
    for (int i = 0; i + 1 < k; i++)
        if (queue(t, w, i, &h)) goto nomem;
    while (h.n) {
        cand c = heap_pop(&h);
        int i = c.left, j = w[i].len ? w[i].next : -1, merged;
        /* stale: either symbol has changed since the candidate was queued */
        if (j < 0 || w[i].len != c.left_len || w[j].len != c.right_len) continue;
        if (rank_of(t, w[i].id, w[j].id, &merged) != c.rank) continue;
        w[i].len += w[j].len;
        w[i].id = merged;
        w[i].next = w[j].next;
        if (w[j].next >= 0) w[w[j].next].prev = i;
        w[j].len = 0;
        if (queue(t, w, w[i].prev, &h) || queue(t, w, i, &h)) goto nomem;
    }
    for (int i = k ? 0 : -1; i >= 0 && !st; i = w[i].next)
        if (attn_tok_ids_push(out, w[i].id)) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    free(w);
    free(h.v);
    return st;
nomem:
    free(w);
    free(h.v);
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
}

attn_status attn_tok_model_word(const attn_tokenizer *t, const char *s, size_t n, attn_tok_ids *out, attn_error *err)
{
    if (t->model == TOK_BPE) return bpe(t, s, n, out, err);
    char *word = strndup(s, n);
    if (!word) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    int id = attn_tok_map_get(&t->ids, word);
    attn_status st = ATTN_OK;
    if (id < 0 && t->unk < 0)
        st = attn_fail(err, ATTN_ERR_CONFIG, "'%.40s' is not in the vocabulary, which has no unknown token", word);
    else if (attn_tok_ids_push(out, id < 0 ? t->unk : id))
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    free(word);
    return st;
}
